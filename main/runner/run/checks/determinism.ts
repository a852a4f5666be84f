import { diffBitwise } from '../../../../core/plan/determinism';
import { POISON_BYTE } from '../../../../core/plan/guards';
import type { DeterminismReport } from '../../../../core/runner/run-result';
import type { RunCheck } from '../run-check';
import type { Replays } from './replays';

/**
 * The determinism check: the steps before the trailing frees run again `runs` times on the same inputs
 * (memory filled with poison at allocation is poisoned again), and every read-back is compared with the
 * first run's, bit for bit. Races and reads of memory nothing wrote often show only this way.
 */
export class DeterminismCheck implements RunCheck {
  constructor(
    private readonly replays: Replays,
    private readonly runs: number,
  ) {}

  async atReplayPoint(): Promise<void> {
    this.replays.run.checks.determinism = this.replays.skipped() ?? (await this.compare());
  }

  private async compare(): Promise<DeterminismReport> {
    const started = performance.now();
    const differences: DeterminismReport['differences'] = [];
    for (let run = 1; run <= this.runs && !this.replays.run.failure; run++) {
      await this.replays.replay({
        phase: 'determinism',
        flag: 'duringDeterminismRun',
        fill: { value: POISON_BYTE, why: 'poison' },
        onDownload: (stepIndex, spec, data, first) => {
          if (Buffer.compare(first, data) === 0) return;
          const d = diffBitwise(spec.type, first, data);
          if (d) differences.push({ run, stepIndex, buffer: spec.name, type: spec.type, count: spec.count, ...d });
        },
      });
    }
    return { status: 'compared', reason: null, runs: this.runs, ms: performance.now() - started, differences };
  }
}
