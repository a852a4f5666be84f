/**
 * Reads one memory file in a reader process (main/readers/file-reader-child.ts), read bounded and trusted for nothing.
 * A PyTorch memory snapshot is unpickled with the whitelist unpickler (nothing in it ever runs) and modelled as typed
 * columns; for memory.open, a snapshot or a saved run result (JSON, told apart by its first byte) becomes wire
 * timelines with their summaries, so the host never parses or models (their columns cross as bytes: typed-wire.ts).
 */
import { basename } from 'node:path';

import { BUNDLE_JSON_LIMITS } from '../../core/bundle/bundle-limits';
import { JsonRefusedError, parseJsonWithin } from '../../core/json-limits';

import { memoryOpenResult, runFromSavedJson, snapshotTimelines } from '../../core/memory/memory-open';
import { RunLogError } from '../../core/memory/run-log-schema';
import { NoEventLogError, timelineFromRun } from '../../core/memory/run-timeline';
import { isChromeTrace, timelinesFromChromeTrace } from '../../core/memory/trace-timeline';
import { buildSnapshotModel, SnapshotFormatError, type SnapshotModel } from '../../core/memory/snapshot-model';
import { unpickle, UnpickleError, DEFAULT_UNPICKLE_LIMITS } from '../../core/memory/unpickle';
import { FileRefusedError, readRegularFile } from '../services/safe-fs';
import { RUN_RESULT_MAX_BYTES, type SnapshotRefusal, type SnapshotTimings, type WorkerProgress } from '../memory/snapshot-protocol';
import type { MemoryOpenResult } from '../../core/memory/memory-open';
import { encodeSnapshotColumns, type SnapshotColumnsHeader } from '../../core/memory/snapshot-columns';

type Refusal = { ok: false; kind: SnapshotRefusal; message: string };
const refuse = (kind: SnapshotRefusal, message: string): Refusal => ({ ok: false, kind, message });

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

/** A snapshot as typed columns and a string table (core/memory/snapshot-columns.ts), with what each phase took. */
export async function readSnapshotColumns(
  path: string,
  maxBytes: number,
): Promise<{ ok: true; header: SnapshotColumnsHeader; body: Uint8Array; timings: SnapshotTimings } | Refusal> {
  const started = performance.now();
  const bytes = await read(path, maxBytes);
  if ('ok' in bytes) return bytes;
  const readAt = performance.now();
  let unpickledAt = readAt;
  const m = model(bytes, maxBytes, () => (unpickledAt = performance.now()));
  if ('ok' in m) return m;
  const { header, body } = encodeSnapshotColumns(m);
  const timings = { readMs: readAt - started, unpickleMs: unpickledAt - readAt, modelMs: performance.now() - unpickledAt, bytes: bytes.byteLength };
  return { ok: true, header, body, timings };
}

/** Whether the file is JSON (a run result, a Chrome trace) rather than a pickle: its first byte past a BOM and white space is "{" or "[". */
function looksLikeJson(bytes: Uint8Array): boolean {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  return bytes[i] === 0x7b || bytes[i] === 0x5b;
}

/** A Chrome trace's timelines (one per process) and its table of events, as memory.open answers them. */
function traceResult(
  path: string,
  value: unknown,
  timings: { readMs: number; parseMs: number; bytes: number },
): { ok: true; result: MemoryOpenResult } | Refusal {
  const started = performance.now();
  const read = timelinesFromChromeTrace(value);
  if (!read.timelines.length && !read.events.length)
    return refuse('no-timeline', `${path} is a Chrome trace with no event that has a time: nothing to draw or list.`);
  const result = memoryOpenResult(path, 'trace', read.timelines, read.notes, { ...timings, modelMs: 0, timelineMs: performance.now() - started });
  return { ok: true, result: { ...result, traceEvents: { rows: read.events, more: read.moreEvents } } };
}

/** A memory file the user opened as wire timelines with their summaries (memory.open). */
export async function readMemoryTimelines(
  request: { path: string; maxBytes: number },
  progress: (phase: WorkerProgress['progress']) => void,
): Promise<{ ok: true; result: MemoryOpenResult } | Refusal> {
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
      value = parseJsonWithin(bytes, BUNDLE_JSON_LIMITS.result, request.path);
    } catch (error) {
      if (!(error instanceof JsonRefusedError)) throw error;
      return refuse(
        error.kind === 'limit' ? 'too-large' : 'not-a-result',
        error.kind === 'limit' ? `${error.message}.` : `${request.path} starts like JSON but ${error.message.slice(request.path.length + 1)}`,
      );
    }
    const parseMs = performance.now() - parseStarted;
    progress('timeline');
    if (isChromeTrace(value)) return traceResult(request.path, value, { readMs, parseMs, bytes: bytes.byteLength });
    const timelineStarted = performance.now();
    try {
      const run = runFromSavedJson(value);
      const timeline = timelineFromRun(run, null, { title: `${name} · ${run.device.name} (cuda:${run.device.ordinal})` });
      const notes = run.events ? [] : ['This result was saved before the workbench recorded an event log: its timeline shows the steps in order, not to time.'];
      return {
        ok: true,
        result: memoryOpenResult(request.path, 'run', [timeline], notes, {
          readMs,
          parseMs,
          modelMs: 0,
          timelineMs: performance.now() - timelineStarted,
          bytes: bytes.byteLength,
        }),
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
    result: memoryOpenResult(request.path, 'snapshot', timelines, [], {
      readMs,
      parseMs: modelStarted - parseStarted,
      modelMs: modelled - modelStarted,
      timelineMs: performance.now() - modelled,
      bytes: bytes.byteLength,
    }),
  };
}
