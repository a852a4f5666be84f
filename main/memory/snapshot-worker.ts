/**
 * Reads one memory file off the host's thread (a worker_threads Worker), read bounded and trusted for nothing.
 * 'model' mode: a PyTorch memory snapshot, unpickled with the whitelist unpickler (nothing in it ever runs) and
 * turned into typed columns, whose buffers are handed back without a copy. 'timelines' mode (memory.open): a
 * snapshot or a saved run result (JSON, told apart by its first byte) as wire timelines with their summaries, so
 * the host's event loop never parses, models or encodes. One file per worker; the worker exits after its reply.
 */
import { basename } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

import { memoryOpenResult, runFromSavedJson, snapshotTimelines } from '../../core/memory/memory-open';
import { RunLogError } from '../../core/memory/run-log-schema';
import { NoEventLogError, timelineFromRun } from '../../core/memory/run-timeline';
import { buildSnapshotModel, SnapshotFormatError, type SnapshotModel } from '../../core/memory/snapshot-model';
import { unpickle, UnpickleError, DEFAULT_UNPICKLE_LIMITS } from '../../core/memory/unpickle';
import { FileRefusedError, readRegularFile } from '../services/safe-fs';
import {
  RUN_RESULT_MAX_BYTES,
  type SnapshotRefusal,
  type SnapshotWorkerReply,
  type SnapshotWorkerRequest,
  type TimelinesWorkerReply,
  type WorkerProgress,
} from './snapshot-protocol';

type Refusal = { ok: false; kind: SnapshotRefusal; message: string };
/** Buffer's base64: the same text as core's encoder, several times faster for a million allocations' columns. */
const NATIVE = { base64: (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') };
const refuse = (kind: SnapshotRefusal, message: string): Refusal => ({ ok: false, kind, message });

function transferables(model: SnapshotModel): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const t of model.devices) {
    for (const column of [t.time, t.action, t.address, t.size, t.stream, t.stack, t.allocated, t.reserved, t.freedAt]) {
      if (column.byteLength) out.push(column.buffer as ArrayBuffer);
    }
  }
  return out;
}

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'it does not exist',
  EISDIR: 'it is a folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

async function read(path: string, maxBytes: number): Promise<Buffer | Refusal> {
  try {
    return (await readRegularFile(path, maxBytes)).bytes;
  } catch (error) {
    if (error instanceof FileRefusedError) return refuse(error.code === 'TOO_LARGE' ? 'too-large' : 'unreadable', error.message);
    const e = error as NodeJS.ErrnoException;
    const why = e.code && READ_ERRORS[e.code] ? `: ${READ_ERRORS[e.code]}` : '';
    return refuse('unreadable', `${path} cannot be read (${e.code ?? e.message})${why}.`);
  }
}

/** Unpickled and modelled; a refusal in words for a hostile pickle or one that is not a snapshot. */
function model(bytes: Uint8Array, maxBytes: number, progress: (phase: WorkerProgress['progress']) => void): SnapshotModel | Refusal {
  try {
    const value = unpickle(bytes, { ...DEFAULT_UNPICKLE_LIMITS, maxBytes });
    progress('model');
    return buildSnapshotModel(value);
  } catch (error) {
    if (error instanceof UnpickleError) return refuse('refused', error.message);
    if (error instanceof SnapshotFormatError) return refuse('not-a-snapshot', error.message);
    throw error;
  }
}

async function modelMode(request: SnapshotWorkerRequest): Promise<{ reply: SnapshotWorkerReply; transfer: ArrayBuffer[] }> {
  const started = performance.now();
  const bytes = await read(request.path, request.maxBytes);
  if ('ok' in bytes) return { reply: bytes, transfer: [] };
  const readAt = performance.now();
  let unpickledAt = readAt;
  const m = model(bytes, request.maxBytes, () => (unpickledAt = performance.now()));
  if ('ok' in m) return { reply: m, transfer: [] };
  const done = performance.now();
  return {
    reply: {
      ok: true,
      model: m,
      timings: { readMs: readAt - started, unpickleMs: unpickledAt - readAt, modelMs: done - unpickledAt, bytes: bytes.byteLength },
    },
    transfer: transferables(m),
  };
}

/** Whether the file is JSON (a run result) rather than a pickle: its first byte past a BOM and white space is "{". */
function looksLikeJson(bytes: Uint8Array): boolean {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  return bytes[i] === 0x7b;
}

async function timelinesMode(request: SnapshotWorkerRequest, progress: (phase: WorkerProgress['progress']) => void): Promise<TimelinesWorkerReply> {
  const started = performance.now();
  progress('read');
  const bytes = await read(request.path, request.maxBytes);
  if ('ok' in bytes) return bytes;
  const readMs = performance.now() - started;
  progress('parse');
  const parseStarted = performance.now();
  const name = basename(request.path);

  if (looksLikeJson(bytes)) {
    if (bytes.byteLength > RUN_RESULT_MAX_BYTES)
      return refuse('too-large', `${request.path} is ${bytes.byteLength} bytes: a run result is read up to ${RUN_RESULT_MAX_BYTES} bytes.`);
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      return refuse('not-a-result', `${request.path} starts like JSON but is not valid JSON: ${(error as Error).message}`);
    }
    const parseMs = performance.now() - parseStarted;
    progress('timeline');
    const timelineStarted = performance.now();
    try {
      const run = runFromSavedJson(value);
      const timeline = timelineFromRun(run, null, { title: `${name} · ${run.device.name} (cuda:${run.device.ordinal})` });
      const notes = run.events ? [] : ['This result was saved before the workbench recorded an event log: its timeline shows the steps in order, not to time.'];
      return {
        ok: true,
        result: memoryOpenResult(
          request.path,
          'run',
          [timeline],
          notes,
          {
            readMs,
            parseMs,
            modelMs: 0,
            timelineMs: performance.now() - timelineStarted,
            bytes: bytes.byteLength,
          },
          NATIVE,
        ),
      };
    } catch (error) {
      if (error instanceof RunLogError) return refuse('not-a-result', `${request.path}: ${error.message}`);
      if (error instanceof NoEventLogError) return refuse('no-timeline', `${request.path}: ${error.message}`);
      throw error;
    }
  }

  let modelStarted = parseStarted;
  const m = model(bytes, request.maxBytes, (phase) => {
    modelStarted = performance.now();
    progress(phase);
  });
  if ('ok' in m) return m;
  const modelled = performance.now();
  progress('timeline');
  const timelines = snapshotTimelines(m, name);
  if (!timelines.length)
    return refuse('no-timeline', `${request.path} holds no trace and no segments: nothing to draw (was _record_memory_history on when it was dumped?).`);
  return {
    ok: true,
    result: memoryOpenResult(
      request.path,
      'snapshot',
      timelines,
      [],
      {
        readMs,
        parseMs: modelStarted - parseStarted,
        modelMs: modelled - modelStarted,
        timelineMs: performance.now() - modelled,
        bytes: bytes.byteLength,
      },
      NATIVE,
    ),
  };
}

const request = workerData as SnapshotWorkerRequest;
if (request.mode === 'timelines') {
  void timelinesMode(request, (phase) => parentPort!.postMessage({ progress: phase } satisfies WorkerProgress)).then((reply) => parentPort!.postMessage(reply));
} else {
  void modelMode(request).then(({ reply, transfer }) => parentPort!.postMessage(reply, transfer));
}
