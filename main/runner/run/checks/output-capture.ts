import type { Step } from '../../../../core/plan/plan-schema';
import type { RunFailure } from '../../../../core/runner/run-result';
import type { RunnerAddon } from '../recorded-device';
import type { RunCheck } from '../run-check';
import type { RunState } from '../run-state';

/** Device printf text kept per step; a kernel printing in a loop can write far more. */
export const DEVICE_OUTPUT_BYTES_PER_STEP = 64 * 1024;

/**
 * Device printf and assert text, filed under the step that synchronised after it. Capture starts with the run
 * and stops after its teardown; what a replay printed repeats the first run's and is dropped, unless the
 * replay failed: then it is the evidence.
 */
export class OutputCapture implements RunCheck {
  private capturing = false;

  constructor(
    private readonly addon: RunnerAddon,
    private readonly run: RunState,
  ) {}

  start(): void {
    this.capturing = this.addon.captureOutputStart();
  }

  afterStep(stepIndex: number, step: Step, failed: boolean): void {
    if (step.op === 'launch' || step.op === 'sync' || failed) this.take(stepIndex);
  }

  afterReplay(failure: RunFailure | null): void {
    if (failure) this.take(failure.stepIndex ?? 0);
    else if (this.capturing) this.addon.captureOutputTake(0);
  }

  end(): void {
    if (!this.capturing) return;
    this.take(Math.max(0, this.run.steps.length - 1));
    this.addon.captureOutputStop();
  }

  /** What the kernels printed since the last take, filed under the step. */
  private take(stepIndex: number): void {
    if (!this.capturing) return;
    const { text, droppedBytes } = this.addon.captureOutputTake(DEVICE_OUTPUT_BYTES_PER_STEP);
    if (text || droppedBytes) this.run.deviceOutput.push({ stepIndex, text, droppedBytes });
  }
}
