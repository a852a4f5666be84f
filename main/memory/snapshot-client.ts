import { Worker } from 'node:worker_threads';

import type { SnapshotModel } from '../../core/memory/snapshot-model';
import { distEntry } from '../paths';
import { SNAPSHOT_MAX_BYTES, type SnapshotRefusal, type SnapshotTimings, type SnapshotWorkerReply } from './snapshot-protocol';

export class SnapshotImportError extends Error {
  constructor(
    readonly kind: SnapshotRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'SnapshotImportError';
  }
}

export interface SnapshotImportOptions {
  maxBytes?: number;
  signal?: AbortSignal;
  /** Heap for the worker; a pickle that needs more is stopped with a message instead of taking the host down. */
  maxHeapMb?: number;
}

/** Imports a snapshot file in a worker thread; rejects with SnapshotImportError for anything it refuses. */
export function importSnapshot(path: string, options: SnapshotImportOptions = {}): Promise<{ model: SnapshotModel; timings: SnapshotTimings }> {
  const maxBytes = options.maxBytes ?? SNAPSHOT_MAX_BYTES;
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new SnapshotImportError('crashed', 'The import was cancelled.'));
    const worker = new Worker(distEntry('snapshot-worker.js'), {
      workerData: { path, maxBytes },
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 8192 },
    });
    let settled = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      f();
    };
    const onAbort = () => {
      settle(() => reject(new SnapshotImportError('crashed', 'The import was cancelled.')));
      void worker.terminate();
    };
    options.signal?.addEventListener('abort', onAbort);
    worker.once('message', (reply: SnapshotWorkerReply) => {
      settle(() => (reply.ok ? resolve({ model: reply.model, timings: reply.timings }) : reject(new SnapshotImportError(reply.kind, reply.message))));
    });
    worker.once('error', (error: Error & { code?: string }) => {
      settle(() =>
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new SnapshotImportError('out-of-memory', `Reading ${path} needed more than ${options.maxHeapMb ?? 8192} MB of memory and was stopped.`)
            : new SnapshotImportError('crashed', `The snapshot reader failed: ${error.message}`),
        ),
      );
    });
    worker.once('exit', (code) => settle(() => reject(new SnapshotImportError('crashed', `The snapshot reader exited (${code}) without an answer.`))));
  });
}
