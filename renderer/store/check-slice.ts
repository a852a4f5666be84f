import type { StateCreator } from 'zustand';

import type { CheckReport, CheckResult } from '../../core/check/check-model';
import type { WorkbenchState } from './store';

/** A plan to check: as Run would run it, with how the report names it. */
export interface CheckRequest {
  plan: unknown;
  planPath: string | null;
  label: string;
  /** The Run section's time limit, for the run (a gpu-workbench-check.json beside the plan may set its own). */
  timeoutMs: number;
}

export interface CheckSlice {
  /** The last Check everything's report, on screen in the Check tab. */
  checkReport: CheckReport | null;
  /** The check under way: its plan, each check as it ended, and when it started (this clock). */
  checkProgress: { label: string; results: CheckResult[]; startedAtMs: number } | null;
  /** Why the last check gave no report (cancelled, refused while the tool ran elsewhere, the host's message). */
  checkError: string | null;
  /** Goes up whenever the Check tab has news (a check starting, its report, its error): the tab comes forward. */
  checkSeq: number;
  checkEverything(request: CheckRequest): Promise<void>;
  cancelCheck(): void;
}

/** The check under way, to cancel it. */
let checkAbort: AbortController | null = null;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export const createCheckSlice: StateCreator<WorkbenchState, [], [], CheckSlice> = (set, get) => ({
  checkReport: null,
  checkProgress: null,
  checkError: null,
  checkSeq: 0,
  checkEverything: async ({ plan, planPath, label, timeoutMs }) => {
    if (get().checkProgress) return;
    const controller = new AbortController();
    checkAbort = controller;
    set((s) => ({ checkReport: null, checkError: null, checkProgress: { label, results: [], startedAtMs: Date.now() }, checkSeq: s.checkSeq + 1 }));
    try {
      const report = await get().api.invoke(
        'check.plan',
        { plan, planPath, label, timeoutMs },
        {
          signal: controller.signal,
          onEvent: (event) => {
            if (event.kind !== 'check' || checkAbort !== controller) return;
            set((s) => (s.checkProgress ? { checkProgress: { ...s.checkProgress, results: [...s.checkProgress.results, event.result] } } : {}));
          },
        },
      );
      set((s) => ({ checkReport: report, checkSeq: s.checkSeq + 1 }));
    } catch (error) {
      set((s) => ({
        checkError: controller.signal.aborted
          ? 'Cancelled: the checks under way were stopped. Nothing was kept from them.'
          : `Check everything could not run ${label}: ${message(error)}`,
        checkSeq: s.checkSeq + 1,
      }));
    } finally {
      if (checkAbort === controller) checkAbort = null;
      set({ checkProgress: null });
    }
  },
  cancelCheck: () => checkAbort?.abort(),
});
