import type { RunChoice } from '../../../core/runner/run-choice';
import { BufferUses } from './checks/buffer-uses';
import { DeterminismCheck } from './checks/determinism';
import { FirstRunRecord } from './checks/first-run-record';
import { GuardCheck } from './checks/guards';
import { OutputCapture } from './checks/output-capture';
import { PoisonCheck } from './checks/poison';
import { PoisonProbeCheck } from './checks/poison-probe';
import { Replays } from './checks/replays';
import type { RunnerAddon } from './recorded-device';
import { RunChecks } from './run-check';
import type { RunState } from './run-state';

/** What the checks of a run are made from. */
export interface CheckContext {
  choice: RunChoice;
  run: RunState;
  addon: RunnerAddon;
  /** performance.now() when the run began, and the host's time limit: the replays' budget. */
  runStarted: number;
  timeLimitMs: number | null;
}

/**
 * The run's checks as plug-ins, from the choice made on its plan (core/runner/run-choice.ts). Every run keeps
 * its stale and uninitialised uses and captures device output; guards, poison and the replays are there only
 * when chosen: a plan with the host program's checks (a run under compute-sanitizer) gets none of them, so
 * its steps run once, each making only the driver call it stands for.
 *
 * The order is the order of each hook's calls: the first run's record and the bookkeeping come before the
 * guards' driver calls after a launch; the determinism check replays before the poison probe.
 */
export function chooseRunChecks({ choice, run, addon, runStarted, timeLimitMs }: CheckContext): RunChecks {
  const checks = new RunChecks();
  let replays: Replays | null = null;
  if (choice.replayEnd !== null) {
    const first = new FirstRunRecord(choice.replayEnd);
    replays = new Replays(run, first, { runStarted, timeLimitMs, determinismRuns: choice.determinism.runs }, checks);
    checks.add(first);
  }
  checks.add(new BufferUses(run), new OutputCapture(addon, run));
  if (choice.poison) checks.add(new PoisonCheck(run.plan));
  if (choice.guardBytes > 0) checks.add(new GuardCheck(run, choice.guardBytes));
  if (replays && choice.determinism.runs > 0) checks.add(new DeterminismCheck(replays, choice.determinism.runs));
  if (replays && choice.probe) checks.add(new PoisonProbeCheck(replays));
  return checks;
}
