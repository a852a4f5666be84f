import { planDeterminism, replayableEnd, type DeterminismSetup } from '../plan/determinism';
import type { LaunchPlan, RunChecks } from '../plan/plan-schema';
import type { DeterminismReport, RunChecksReport, RunResult } from './run-result';

/**
 * The checks a bare host program has: none of the workbench's own. A plan run under compute-sanitizer carries
 * these (main/services/sanitize-plan-service.ts): buffers of exactly their size (guard bytes would take an
 * overrun for an access in bounds, and hide it from memcheck), no poison (initcheck would count it as written),
 * no second run (the tool's cost, paid again). The runner then chooses none of those checks' plug-ins.
 */
export const HOST_PROGRAM_CHECKS = { guardBytes: 0, poison: false, determinismRuns: 0 } as const satisfies RunChecks;

/**
 * Which of the runner's own checks a run makes, decided once from the plan before its first call
 * (main/runner/run/choose-checks.ts turns this into plug-ins). What every run does (the event log, device
 * output, stale and uninitialised uses, the plan's own expectations) is not a choice and is not listed.
 */
export interface RunChoice {
  /** Bytes of known pattern around every buffer, read back after each launch; 0 for none. */
  guardBytes: number;
  /** Memory no upload initialises starts poisoned, and each read-back is scanned for what is left of it. */
  poison: boolean;
  /** The determinism check: `runs` replays compared with the first run (0: it does not run, `skipped` says why). */
  determinism: DeterminismSetup;
  /** The replays run the steps [0, replayEnd) again, before the trailing frees; null when no replay is chosen. */
  replayEnd: number | null;
  /** The poison probe, a replay with unwritten memory zeroed, is chosen (it runs only when NaN could be the poison's). */
  probe: boolean;
}

export function chooseChecks(plan: LaunchPlan): RunChoice {
  const determinism = planDeterminism(plan);
  const replayable = replayableEnd(plan);
  // The first run's read-backs are kept for a replay only when one of the replays is chosen.
  const replayEnd = typeof replayable === 'number' && (determinism.runs > 0 || plan.checks.poison) ? replayable : null;
  return { guardBytes: plan.checks.guardBytes, poison: plan.checks.poison, determinism, replayEnd, probe: plan.checks.poison && replayEnd !== null };
}

/** The determinism report of a run that made no replay: turned off, not possible (and why), or the run failed first. */
export function determinismNotRun(setup: DeterminismSetup): DeterminismReport {
  return { status: setup.off ? 'off' : 'skipped', reason: setup.skipped ?? 'the run failed before the check', runs: 0, ms: 0, differences: [] };
}

/**
 * Null when the replays fit in what is left of the host's time limit (a quarter kept in hand); else the report
 * that says they were skipped, so a slow but correct plan is never killed by its own check. `runs` is the
 * determinism check's (0 when it is off: the poison probe alone is one more run).
 */
export function replaysSkipped(firstRunMs: number, runs: number, timeLimitMs: number | null): DeterminismReport | null {
  if (timeLimitMs === null) return null;
  if (firstRunMs * (runs + 1) <= timeLimitMs * 0.75) return null;
  return {
    status: 'skipped',
    reason: `the first run took ${(firstRunMs / 1000).toFixed(1)} s of the ${(timeLimitMs / 1000).toFixed(0)} s time limit, so ${runs === 1 ? 'a second' : `${runs} more`} would not fit; raise the limit (--timeout) to check`,
    runs: 0,
    ms: 0,
    differences: [],
  };
}

/** A float read-back holds NaN beyond the poison pattern, and a launch received memory nothing had written. */
export function poisonSuspected(checks: Pick<RunChecksReport, 'uninitialised'>, buffers: RunResult['buffers']): boolean {
  return checks.uninitialised.length > 0 && buffers.some((b) => b.poison && b.poison.nanCount > b.poison.poisonCount);
}
