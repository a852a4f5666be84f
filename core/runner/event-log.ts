import type { Dim3 } from '../dims';
import type { CudaErrorInfo } from './run-result';

/**
 * The runner's event log: every driver call of a run that touches memory or time, in the order it was
 * made. It is the data behind the memory timeline, the bundle and the Perfetto export (ARCHITECTURE.md §5).
 *
 * Times: `t` and `dur` are host milliseconds since the run began (RunResult.startedAtMs, epoch ms, is that
 * moment on the wall clock, so NVML samples taken by the host line up). `gpuStartMs`/`gpuEndMs` are the
 * GPU's own times from CUDA events, in milliseconds after the run's origin event (recorded when the run
 * began), so they are on the same axis as `t` to within the event's own offset.
 */
export type RunPhase = 'load' | 'run' | 'determinism' | 'probe' | 'teardown';

interface EventBase {
  /** Host ms since the run began. */
  t: number;
  /** Host ms the call took (the synchronisation after a launch included for 'launch'). */
  dur: number;
  /** The plan step it belongs to; null for module loads and teardown. */
  step: number | null;
  phase: RunPhase;
}

export type RunLogEvent =
  | (EventBase & { kind: 'module-load'; kernel: string; imageBytes: number })
  | (EventBase & {
      kind: 'alloc';
      buffer: string;
      /** The address the kernel gets (past the front guard), hex. */
      address: string;
      /** The buffer's own bytes. */
      bytes: number;
      /** What was asked of the driver: guards on both sides included. */
      allocatedBytes: number;
    })
  | (EventBase & { kind: 'free'; buffer: string; address: string; bytes: number; allocatedBytes: number })
  | (EventBase & { kind: 'memset'; buffer: string; address: string; bytes: number; value: number; why: 'poison' | 'zero' | 'guard' })
  | (EventBase & { kind: 'copy'; direction: 'HtoD' | 'DtoH'; buffer: string | null; bytes: number; why: 'data' | 'guards' })
  | (EventBase & {
      kind: 'launch';
      kernel: string;
      entry: string;
      grid: Dim3;
      block: Dim3;
      sharedBytes: number;
      /** Each timed launch (repeats) on the GPU: start and end after the origin event, ms. Empty when events failed. */
      gpu: { startMs: number; endMs: number }[];
      /** Timed launches left out of `gpu` once the run held MAX_RUN_GPU_TIMES of them (absent when none were). */
      gpuDropped?: number;
    })
  | (EventBase & { kind: 'sync' })
  | (EventBase & {
      kind: 'error';
      api: string;
      error: CudaErrorInfo;
      /** For an allocation that failed: the request and the device's memory at that moment. */
      memory?: { requestedBytes: number; freeBytes: number; totalBytes: number } | null;
    });

/** At most this many events are kept per run; past it, `eventsDropped` counts what was left out. */
export const MAX_RUN_EVENTS = 100_000;

/**
 * At most this many GPU placements (`gpu` entries of launches) per run, all launches together: one launch
 * step may time 10,000 repeats, and a plan may hold 10,000 launch steps and replay them, so the event cap
 * alone would not bound them.
 */
export const MAX_RUN_GPU_TIMES = 100_000;
