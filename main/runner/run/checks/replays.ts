import { replaysSkipped } from '../../../../core/runner/run-choice';
import type { DeterminismReport } from '../../../../core/runner/run-result';
import { replay, type FirstRun, type ReplayPass } from '../replay';
import type { RunChecks } from '../run-check';
import type { RunState } from '../run-state';

/** What the replaying checks (determinism, poison probe) share: the first run's record, the time budget, the replay itself. */
export class Replays {
  constructor(
    readonly run: RunState,
    private readonly first: FirstRun,
    private readonly budget: { runStarted: number; timeLimitMs: number | null; determinismRuns: number },
    /** The run's checks: a replay's end is told to all of them (what it printed is dropped, or kept as evidence). */
    private readonly checks: RunChecks,
  ) {}

  /** Null when the replays fit in what is left of the time limit; else the report that says they were skipped. */
  skipped(): DeterminismReport | null {
    if (this.budget.timeLimitMs === null) return null;
    return replaysSkipped(performance.now() - this.budget.runStarted, this.budget.determinismRuns, this.budget.timeLimitMs);
  }

  async replay(pass: ReplayPass): Promise<void> {
    await replay(this.run, this.first, pass);
    this.checks.afterReplay(this.run.failure);
  }
}
