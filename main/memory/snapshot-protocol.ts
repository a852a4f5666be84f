import type { MemoryOpenEvent } from '../../core/memory/memory-open';

/** The largest snapshot file read: PyTorch's own viewer struggles far below this (users report 1 GB crashing
 * Chrome); a million-entry trace is about 100 MB as PyTorch writes it. */
export const SNAPSHOT_MAX_BYTES = 1024 ** 3;
/** The largest run result read as a timeline: 100,000 events written with indentation are about 40 MB. */
export const RUN_RESULT_MAX_BYTES = 256 * 1024 ** 2;

export type SnapshotRefusal = 'refused' | 'not-a-snapshot' | 'not-a-result' | 'no-timeline' | 'unreadable' | 'too-large' | 'out-of-memory' | 'crashed';

export interface SnapshotTimings {
  readMs: number;
  unpickleMs: number;
  modelMs: number;
  bytes: number;
}

/** What the memory reader reports as it goes: the phase it entered. */
export type WorkerProgress = { progress: MemoryOpenEvent['phase'] };
