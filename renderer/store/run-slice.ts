import type { StateCreator } from 'zustand';

import type { BufferPage } from '../../core/runner/protocol';
import type { RunOutcome } from '../../core/runner/run-outcome';
import type { ArgRow } from '../../core/plan/form-plan';
import type { WorkbenchState } from './store';

/** A plan loaded from a file or the gallery: run as it is, with the editor's text for its kernel's file. */
export interface LoadedPlan {
  label: string;
  plan: unknown;
  planPath: string | null;
}

export interface RunSlice {
  /** The launch configuration, shared by the launch validator and the run form. */
  launch: { kernel: string; grid: string; block: string; smem: string };
  argRows: { kernel: string; rows: ArgRow[] } | null;
  timeoutMs: number;
  /** Run the launches a second time and compare the read-backs bit for bit (the plan's default when on). */
  determinismCheck: boolean;
  loadedPlan: LoadedPlan | null;
  running: boolean;
  /** What the run under way is doing, from its events. */
  runPhase: 'checks' | 'compile' | 'run' | 'diagnose' | null;
  outcome: RunOutcome | null;
  /** Where the shown outcome came from, when it was opened from a file. */
  outcomeSource: string | null;
  runError: string | null;
  pages: Record<string, BufferPage>;
  setLaunch(launch: Partial<RunSlice['launch']>): void;
  setArgRows(kernel: string, rows: ArgRow[]): void;
  setTimeoutMs(ms: number): void;
  setDeterminismCheck(on: boolean): void;
  setLoadedPlan(plan: LoadedPlan | null): void;
  runPlan(plan: unknown, planPath: string | null): Promise<void>;
  /** Stops the run under way: its compile, or its runner (a fresh one takes over). */
  cancelRun(): void;
  showOutcome(outcome: RunOutcome, source: string | null): void;
  openOutcome(path: string): Promise<void>;
  page(buffer: string, offset: number, count: number): Promise<void>;
}

/** The run under way, to cancel it. */
let runAbort: AbortController | null = null;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export const createRunSlice: StateCreator<WorkbenchState, [], [], RunSlice> = (set, get) => ({
  launch: { kernel: '', grid: '4', block: '256', smem: '0' },
  argRows: null,
  timeoutMs: 10_000,
  determinismCheck: true,
  loadedPlan: null,
  running: false,
  runPhase: null,
  outcome: null,
  outcomeSource: null,
  runError: null,
  pages: {},
  setLaunch: (launch) => set({ launch: { ...get().launch, ...launch } }),
  setArgRows: (kernel, rows) => set({ argRows: { kernel, rows } }),
  setTimeoutMs: (timeoutMs) => set({ timeoutMs }),
  setDeterminismCheck: (determinismCheck) => set({ determinismCheck }),
  setLoadedPlan: (loadedPlan) => set({ loadedPlan }),
  runPlan: async (plan, planPath) => {
    const controller = new AbortController();
    runAbort = controller;
    set({ running: true, runError: null, runPhase: null });
    try {
      const outcome = await get().api.invoke(
        'run.plan',
        { plan, timeoutMs: get().timeoutMs, planPath, ...(get().determinismCheck ? {} : { determinismRuns: 0 }) },
        { signal: controller.signal, onEvent: (event) => set({ runPhase: event.phase }) },
      );
      set({ outcome, outcomeSource: null, pages: {} });
    } catch (error) {
      set({ runError: controller.signal.aborted ? 'The run was cancelled. A fresh runner is ready.' : `The run could not be started: ${message(error)}` });
    } finally {
      if (runAbort === controller) runAbort = null;
      set({ running: false, runPhase: null });
    }
  },
  cancelRun: () => runAbort?.abort(),
  showOutcome: (outcome, outcomeSource) => set({ outcome, outcomeSource, pages: {} }),
  openOutcome: async (path) => {
    try {
      get().showOutcome(await get().api.invoke('run.open', { path }), path);
      set({ runError: null });
    } catch (error) {
      set({ runError: message(error) });
    }
  },
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
});
