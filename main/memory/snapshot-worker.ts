/**
 * Reads and models one PyTorch memory snapshot off the host's thread (a worker_threads Worker): the file is
 * read bounded, unpickled with the whitelist unpickler (nothing in it ever runs) and turned into typed columns,
 * whose buffers are handed back without a copy. One snapshot per worker; the worker exits after its reply.
 */
import { parentPort, workerData } from 'node:worker_threads';

import { buildSnapshotModel, SnapshotFormatError, type SnapshotModel } from '../../core/memory/snapshot-model';
import { unpickle, UnpickleError, DEFAULT_UNPICKLE_LIMITS } from '../../core/memory/unpickle';
import { FileRefusedError, readRegularFile } from '../services/safe-fs';
import type { SnapshotWorkerReply, SnapshotWorkerRequest } from './snapshot-protocol';

function transferables(model: SnapshotModel): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const t of model.devices) {
    for (const column of [t.time, t.action, t.address, t.size, t.stream, t.stack, t.allocated, t.reserved, t.freedAt]) {
      if (column.byteLength) out.push(column.buffer as ArrayBuffer);
    }
  }
  return out;
}

async function work(request: SnapshotWorkerRequest): Promise<{ reply: SnapshotWorkerReply; transfer: ArrayBuffer[] }> {
  const started = performance.now();
  let bytes: Uint8Array;
  try {
    bytes = (await readRegularFile(request.path, request.maxBytes)).bytes;
  } catch (error) {
    if (error instanceof FileRefusedError)
      return { reply: { ok: false, kind: error.code === 'TOO_LARGE' ? 'too-large' : 'unreadable', message: error.message }, transfer: [] };
    const e = error as NodeJS.ErrnoException;
    return { reply: { ok: false, kind: 'unreadable', message: `${request.path} cannot be read (${e.code ?? e.message}).` }, transfer: [] };
  }
  const read = performance.now();
  try {
    const value = unpickle(bytes, { ...DEFAULT_UNPICKLE_LIMITS, maxBytes: request.maxBytes });
    const unpickled = performance.now();
    const model = buildSnapshotModel(value);
    const done = performance.now();
    return {
      reply: { ok: true, model, timings: { readMs: read - started, unpickleMs: unpickled - read, modelMs: done - unpickled, bytes: bytes.byteLength } },
      transfer: transferables(model),
    };
  } catch (error) {
    if (error instanceof UnpickleError) return { reply: { ok: false, kind: 'refused', message: error.message }, transfer: [] };
    if (error instanceof SnapshotFormatError) return { reply: { ok: false, kind: 'not-a-snapshot', message: error.message }, transfer: [] };
    throw error;
  }
}

void work(workerData as SnapshotWorkerRequest).then(({ reply, transfer }) => parentPort!.postMessage(reply, transfer));
