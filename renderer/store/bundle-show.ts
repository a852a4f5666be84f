import type { StateCreator } from 'zustand';

import { compileResultFromBundle } from '../../core/bundle/bundle-compile';
import type { HeldBundleView } from '../../core/api/channels';
import type { BundleView } from '../../core/bundle/bundle-view';
import type { Timeline } from '../../core/memory/timeline';
import { basenameOf } from '../../core/workspace/paths';
import type { SourceContext } from '../../core/workspace/source-link';
import { mainKernel } from './bundle-main-kernel';
import type { BundleSlice, ShownBefore } from './bundle-slice';
import type { ProfileEntry } from './devices-slice';
import type { WorkbenchState } from './store';

/** The source context of an opened bundle: its own documents only, no path on this machine. */
export const bundleSources = (documents: Record<string, string>): SourceContext => ({ documents, paths: [], folders: [], onlyDocuments: true });

/** The bundle's profile of the run's device, as a launch panel entry. */
function bundleProfile(view: BundleView, name: string): ProfileEntry | null {
  const device = view.outcome?.result?.device.name;
  const profile = view.devices.find((p) => !device || p.device.name === device) ?? null;
  return profile ? { id: `bundle:${name}`, label: `${profile.device.name} (from the bundle)`, source: 'user', profile } : null;
}

/** The result, sanitizer report, memory file and kernel profile on screen now: what a bundle's views take the place of. */
function shownNow(s: WorkbenchState): ShownBefore {
  const { outcome, outcomeOrigin, sanitizeReport, sanitizeOrigin, sanitizeFiles, memoryFile, memorySource, kernelProfile, kernelProfilePrevious } = s;
  return { outcome, outcomeOrigin, sanitizeReport, sanitizeOrigin, sanitizeFiles, memoryFile, memorySource, kernelProfile, kernelProfilePrevious };
}

/** The bundle's sources as read-only documents with its own compile: their ids by the name the plan gives them, and by file name. */
function openBundleDocuments(get: () => WorkbenchState, view: BundleView): Record<string, string> {
  const documents: Record<string, string> = {};
  for (const source of view.sources) {
    const kernel = view.kernels.find((k) => source.kernels.includes(k.compile.kernel));
    const compile = kernel ? compileResultFromBundle(kernel.compile, source.text, kernel.ptx) : null;
    documents[source.sourceName] = get().openReadOnly(basenameOf(source.sourceName), source.text, view.path, compile);
    documents[basenameOf(source.sourceName)] = documents[source.sourceName]!;
  }
  return documents;
}

/** What the bundle's outcome, sanitizer report and memory timeline put in the Run, Sanitizer and Memory tabs. */
function bundleViews(view: HeldBundleView, sources: SourceContext, timelines: Timeline[]): Partial<WorkbenchState> {
  const plan = view.plan;
  return {
    ...(view.outcome
      ? {
          outcome: view.outcome,
          outcomeOrigin: { file: view.path, planPath: null, sources, ...(plan ? { plan } : {}), bundle: view.path },
          runRefused: null,
          pages: {},
          runError: null,
        }
      : {}),
    // The report is there (and marked on the sources) without taking the Run tab's place in front.
    ...(view.sanitizer
      ? { sanitizeReport: view.sanitizer, sanitizeOrigin: { kind: 'bundle' as const, path: view.path, sources }, sanitizeError: null, sanitizeFiles: {} }
      : {}),
    // The Memory tab: the bundle's own timeline, built on the host from its event log and its samples — never
    // this machine's monitor. Marked as seen, so the tab does not swap it for the run source.
    ...(timelines.length
      ? {
          memoryFile: {
            path: view.path,
            kind: 'run' as const,
            timelines,
            timelineIds: view.timelineIds,
            summaries: view.timelineSummary,
            notes: view.notes,
            index: 0,
          },
          memoryCompare: null,
          memorySource: 'file' as const,
          memorySelection: null,
          memoryAliveAt: null,
          memoryRunSeen: view.outcome,
        }
      : {}),
  };
}

/**
 * A bundle just read, shown (the last one already dropped): its sources opened read-only with its plan in their
 * launch panels, the diagnosed kernel's file in front, and its outcome, report, timeline and profile in their tabs.
 */
export function showBundle(
  set: Parameters<StateCreator<WorkbenchState, [], [], BundleSlice>>[0],
  get: () => WorkbenchState,
  view: HeldBundleView,
  timelines: Timeline[],
): void {
  const before = shownNow(get());
  const name = basenameOf(view.path);
  const documents = openBundleDocuments(get, view);
  const sources = bundleSources(documents);
  // The plan in every source's launch panel (each shows the launch of its own kernel); the diagnosed kernel's file in front.
  const plan = view.plan;
  if (plan) for (const id of new Set(Object.values(documents))) get().attachPlan(id, { label: `from ${name}`, plan, planPath: null, sourcePaths: [] });
  const main = mainKernel(view);
  const front = main ? (documents[main.sourceName] ?? documents[basenameOf(main.sourceName)]) : undefined;
  if (front) get().activate(front);
  set((s) => ({
    bundle: { view, name, documents, timelines, profile: bundleProfile(view, name), before },
    bundleSeq: s.bundleSeq + 1,
    ...bundleViews(view, sources, timelines),
  }));
  // Its kernel profile in the Profile tab, marked on the bundle's own files only.
  if (view.profile) get().showKernelProfile({ profile: view.profile, origin: { kind: 'bundle', path: view.path, sources } });
}
