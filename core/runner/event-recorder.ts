import type { Dim3 } from '../dims';
import { MAX_RUN_EVENTS, MAX_RUN_GPU_TIMES, type RunLogEvent, type RunPhase } from './event-log';
import type { CudaErrorInfo } from './run-result';

type ErrorEvent = Extract<RunLogEvent, { kind: 'error' }>;
type LaunchEvent = Extract<RunLogEvent, { kind: 'launch' }>;
type GpuSpan = { startMs: number; endMs: number };

/** Host times to the microsecond, GPU times to a tenth of one: finer is noise, and every digit is JSON. */
const hostMs = (ms: number) => Math.round(ms * 1e3) / 1e3;
const gpuMs = (ms: number) => Math.round(ms * 1e4) / 1e4;

/**
 * Writes a run's event log as the runner makes its driver calls (core/runner/event-log.ts). The runner
 * calls begin() just before a call and, once it returned, the method of its kind; when it threw,
 * error(). Each event is one plain object pushed to an array: the log costs a run a clock read and an
 * object per call. Past the caps, events (and GPU placements) are counted, not kept, so a plan with
 * repeats and replays cannot grow its result without bound.
 *
 * The clock is injected (the runner's performance.now), so this stays pure and testable.
 */
export class RunEventRecorder {
  readonly events: RunLogEvent[] = [];
  /** Events left out past the cap. */
  dropped = 0;
  /** What the runner is doing now: every event takes the phase and step current when it is recorded. */
  phase: RunPhase = 'run';
  step: number | null = null;
  private callStarted = 0;
  private pending = false;
  private gpuTimes = 0;
  // The event being recorded: its time and duration (fields, so that no call returns a pair).
  private t = 0;
  private dur = 0;

  constructor(
    private readonly clock: () => number,
    /** The clock's reading when the run began: time zero. */
    private readonly origin: number,
    private readonly limits: { events: number; gpuTimes: number } = { events: MAX_RUN_EVENTS, gpuTimes: MAX_RUN_GPU_TIMES },
  ) {}

  /** A driver call starts now. */
  begin(): void {
    this.callStarted = this.clock();
    this.pending = true;
  }

  /** The call begun last made no event (a module the cache already held): nothing to time. */
  skip(): void {
    this.pending = false;
  }

  moduleLoad(kernel: string, imageBytes: number): void {
    if (this.end()) this.events.push({ t: this.t, dur: this.dur, step: this.step, phase: this.phase, kind: 'module-load', kernel, imageBytes });
  }

  alloc(buffer: string, address: string, bytes: number, allocatedBytes: number): void {
    if (this.end()) this.events.push({ t: this.t, dur: this.dur, step: this.step, phase: this.phase, kind: 'alloc', buffer, address, bytes, allocatedBytes });
  }

  free(buffer: string, address: string, bytes: number, allocatedBytes: number): void {
    if (this.end()) this.events.push({ t: this.t, dur: this.dur, step: this.step, phase: this.phase, kind: 'free', buffer, address, bytes, allocatedBytes });
  }

  memset(buffer: string, address: string, bytes: number, value: number, why: 'poison' | 'zero' | 'guard'): void {
    if (this.end()) this.events.push({ t: this.t, dur: this.dur, step: this.step, phase: this.phase, kind: 'memset', buffer, address, bytes, value, why });
  }

  copy(direction: 'HtoD' | 'DtoH', buffer: string | null, bytes: number, why: 'data' | 'guards'): void {
    if (this.end()) this.events.push({ t: this.t, dur: this.dur, step: this.step, phase: this.phase, kind: 'copy', direction, buffer, bytes, why });
  }

  /** `gpu` is the addon's fresh list: rounded in place, and cut where the run's GPU placements reach their cap. */
  launch(kernel: string, entry: string, grid: Dim3, block: Dim3, sharedBytes: number, gpu: GpuSpan[]): void {
    if (!this.end()) return;
    const room = Math.max(0, this.limits.gpuTimes - this.gpuTimes);
    const gpuDropped = gpu.length > room ? gpu.length - room : 0;
    if (gpuDropped) gpu.length = room;
    this.gpuTimes += gpu.length;
    for (const span of gpu) {
      span.startMs = gpuMs(span.startMs);
      span.endMs = gpuMs(span.endMs);
    }
    const event: LaunchEvent = { t: this.t, dur: this.dur, step: this.step, phase: this.phase, kind: 'launch', kernel, entry, grid, block, sharedBytes, gpu };
    if (gpuDropped) event.gpuDropped = gpuDropped;
    this.events.push(event);
  }

  sync(): void {
    if (this.end()) this.events.push({ t: this.t, dur: this.dur, step: this.step, phase: this.phase, kind: 'sync' });
  }

  /**
   * A call that failed: timed from its begin() when one is pending, else an instant now (a failure the
   * workbench found before any call). Returns the event, for the caller to add what it learns after (the
   * device's memory for an allocation that ran out), or null when the log was full.
   */
  error(error: CudaErrorInfo): ErrorEvent | null {
    if (!this.end()) return null;
    const event: ErrorEvent = { t: this.t, dur: this.dur, step: this.step, phase: this.phase, kind: 'error', api: error.api, error };
    this.events.push(event);
    return event;
  }

  /** What the result carries. */
  finish(): { events: RunLogEvent[]; eventsDropped: number } {
    return { events: this.events, eventsDropped: this.dropped };
  }

  /** Ends the call begun last (or marks an instant): false, and counted, when the log is full. */
  private end(): boolean {
    const pending = this.pending;
    this.pending = false;
    if (this.events.length >= this.limits.events) {
      this.dropped++;
      return false;
    }
    const now = this.clock();
    const from = pending ? this.callStarted : now;
    this.t = hostMs(from - this.origin);
    this.dur = hostMs(now - from);
    return true;
  }
}
