import type { MemoryOpenEvent, MemoryOpenResult } from '../../core/memory/memory-open';
import type { SnapshotModel } from '../../core/memory/snapshot-model';

/** The largest snapshot file read: PyTorch's own viewer struggles far below this (users report 1 GB crashing
 * Chrome); a million-entry trace is about 100 MB as PyTorch writes it. */
export const SNAPSHOT_MAX_BYTES = 1024 ** 3;
/** The largest run result read as a timeline: 100,000 events written with indentation are about 40 MB. */
export const RUN_RESULT_MAX_BYTES = 256 * 1024 ** 2;

export interface SnapshotWorkerRequest {
  path: string;
  maxBytes: number;
  /** 'model' (the default): the snapshot model, columns handed over. 'timelines': a snapshot or a run result as wire timelines. */
  mode?: 'model' | 'timelines';
}

export type SnapshotRefusal = 'refused' | 'not-a-snapshot' | 'not-a-result' | 'no-timeline' | 'unreadable' | 'too-large' | 'out-of-memory' | 'crashed';

export interface SnapshotTimings {
  readMs: number;
  unpickleMs: number;
  modelMs: number;
  bytes: number;
}

type Refusal = { ok: false; kind: SnapshotRefusal; message: string };

export type SnapshotWorkerReply = { ok: true; model: SnapshotModel; timings: SnapshotTimings } | Refusal;
export type TimelinesWorkerReply = { ok: true; result: MemoryOpenResult } | Refusal;
/** Sent before the reply, in 'timelines' mode: the phase the worker entered. */
export type WorkerProgress = { progress: MemoryOpenEvent['phase'] };
