import type { SnapshotModel } from '../../core/memory/snapshot-model';

/** The largest snapshot file read: PyTorch's own viewer struggles far below this (users report 1 GB crashing
 * Chrome); a million-entry trace is about 100 MB as PyTorch writes it. */
export const SNAPSHOT_MAX_BYTES = 1024 ** 3;

export interface SnapshotWorkerRequest {
  path: string;
  maxBytes: number;
}

export type SnapshotRefusal = 'refused' | 'not-a-snapshot' | 'unreadable' | 'too-large' | 'out-of-memory' | 'crashed';

export interface SnapshotTimings {
  readMs: number;
  unpickleMs: number;
  modelMs: number;
  bytes: number;
}

export type SnapshotWorkerReply = { ok: true; model: SnapshotModel; timings: SnapshotTimings } | { ok: false; kind: SnapshotRefusal; message: string };
