import type { BufferSpec, LaunchStep, Step } from '../../../core/plan/plan-schema';
import type { RunFailure, RunResult } from '../../../core/runner/run-result';
import type { Allocation, AllocLayout } from './recorded-device';

/** A launch the first run has made, as the checks after it see it. */
export interface LaunchDone {
  stepIndex: number;
  step: LaunchStep;
  entry: string;
  /** The encoded arguments it was given. */
  args: Uint8Array[];
  /** Its buffer arguments, in order, repeats and stale ones included. */
  passed: string[];
}

type Summary = RunResult['buffers'][number];

/**
 * One of the run's checks, as a plug-in: it keeps its own state and acts through these hooks, each called
 * at one point of the run (plan-run.ts). The steps carry no check's flag: a check that is not chosen is
 * not in the run (choose-checks.ts). Hooks that make driver calls are async; the others are not.
 */
export interface RunCheck {
  /** The run begins (after its time origin, before any module loads). */
  start?(): void;
  /** What it asks of an allocation's layout at this alloc step (guard bytes around it, a fill inside). */
  allocLayout?(stepIndex: number): Partial<AllocLayout>;
  afterAlloc?(buffer: string, allocation: Allocation): void;
  afterUpload?(buffer: string): void;
  /** A launch's buffer argument as it is encoded: live, or freed at `freedAtStep` (the dangling pointer goes on). */
  pointerArg?(stepIndex: number, kernel: string, buffer: string, freedAtStep: number | null): void;
  afterLaunch?(launch: LaunchDone): void | Promise<void>;
  /** What a read-back's summary says beyond the plain one. */
  summary?(spec: BufferSpec, data: Uint8Array, summary: Summary): Summary;
  afterDownload?(stepIndex: number, spec: BufferSpec, data: Uint8Array): void;
  /** A step of the first run is done (`failed`: it failed). */
  afterStep?(stepIndex: number, step: Step, failed: boolean): void;
  /** Every step before the trailing frees is done: where a replay runs. Not called once the run has failed. */
  atReplayPoint?(): Promise<void>;
  /** A replay is done; `failure` is its fault, or null. */
  afterReplay?(failure: RunFailure | null): void;
  /** The run is over: the teardown is done, the result is next. */
  end?(): void;
}

/** The chosen checks, each hook called on each of them in the order they were added. */
export class RunChecks {
  private readonly list: RunCheck[] = [];

  add(...checks: RunCheck[]): this {
    this.list.push(...checks);
    return this;
  }

  start(): void {
    for (const c of this.list) c.start?.();
  }

  allocLayout(stepIndex: number): AllocLayout {
    const layout: AllocLayout = { guardBytes: 0, fill: -1 };
    for (const c of this.list) Object.assign(layout, c.allocLayout?.(stepIndex));
    return layout;
  }

  afterAlloc(buffer: string, allocation: Allocation): void {
    for (const c of this.list) c.afterAlloc?.(buffer, allocation);
  }

  afterUpload(buffer: string): void {
    for (const c of this.list) c.afterUpload?.(buffer);
  }

  pointerArg(stepIndex: number, kernel: string, buffer: string, freedAtStep: number | null): void {
    for (const c of this.list) c.pointerArg?.(stepIndex, kernel, buffer, freedAtStep);
  }

  async afterLaunch(launch: LaunchDone): Promise<void> {
    for (const c of this.list) {
      const pending = c.afterLaunch?.(launch);
      if (pending) await pending;
    }
  }

  summary(spec: BufferSpec, data: Uint8Array, summary: Summary): Summary {
    return this.list.reduce((s, c) => c.summary?.(spec, data, s) ?? s, summary);
  }

  afterDownload(stepIndex: number, spec: BufferSpec, data: Uint8Array): void {
    for (const c of this.list) c.afterDownload?.(stepIndex, spec, data);
  }

  afterStep(stepIndex: number, step: Step, failed: boolean): void {
    for (const c of this.list) c.afterStep?.(stepIndex, step, failed);
  }

  /** Each check's replay in turn, until one fails: a replay's fault is the run's. */
  async atReplayPoint(failed: () => boolean): Promise<void> {
    for (const c of this.list) {
      if (failed()) return;
      await c.atReplayPoint?.();
    }
  }

  afterReplay(failure: RunFailure | null): void {
    for (const c of this.list) c.afterReplay?.(failure);
  }

  end(): void {
    for (const c of this.list) c.end?.();
  }
}
