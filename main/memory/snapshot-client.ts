import { Worker } from 'node:worker_threads';

import type { MemoryOpenEvent, MemoryOpenResult } from '../../core/memory/memory-open';
import type { SnapshotModel } from '../../core/memory/snapshot-model';
import { distEntry } from '../paths';
import {
  SNAPSHOT_MAX_BYTES,
  type SnapshotRefusal,
  type SnapshotTimings,
  type SnapshotWorkerReply,
  type SnapshotWorkerRequest,
  type TimelinesWorkerReply,
  type WorkerProgress,
} from './snapshot-protocol';

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

type Reply<T> = ({ ok: true } & T) | { ok: false; kind: SnapshotRefusal; message: string };

/** One worker for one file: its reply, its progress, its cancellation and its failures, each settled once. */
function runWorker<T>(request: SnapshotWorkerRequest, options: SnapshotImportOptions, onProgress?: (phase: WorkerProgress['progress']) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new SnapshotImportError('crashed', 'The import was cancelled.'));
    const worker = new Worker(distEntry('snapshot-worker.js'), {
      workerData: request,
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
    worker.on('message', (message: Reply<T> | WorkerProgress) => {
      if ('progress' in message) {
        if (!settled) onProgress?.(message.progress);
        return;
      }
      settle(() => (message.ok ? resolve(message as T) : reject(new SnapshotImportError(message.kind, message.message))));
    });
    worker.once('error', (error: Error & { code?: string }) => {
      settle(() =>
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new SnapshotImportError('out-of-memory', `Reading ${request.path} needed more than ${options.maxHeapMb ?? 8192} MB of memory and was stopped.`)
            : new SnapshotImportError('crashed', `The snapshot reader failed: ${error.message}`),
        ),
      );
    });
    worker.once('exit', (code) => settle(() => reject(new SnapshotImportError('crashed', `The snapshot reader exited (${code}) without an answer.`))));
  });
}

/** Imports a snapshot file in a worker thread; rejects with SnapshotImportError for anything it refuses. */
export async function importSnapshot(path: string, options: SnapshotImportOptions = {}): Promise<{ model: SnapshotModel; timings: SnapshotTimings }> {
  const reply = await runWorker<Extract<SnapshotWorkerReply, { ok: true }>>({ path, maxBytes: options.maxBytes ?? SNAPSHOT_MAX_BYTES }, options);
  return { model: reply.model, timings: reply.timings };
}

/**
 * The memory timelines of a file the user opened — a PyTorch snapshot pickle (one per device with data) or a saved
 * run result — read, modelled and encoded for the wire in a worker thread. Rejects with SnapshotImportError.
 */
export async function openMemoryTimelines(
  path: string,
  options: SnapshotImportOptions & { onPhase?: (phase: MemoryOpenEvent['phase']) => void } = {},
): Promise<MemoryOpenResult> {
  const reply = await runWorker<Extract<TimelinesWorkerReply, { ok: true }>>(
    { path, maxBytes: options.maxBytes ?? SNAPSHOT_MAX_BYTES, mode: 'timelines' },
    options,
    options.onPhase,
  );
  return reply.result;
}
