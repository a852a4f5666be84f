import type { StateCreator } from 'zustand';

import type { BundleSlice, OpenedBundle } from './bundle-slice';
import type { WorkbenchState } from './store';

/**
 * What closing the bundle changes in the views it took: each view still showing the bundle's (its outcome, its
 * sanitizer report, its memory file or snapshot, its kernel profile, its diagnosis) gets back what it showed before.
 */
function viewsBack(s: WorkbenchState, open: OpenedBundle): Partial<WorkbenchState> {
  const snapshots = new Set(open.view.diagnosis?.evidence.runs.map((r) => r.oomPicture?.snapshotPath).filter((p): p is string => !!p));
  const before = open.before;
  return {
    ...(s.outcomeOrigin?.bundle === open.view.path ? { outcome: before.outcome, outcomeOrigin: before.outcomeOrigin, pages: {} } : {}),
    ...(s.sanitizeOrigin?.kind === 'bundle'
      ? { sanitizeReport: before.sanitizeReport, sanitizeOrigin: before.sanitizeOrigin, sanitizeError: null, sanitizeFiles: before.sanitizeFiles }
      : {}),
    ...(s.memoryFile?.path === open.view.path || (s.memoryFile && snapshots.has(s.memoryFile.path))
      ? { memoryFile: before.memoryFile, memoryCompare: null, memorySource: before.memorySource, memorySelection: null, memoryAliveAt: null }
      : {}),
    ...(s.kernelProfile?.origin.kind === 'bundle' && s.kernelProfile.origin.path === open.view.path
      ? { kernelProfile: before.kernelProfile, kernelProfilePrevious: before.kernelProfilePrevious, kernelProfileComparing: false }
      : {}),
    ...(s.diagnoseOrigin?.kind === 'bundle' && s.diagnoseOrigin.path === open.view.path
      ? { diagnoseReport: null, diagnoseOrigin: null, diagnoseStatus: `Closed the bundle ${open.name}: its diagnosis is no longer shown.` }
      : {}),
  };
}

/** Takes every view of the open bundle away: its documents, its outcome, its sanitizer report, its diagnosis and its snapshot. */
export function dropBundle(set: Parameters<StateCreator<WorkbenchState, [], [], BundleSlice>>[0], get: () => WorkbenchState): void {
  const open = get().bundle;
  if (!open) return;
  for (const id of Object.values(open.documents)) void get().close(id);
  // What the bundle's views took the place of comes back (a result opened before it, its report, its memory file).
  set((s) => ({ bundle: null, ...viewsBack(s, open) }));
}
