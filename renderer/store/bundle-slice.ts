import type { StateCreator } from 'zustand';

import { compileResultFromBundle } from '../../core/bundle/bundle-compile';
import type { BundleView } from '../../core/bundle/bundle-view';
import type { Timeline } from '../../core/memory/timeline';
import { decodeTimeline } from '../../core/memory/timeline-wire';
import { planLaunches } from '../../core/plan/plan-launch';
import { planMatchesOutcome } from '../../core/plan/recorded-plan';
import type { LaunchPlan } from '../../core/plan/plan-schema';
import { basenameOf } from '../../core/workspace/paths';
import type { SourceContext } from '../../core/workspace/source-link';
import type { ProfileEntry } from './devices-slice';
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
  view: BundleView;
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
type ShownBefore = Pick<
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
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The source context of an opened bundle: its own documents only, no path on this machine. */
export const bundleSources = (documents: Record<string, string>): SourceContext => ({ documents, paths: [], folders: [], onlyDocuments: true });

/** The bundle's profile of the run's device, as a launch panel entry. */
function bundleProfile(view: BundleView, name: string): ProfileEntry | null {
  const device = view.outcome?.result?.device.name;
  const profile = view.devices.find((p) => !device || p.device.name === device) ?? null;
  return profile ? { id: `bundle:${name}`, label: `${profile.device.name} (from the bundle)`, source: 'user', profile } : null;
}

export const createBundleSlice: StateCreator<WorkbenchState, [], [], BundleSlice> = (set, get) => {
  /** Takes every view of the open bundle away: its documents, its outcome, its sanitizer report, its diagnosis and its snapshot. */
  const dropBundle = () => {
    const open = get().bundle;
    if (!open) return;
    for (const id of Object.values(open.documents)) void get().close(id);
    const snapshots = new Set(open.view.diagnosis?.evidence.runs.map((r) => r.oomPicture?.snapshotPath).filter((p): p is string => !!p));
    // What the bundle's views took the place of comes back (a result opened before it, its report, its memory file).
    const before = open.before;
    set((s) => ({
      bundle: null,
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
    }));
  };

  return {
    bundle: null,
    bundleOpening: null,
    bundleSeq: 0,
    pendingRun: null,
    bundleDialog: null,
    showBundleDialog: (bundleDialog) => set({ bundleDialog }),

    openBundle: async (path) => {
      set({ bundleOpening: path });
      let view: BundleView;
      let timelines: Timeline[];
      try {
        view = await get().api.invoke('bundle.open', { path });
        timelines = view.timelines.map((w) => decodeTimeline(w));
      } catch (error) {
        return message(error);
      } finally {
        set({ bundleOpening: null });
      }
      dropBundle();
      const { outcome, outcomeOrigin, sanitizeReport, sanitizeOrigin, sanitizeFiles, memoryFile, memorySource, kernelProfile, kernelProfilePrevious } = get();
      const before: ShownBefore = {
        outcome,
        outcomeOrigin,
        sanitizeReport,
        sanitizeOrigin,
        sanitizeFiles,
        memoryFile,
        memorySource,
        kernelProfile,
        kernelProfilePrevious,
      };
      const name = basenameOf(view.path);
      const documents: Record<string, string> = {};
      for (const source of view.sources) {
        const kernel = view.kernels.find((k) => source.kernels.includes(k.compile.kernel));
        const compile = kernel ? compileResultFromBundle(kernel.compile, source.text, kernel.ptx) : null;
        documents[source.sourceName] = get().openReadOnly(basenameOf(source.sourceName), source.text, view.path, compile);
        documents[basenameOf(source.sourceName)] = documents[source.sourceName]!;
      }
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
              memoryFile: { path: view.path, kind: 'run' as const, timelines, summaries: view.timelineSummary, notes: view.notes, index: 0 },
              memoryCompare: null,
              memorySource: 'file' as const,
              memorySelection: null,
              memoryAliveAt: null,
              memoryRunSeen: view.outcome,
            }
          : {}),
      }));
      // Its kernel profile in the Profile tab, marked on the bundle's own files only.
      if (view.profile) get().showKernelProfile({ profile: view.profile, origin: { kind: 'bundle', path: view.path, sources } });
      return null;
    },

    closeBundle: () => dropBundle(),

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
  };
};

/**
 * The kernel a person looks at first: the one the diagnosis names; else the last launch before the diagnosed step
 * that was given the diagnosed buffer (a wrong result names the buffer, not the kernel that wrote it); else the
 * file the sanitizer's first finding is in; else the first launch's.
 */
function mainKernel(view: BundleView): LaunchPlan['kernels'][number] | null {
  const plan = view.plan;
  if (!plan) return null;
  const byId = (id: string | undefined) => plan.kernels.find((k) => k.id === id);
  const d = view.outcome?.diagnosis;
  const named = byId(d?.kernel?.id);
  if (named) return named;
  if (d?.buffer) {
    const launches = planLaunches(plan).filter((l) => d.step === null || l.stepIndex <= d.step.index);
    const wrote = launches.reverse().find((l) => {
      const step = plan.steps[l.stepIndex];
      return step?.op === 'launch' && step.args.some((a) => 'buffer' in a && a.buffer === d.buffer);
    });
    if (byId(wrote?.kernelId)) return byId(wrote?.kernelId)!;
  }
  const file = view.sanitizer?.groups.find((g) => g.where?.path)?.where?.path;
  const inFile = file ? plan.kernels.find((k) => basenameOf(k.sourceName) === basenameOf(file)) : undefined;
  return inFile ?? byId(planLaunches(plan)[0]?.kernelId) ?? plan.kernels[0] ?? null;
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
