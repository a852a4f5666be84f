import { nanChange } from '../../../../core/plan/poison';
import { poisonSuspected } from '../../../../core/runner/run-choice';
import type { PoisonProbe } from '../../../../core/runner/run-result';
import type { RunCheck } from '../run-check';
import type { Replays } from './replays';

/**
 * The poison probe: where a float read-back holds NaN beyond the poison pattern and a launch received memory
 * nothing had written, the steps run once more with that memory zeroed instead. NaN that turns into numbers
 * came from the poison.
 */
export class PoisonProbeCheck implements RunCheck {
  constructor(private readonly replays: Replays) {}

  async atReplayPoint(): Promise<void> {
    const { run } = this.replays;
    if (poisonSuspected(run.checks, run.summaries)) run.checks.poisonProbe = await this.probe();
  }

  private async probe(): Promise<PoisonProbe> {
    const skipped = this.replays.skipped();
    if (skipped) return { status: 'skipped', reason: skipped.reason, buffers: [] };
    const found: PoisonProbe['buffers'] = [];
    await this.replays.replay({
      phase: 'probe',
      flag: 'duringPoisonProbe',
      fill: { value: 0x00, why: 'zero' },
      onDownload: (stepIndex, spec, data, first) => {
        const change = nanChange(spec.type, first, data);
        if (change) found.push({ buffer: spec.name, stepIndex, ...change });
      },
    });
    return { status: 'ran', reason: null, buffers: found };
  }
}
