import type { StateCreator } from 'zustand';

import type { HeldOutcome } from '../../core/api/channels';
import { sanitizerRerunUnavailable } from '../../core/availability';
import type { BufferPage } from '../../core/runner/protocol';
import type { RunOutcome } from '../../core/runner/run-outcome';
import type { RestoredPlan } from '../../core/api/drafts';
import type { ArgRow } from '../../core/plan/form-plan';
import { editPlan as applyPlanEdit, isStepEdit, stepIndexAfter, type PlanEdit } from '../../core/plan/plan-edit';
import type { RunBlocker } from '../../core/plan/run-readiness';
import { fail, ok, type Result } from '../../core/result';
import { DEFAULT_LAUNCH_FORM, formFromLaunch, launchForDocument, planLaunches, planWithLaunch, type LaunchForm } from '../../core/plan/plan-launch';
import { basenameOf, dirnameOf } from '../../core/workspace/paths';
import { EMPTY_SOURCE_CONTEXT, resultSources, sourceCandidates, type SourceContext } from '../../core/workspace/source-link';
import { findResultSample } from './result-sample';
import { gpuPresence } from './devices-slice';
import { rerunSource } from './sanitizer-slice';
import type { WorkbenchState } from './store';

/** A plan from the gallery or a plan file, attached to the document whose kernel it launches. */
export interface AttachedPlan {
  /** As the Run section names it: "block-too-large (broken)", or the plan file's path. */
  label: string;
  plan: unknown;
  /** The plan's file on this machine. */
  planPath: string | null;
  /** The launch step the launch panel shows and edits; null when the plan has none. */
  launchStep: number | null;
  /** Where its kernels' files are (a sample's source), to find the files a result names. */
  sourcePaths: string[];
}

/** Everything the Run section holds for one document. */
export interface DocumentRun {
  /** The launch panel's fields: the attached plan's launch (as edited), or the run form's. */
  launch: LaunchForm;
  plan: AttachedPlan | null;
  argRows: { kernel: string; rows: ArgRow[] } | null;
}

/** What the shown outcome came from. */
export interface OutcomeOrigin {
  /** The result file it was opened from; null for a run made here. */
  file: string | null;
  /** The plan file that ran, on this machine; null for a recorded result or a plan built in the run form. */
  planPath: string | null;
  /** How to find the files it names. */
  sources: SourceContext;
  /** The plan exactly as it ran, for a run made here (to run it again under compute-sanitizer); absent for a recorded result. */
  plan?: unknown;
  /** The diagnostic bundle it was opened from (its path): read-only, its files the bundle's own. */
  bundle?: string;
  /** A recorded result's own plan, found here (its gallery sample's): what Export bundle takes for it. */
  ownPlan?: { plan: unknown; origin: string };
  /** The run Profile made (its launch under Nsight Compute where the counters could be read): the Profile tab stays in front. */
  profiled?: boolean;
}

export interface RunSlice {
  runs: Record<string, DocumentRun>;
  timeoutMs: number;
  /** Run the launches a second time and compare the read-backs bit for bit (the plan's default when on). */
  determinismCheck: boolean;
  running: boolean;
  /** What the run under way is doing, from its events. */
  runPhase: 'checks' | 'compile' | 'run' | 'diagnose' | null;
  outcome: RunOutcome | null;
  outcomeOrigin: OutcomeOrigin | null;
  runError: string | null;
  /** Why the last Run did not start (the validator's findings, no GPU): shown where a run's result would be. */
  runRefused: { reasons: RunBlocker[]; seq: number } | null;
  pages: Record<string, BufferPage>;
  setLaunch(docId: string, launch: Partial<LaunchForm>): void;
  setArgRows(docId: string, kernel: string, rows: ArgRow[]): void;
  setTimeoutMs(ms: number): void;
  setDeterminismCheck(on: boolean): void;
  /** Attaches a plan to a document and loads its launch into the launch panel. */
  attachPlan(docId: string, plan: Omit<AttachedPlan, 'launchStep'>): void;
  detachPlan(docId: string): void;
  /** Brings back a plan kept with a document (a reload, a restart): the plan as edited, the launch panel as typed. */
  restorePlan(docId: string, kept: RestoredPlan): void;
  /**
   * Changes the attached plan itself (a buffer's type, count or initializer; a scalar; a step added, removed or moved):
   * the plan that will run. Null when made, else why not (an edit that would leave no valid plan is refused).
   */
  editPlan(docId: string, edit: PlanEdit): string | null;
  /** Opens a plan file with the file its kernel comes from (beside the plan), or a new document holding its source. */
  openPlanFile(path: string): Promise<void>;
  runPlan(plan: unknown, origin: Omit<OutcomeOrigin, 'file'>): Promise<void>;
  /** Run was asked for and checks said no: says why, in the Run tab. */
  refuseRun(reasons: RunBlocker[]): void;
  /** Stops the run under way: its compile, or its runner (a fresh one takes over). */
  cancelRun(): void;
  showOutcome(outcome: RunOutcome, origin: OutcomeOrigin): void;
  openOutcome(path: string): Promise<void>;
  /** Saves the result on screen to the full path given (the host writes the outcome it holds): where, or null with runError saying why not. */
  saveResult(path: string | null): Promise<string | null>;
  /** Writes a plan to a file: where it went. Rejects with the host's words. */
  savePlanFile(path: string, plan: unknown): Promise<string>;
  page(buffer: string, offset: number, count: number): Promise<void>;
}

export const EMPTY_RUN: DocumentRun = { launch: DEFAULT_LAUNCH_FORM, plan: null, argRows: null };

/** A document's Run section: what its launch panel and run form hold. */
export const documentRun = (s: Pick<RunSlice, 'runs'>, docId: string | null): DocumentRun => (docId ? s.runs[docId] : undefined) ?? EMPTY_RUN;

/**
 * The id the host holds an outcome under (run.plan, run.open, profile.run and bundle.open answer it with one): what
 * save and export name instead of sending the outcome back. Null for one the host never gave out.
 */
export const heldOutcomeId = (outcome: RunOutcome | null): string | null => (outcome as Partial<HeldOutcome> | null)?.outcomeId ?? null;

/** What to do when the host no longer holds the outcome on screen, as the host says it for an id it has dropped. */
export const NOT_HELD = (doing: string) =>
  `The workbench no longer holds this run’s result (it keeps the newest it made or opened, only while it runs): run it again (or open its result file again), then ${doing}.`;

/** The run under way, to cancel it. */
let runAbort: AbortController | null = null;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The document a plan file's kernel comes from: its file beside the plan (open already, or opened when its text is
 * the plan's source), else a new document holding the plan's inline source. Where its file was looked for, too.
 */
async function documentForPlan(get: () => WorkbenchState, plan: unknown, planPath: string): Promise<{ docId: string | null; paths: string[] }> {
  const launch = planLaunches(plan)[0];
  const kernels = (plan as { kernels?: { id?: unknown; sourceName?: unknown; source?: unknown }[] }).kernels ?? [];
  const kernel = kernels.find((k) => k.id === launch?.kernelId) ?? kernels[0];
  const sourceName = typeof kernel?.sourceName === 'string' ? basenameOf(kernel.sourceName) : 'kernel.cu';
  const { paths } = sourceCandidates({ file: sourceName, line: 1 }, { ...EMPTY_SOURCE_CONTEXT, folders: [dirnameOf(planPath)] });
  for (const candidate of paths) {
    const open = get().documents.find((d) => d.path === candidate)?.id;
    if (open) return { docId: open, paths };
    const file = await get()
      .api.invoke('files.read', { path: candidate })
      .catch(() => null);
    if (file && file.text === kernel?.source) {
      const opened = await get().openPath(file.path);
      if (opened) return { docId: opened, paths };
      break;
    }
  }
  // The plan holds its source inline (or its file has changed since): that source, as a new document.
  get().newDocument(sourceName, typeof kernel?.source === 'string' ? kernel.source : '');
  return { docId: get().activeId, paths };
}

/**
 * A document's Run section with one edit made to its plan. A step edit takes the launch panel's grid and block into
 * their step first, so that they move (or go) with it; the panel follows its step, or, where that step was removed
 * (or the plan had none), shows the launch the file's plan now has.
 */
function editedRun(run: DocumentRun, edit: PlanEdit, documentName: string): Result<DocumentRun> {
  const attached = run.plan;
  if (!attached) return fail('There is no plan to edit.');
  if (!isStepEdit(edit)) {
    const edited = applyPlanEdit(attached.plan, edit);
    return edited.ok ? ok({ ...run, plan: { ...attached, plan: edited.value } }) : edited;
  }
  const folded = attached.launchStep === null ? null : planWithLaunch(attached.plan, attached.launchStep, run.launch);
  const edited = applyPlanEdit(folded?.ok ? folded.value : attached.plan, edit);
  if (!edited.ok) return edited;
  const kept = attached.launchStep === null ? null : stepIndexAfter(edit, attached.launchStep);
  const shown = kept === null ? launchForDocument(edited.value, documentName) : null;
  return ok({
    ...run,
    plan: { ...attached, plan: edited.value, launchStep: kept ?? shown?.stepIndex ?? null },
    launch: shown ? formFromLaunch(shown) : run.launch,
  });
}

type Set = Parameters<StateCreator<WorkbenchState, [], [], RunSlice>>[0];

/** Results and plans as files: a saved result opened (with its own sample's files found), the one on screen saved, a plan written. */
function resultFileActions(set: Set, get: () => WorkbenchState): Pick<RunSlice, 'openOutcome' | 'saveResult' | 'savePlanFile'> {
  return {
    openOutcome: async (path) => {
      try {
        const outcome = await get().api.invoke('run.open', { path });
        // Its links go to its own sample's files first (a result keeps no plan: the sample whose plan it ran).
        const own = await findResultSample(get().api, path, outcome);
        const ownPlan = own ? { ownPlan: { plan: own.plan, origin: `sample ${own.name} (${own.planPath})` } } : {};
        get().showOutcome(outcome, { file: path, planPath: null, sources: resultSources(path, own), ...ownPlan });
        set({ runError: null });
      } catch (error) {
        set({ runError: message(error) });
      }
    },
    saveResult: async (path) => {
      if (!path) {
        set({ runError: 'Give a file name or a full path to save the result to.' });
        return null;
      }
      const id = heldOutcomeId(get().outcome);
      if (!id) {
        set({ runError: NOT_HELD('save it') });
        return null;
      }
      try {
        const done = await get().api.invoke('run.save', { path, outcomeId: id });
        set({ runError: null });
        return done.path;
      } catch (error) {
        set({ runError: message(error) });
        return null;
      }
    },
    savePlanFile: async (path, plan) => (await get().api.invoke('plans.write', { path, plan })).path,
  };
}

export const createRunSlice: StateCreator<WorkbenchState, [], [], RunSlice> = (set, get) => {
  const update = (docId: string, change: (run: DocumentRun) => DocumentRun) => set((s) => ({ runs: { ...s.runs, [docId]: change(documentRun(s, docId)) } }));
  /** A change to a document's plan or its launch: kept with the document, like an edit to its text. */
  const updatePlan = (docId: string, change: (run: DocumentRun) => DocumentRun) => {
    update(docId, change);
    get().keepDraft(docId);
  };

  return {
    runs: {},
    timeoutMs: 10_000,
    determinismCheck: true,
    running: false,
    runPhase: null,
    outcome: null,
    outcomeOrigin: null,
    runError: null,
    runRefused: null,
    pages: {},
    setLaunch: (docId, launch) => updatePlan(docId, (run) => ({ ...run, launch: { ...run.launch, ...launch } })),
    setArgRows: (docId, kernel, rows) => update(docId, (run) => ({ ...run, argRows: { kernel, rows } })),
    setTimeoutMs: (timeoutMs) => set({ timeoutMs }),
    setDeterminismCheck: (determinismCheck) => set({ determinismCheck }),
    attachPlan: (docId, plan) => {
      const name = get().documents.find((d) => d.id === docId)?.name ?? '';
      const launch = launchForDocument(plan.plan, name);
      updatePlan(docId, (run) => ({
        ...run,
        plan: { ...plan, launchStep: launch?.stepIndex ?? null },
        launch: launch ? formFromLaunch(launch) : run.launch,
      }));
    },
    detachPlan: (docId) => updatePlan(docId, (run) => ({ ...run, plan: null })),
    restorePlan: (docId, kept) => {
      const name = get().documents.find((d) => d.id === docId)?.name ?? '';
      // The step the panel showed, where it is still a launch (a draft kept before steps could move has none).
      const shown = planLaunches(kept.plan).find((l) => l.stepIndex === kept.launchStep) ?? launchForDocument(kept.plan, name);
      const { plan, label, planPath, sourcePaths } = kept;
      updatePlan(docId, (run) => ({ ...run, plan: { label, plan, planPath, sourcePaths, launchStep: shown?.stepIndex ?? null }, launch: kept.launch }));
    },
    editPlan: (docId, edit) => {
      const edited = editedRun(documentRun(get(), docId), edit, get().documents.find((d) => d.id === docId)?.name ?? '');
      if (edited.ok) updatePlan(docId, () => edited.value);
      return edited.ok ? null : edited.error;
    },
    openPlanFile: async (path) => {
      const { plan, path: planPath } = await get().api.invoke('plans.read', { path });
      const { docId, paths } = await documentForPlan(get, plan, planPath);
      if (!docId) return;
      get().activate(docId);
      get().attachPlan(docId, { label: planPath, plan, planPath, sourcePaths: paths });
    },
    runPlan: async (plan, origin) => {
      const controller = new AbortController();
      runAbort = controller;
      set({ running: true, runError: null, runRefused: null, runPhase: null });
      try {
        const outcome = await get().api.invoke(
          'run.plan',
          {
            plan,
            timeoutMs: get().timeoutMs,
            planPath: origin.planPath,
            ...(get().determinismCheck ? {} : { determinismRuns: 0 }),
            // the Memory tab asked for the device's memory beside the run's allocations
            ...(get().sampleRunsMs !== null ? { sampleIntervalMs: get().sampleRunsMs! } : {}),
          },
          { signal: controller.signal, onEvent: (event) => set({ runPhase: event.phase }) },
        );
        set({ outcome, outcomeOrigin: { ...origin, file: null, plan }, pages: {} });
        // The setting: a failure its diagnosis says a sanitizer tool finds goes under that tool at once.
        const tool = outcome.diagnosis.sanitizer?.tool;
        const rerun = rerunSource(get());
        if (tool && get().autoSanitize && rerun.ok && !sanitizerRerunUnavailable(get().discovery, gpuPresence(get())))
          void get().sanitizeRun({ tool, plan: rerun.plan, planPath: rerun.planPath, label: rerun.label, sources: rerun.sources });
      } catch (error) {
        set({ runError: controller.signal.aborted ? 'The run was cancelled. A fresh runner is ready.' : `The run could not be started: ${message(error)}` });
      } finally {
        if (runAbort === controller) runAbort = null;
        set({ running: false, runPhase: null });
      }
    },
    refuseRun: (reasons) => set((s) => ({ runRefused: { reasons, seq: (s.runRefused?.seq ?? 0) + 1 } })),
    cancelRun: () => runAbort?.abort(),
    showOutcome: (outcome, outcomeOrigin) => set({ outcome, outcomeOrigin, runRefused: null, pages: {} }),
    ...resultFileActions(set, get),
    page: async (buffer, offset, count) => {
      const result = get().outcome?.result;
      if (!result) return;
      try {
        const page = await get().api.invoke('run.page', { runnerPid: result.runnerPid, runId: result.runId, buffer, offset, count });
        if (!page) {
          set({ runError: 'That run’s data is no longer kept (only the latest run’s is, while its runner lives): run again to page through it.' });
          return;
        }
        set({ pages: { ...get().pages, [buffer]: page } });
      } catch (error) {
        set({ runError: message(error) });
      }
    },
  };
};
