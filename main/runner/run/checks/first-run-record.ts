import type { BufferSpec } from '../../../../core/plan/plan-schema';
import type { FirstRun } from '../replay';
import type { LaunchDone, RunCheck } from '../run-check';

/** Keeps what the replays need of the first run, for the steps they replay: launch arguments and read-backs. */
export class FirstRunRecord implements RunCheck, FirstRun {
  readonly launchArgs = new Map<number, Uint8Array[]>();
  readonly readBacks = new Map<number, Uint8Array>();

  constructor(readonly replayEnd: number) {}

  afterLaunch({ stepIndex, args }: LaunchDone): void {
    if (stepIndex < this.replayEnd) this.launchArgs.set(stepIndex, args);
  }

  afterDownload(stepIndex: number, _spec: BufferSpec, data: Uint8Array): void {
    if (stepIndex < this.replayEnd) this.readBacks.set(stepIndex, data);
  }
}
