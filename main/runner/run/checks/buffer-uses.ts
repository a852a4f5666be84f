import type { RunCheck } from '../run-check';
import type { RunState } from '../run-state';

/**
 * Stale and uninitialised uses: a launch given a buffer freed before it (the dangling pointer is passed on,
 * as a host program would), or one nothing has written yet (no upload, no earlier launch given it).
 * Bookkeeping only, no driver call: it means the same under compute-sanitizer, and runs in every run.
 */
export class BufferUses implements RunCheck {
  /** Buffers an upload or a launch may have written. */
  private readonly written = new Set<string>();

  constructor(private readonly run: RunState) {}

  afterUpload(buffer: string): void {
    this.written.add(buffer);
  }

  pointerArg(stepIndex: number, kernel: string, buffer: string, freedAtStep: number | null): void {
    if (freedAtStep !== null) this.run.checks.staleUses.push({ stepIndex, kernel, buffer, freedAtStep });
    else if (!this.written.has(buffer)) this.run.checks.uninitialised.push({ stepIndex, kernel, buffer });
  }

  /** The kernel may have written any buffer it was given. */
  afterLaunch({ passed }: { passed: string[] }): void {
    for (const name of passed) if (this.run.allocations.has(name)) this.written.add(name);
  }
}
