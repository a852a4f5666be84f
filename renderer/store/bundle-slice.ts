import type { StateCreator } from 'zustand';

import { monitorTimelineId, type CallOptions, type ChannelRequest, type HeldBundleView, type HeldSanitizeReport } from '../../core/api/channels';
import type { BundleExportResult, BundlePreview } from '../../core/bundle/bundle-export';
import type { Profile } from '../../core/kernel-profile/profile';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import type { Timeline } from '../../core/memory/timeline';
import { decodeTimeline } from '../../core/memory/timeline-wire';
import { planMatchesOutcome } from '../../core/plan/recorded-plan';
import { basenameOf } from '../../core/workspace/paths';
import { dropBundle } from './bundle-drop';
import { mainKernel } from './bundle-main-kernel';
import { bundleSources, showBundle } from './bundle-show';
import type { ProfileEntry } from './devices-slice';
import { heldOutcomeId, NOT_HELD } from './run-slice';
import type { WorkbenchState } from './store';

/**
 * A diagnostic bundle someone sent, opened read-only: its sources as read-only documents carrying the bundle's
 * own compile (markers, kernel facts, PTX), its plan in their launch panel checked against the bundle's device,
 * its outcome and diagnosis in the Run tab, its sanitizer report in the Sanitizer tab (marked on its sources),
 * its memory timeline, devices and doctor in the Bundle view. Nothing in it runs, is compiled or is written by
 * being opened; running its plan again is an explicit action that goes through the same checks as any plan.
 * One bundle at a time: opening another, or closing it, takes every view of the last one away.
 */
export interface OpenedBundle {
  view: HeldBundleView;
  /** The file's name, for the banner. */
  name: string;
  /** Its sources' documents, by the name the plan gives them. */
  documents: Record<string, string>;
  /** The run's memory timeline(s), decoded (for the Memory tab). */
  timelines: Timeline[];
  /** The bundle's profile of the run's device, as the launch panel takes one. */
  profile: ProfileEntry | null;
  /** What the bundle's result, report and timeline took the place of: shown again when it closes. */
  before: ShownBefore;
}

/** The result, sanitizer report, memory file and kernel profile on screen before a bundle's took their place. */
export type ShownBefore = Pick<
  WorkbenchState,
  | 'outcome'
  | 'outcomeOrigin'
  | 'sanitizeReport'
  | 'sanitizeOrigin'
  | 'sanitizeFiles'
  | 'memoryFile'
  | 'memorySource'
  | 'kernelProfile'
  | 'kernelProfilePrevious'
>;

export interface BundleSlice {
  bundle: OpenedBundle | null;
  /** A bundle being read: its path. */
  bundleOpening: string | null;
  /** Goes up when a bundle opens: the views bring it forward. */
  bundleSeq: number;
  /** A document whose Run should start once its compile has come (Run this plan again): its id. */
  pendingRun: string | null;
  /** The bundle dialog on screen. */
  bundleDialog: 'open' | 'export' | null;
  showBundleDialog(dialog: 'open' | 'export' | null): void;
  /** Reads a bundle; null when it is shown, else what went wrong (the views keep what they had). */
  openBundle(path: string): Promise<string | null>;
  closeBundle(): void;
  /**
   * Run this plan again: the bundle's plan in a new, editable document (its kernel's source), checked like any
   * plan against this machine's device, then run if the checks allow; the bundle stays open beside it.
   */
  runBundlePlanAgain(): string | null;
  clearPendingRun(): void;
  /** Exactly what Export bundle… would write with these choices (nothing is written). Rejects with the host's words. */
  previewBundle(choices: BundleChoices, options: CallOptions<'bundle.preview'>): Promise<BundlePreview>;
  /** Writes the bundle of the run on screen to `path` (a full path), streaming its phases. Rejects with the host's words. */
  exportBundle(choices: BundleChoices, path: string, options: CallOptions<'bundle.export'>): Promise<BundleExportResult>;
}

/** What the person chose to put in the bundle (Export bundle…'s boxes). */
export interface BundleChoices {
  includeSources: boolean;
  redact: boolean;
  /** The sanitizer report on screen. */
  sanitizer: boolean;
  /** The kernel profile made with this run (profileWithRun). */
  profile: boolean;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The source context of an opened bundle: in bundle-show.ts, exported here as before. */
export { bundleSources };

/** One bundle at a time: opened (bundle-show.ts) in the place of the last one, dropped (bundle-drop.ts), its plan run again as a copy. */
export const createBundleSlice: StateCreator<WorkbenchState, [], [], BundleSlice> = (set, get) => ({
  bundle: null,
  bundleOpening: null,
  bundleSeq: 0,
  pendingRun: null,
  bundleDialog: null,
  showBundleDialog: (bundleDialog) => set({ bundleDialog }),

  openBundle: async (path) => {
    set({ bundleOpening: path });
    let view: HeldBundleView;
    let timelines: Timeline[];
    try {
      view = await get().api.invoke('bundle.open', { path });
      timelines = view.timelines.map((w) => decodeTimeline(w));
    } catch (error) {
      return message(error);
    } finally {
      set({ bundleOpening: null });
    }
    dropBundle(set, get);
    showBundle(set, get, view, timelines);
    return null;
  },

  closeBundle: () => dropBundle(set, get),

  runBundlePlanAgain: () => {
    const open = get().bundle;
    const plan = open?.view.plan;
    if (!open || !plan) return 'This bundle holds no plan to run.';
    const fromFiles = plan.buffers.filter((b) => b.init?.kind === 'file');
    if (fromFiles.length)
      return `This plan fills ${fromFiles.map((b) => b.name).join(', ')} from files on the machine that recorded it; a bundle does not carry them. Save the plan beside those files and load it (Load plan) to run it here.`;
    const kernel = mainKernel(open.view)!;
    if (!kernel.source) return 'The kernels’ sources were left out of this bundle: there is nothing to compile and run.';
    get().newDocument(basenameOf(kernel.sourceName), kernel.source);
    const docId = get().activeId;
    if (!docId) return 'The plan could not be opened in a new file.';
    get().attachPlan(docId, { label: `from ${open.name} (a copy, editable)`, plan, planPath: null, sourcePaths: [] });
    set({ pendingRun: docId });
    return null;
  },

  clearPendingRun: () => set({ pendingRun: null }),

  previewBundle: (choices, options) => get().api.invoke('bundle.preview', bundleRequest(get(), choices), options),
  exportBundle: (choices, path, options) => get().api.invoke('bundle.export', { ...bundleRequest(get(), choices), path }, options),
});

/** The kernel profile on screen when it was made with the run on screen (it goes with that run, and with no other), with the id the host holds it under. */
function runProfile(s: WorkbenchState): { profile: Profile; profileId: string } | null {
  const shown = s.kernelProfile;
  return shown?.origin.kind === 'run' && shown.origin.outcome === s.outcome ? { profile: shown.profile, profileId: shown.origin.profileId } : null;
}

export const profileWithRun = (s: WorkbenchState): Profile | null => runProfile(s)?.profile ?? null;

/** The id the host holds the sanitizer report on screen under (a bundle's own has none: it is in that bundle already). */
export const heldReportId = (report: SanitizeReport | null): string | null => (report as Partial<HeldSanitizeReport> | null)?.reportId ?? null;

/** What bundle.preview and bundle.export are asked for the run on screen: its outcome, and what was seen with it, by the ids the host holds them under. */
function bundleRequest(s: WorkbenchState, choices: BundleChoices): ChannelRequest<'bundle.preview'> {
  const outcomeId = heldOutcomeId(s.outcome);
  if (!outcomeId) throw new Error(NOT_HELD('export the bundle'));
  const source = exportSource(s);
  return {
    plan: source.ok ? source.plan : null,
    outcomeId,
    origin: source.ok ? source.origin : '',
    sanitizerId: choices.sanitizer ? heldReportId(s.sanitizeReport) : null,
    // The run took no samples of its own: the monitoring session's, where they cover it (as the Memory tab draws it).
    samplesId: !s.outcome?.samples && s.monitor.id ? monitorTimelineId(s.monitor.id) : null,
    profileId: choices.profile ? (runProfile(s)?.profileId ?? null) : null,
    includeSources: choices.includeSources,
    redact: choices.redact,
    recordedHere: source.ok && source.recordedHere,
  };
}

/**
 * What Export bundle… would bundle: the outcome on screen, the plan that produced it (null when a recorded result's
 * plan is not at hand: the bundle then holds what there is and says what it lacks), where that plan came from, and
 * whether the run was made on this machine (whose doctor the bundle's is).
 */
export type ExportSource = { ok: true; plan: unknown; origin: string; recordedHere: boolean } | { ok: false; why: string };

export function exportSource(s: WorkbenchState): ExportSource {
  const outcome = s.outcome;
  const origin = s.outcomeOrigin;
  if (!outcome || !origin) return { ok: false, why: 'There is no run to bundle: run a kernel, or open a result or a bundle, first.' };
  if (origin.bundle)
    return {
      ok: false,
      why: `This run is from the bundle ${basenameOf(origin.bundle)}, which is already the one file to send: send it as it is. Exporting it again would put this machine's doctor and devices beside another machine's run.`,
    };
  if (!origin.file) {
    if (origin.plan === undefined) return { ok: false, why: 'The plan of this run is no longer at hand: run it again, then export.' };
    return { ok: true, plan: origin.plan, origin: origin.planPath ?? 'a plan built in the workbench', recordedHere: true };
  }
  // A recorded result keeps no copy of its plan: an open plan that runs its steps is its plan, else its own sample's.
  for (const doc of s.documents) {
    const attached = s.runs[doc.id]?.plan;
    if (attached && planMatchesOutcome(attached.plan, outcome))
      return { ok: true, plan: attached.plan, origin: attached.planPath ?? attached.label, recordedHere: false };
  }
  if (origin.ownPlan) return { ok: true, plan: origin.ownPlan.plan, origin: origin.ownPlan.origin, recordedHere: false };
  return { ok: true, plan: null, origin: `the result file ${basenameOf(origin.file)} (its plan is not at hand)`, recordedHere: false };
}
