import type { AbortLike } from '../../core/api/channels';
import type { MemoryOpenEvent, MemoryOpenResult } from '../../core/memory/memory-open';
import { decodeSnapshotColumns, SnapshotColumnsError } from '../../core/memory/snapshot-columns';
import type { SnapshotModel } from '../../core/memory/snapshot-model';
import { TRACE_TABLE_ROWS } from '../../core/memory/trace-timeline';
import { ReaderError, runReader, startWaitingReader, type ReaderLimits, type WaitingReader } from '../readers/reader-process';
import { SNAPSHOT_MAX_BYTES, type SnapshotRefusal, type SnapshotTimings } from './snapshot-protocol';

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
  signal?: AbortLike;
  /** The reader's own limits, where a caller needs others than a snapshot's (core/readers: READER_LIMITS). */
  limits?: Partial<ReaderLimits>;
}

const REFUSALS: readonly string[] = ['refused', 'not-a-snapshot', 'not-a-result', 'no-timeline', 'unreadable', 'too-large', 'out-of-memory', 'crashed'];

/** A reader's failure as the snapshot's refusal: its own kind where it has one, the host's (a timeout, a cancel) as a crash. */
function asImportError(error: unknown): never {
  if (error instanceof ReaderError) throw new SnapshotImportError((REFUSALS.includes(error.kind) ? error.kind : 'crashed') as SnapshotRefusal, error.message);
  throw error;
}

const snapshotJob = (path: string, maxBytes = SNAPSHOT_MAX_BYTES) => ({ kind: 'snapshot-model' as const, path, maxBytes });

/**
 * A reader for a snapshot a program is still to write (the allocator-history re-run's): its process starts now and
 * waits, so its start-up is spent while the program runs, not after it. Hand it to importSnapshot as `reader`.
 */
export const startSnapshotReader = (path: string, maxBytes?: number): WaitingReader => startWaitingReader(snapshotJob(path, maxBytes), path);

/**
 * Imports a snapshot file in a reader process (`reader`: one started for this path beforehand); its model crosses as
 * checked columns. Rejects with SnapshotImportError.
 */
export async function importSnapshot(
  path: string,
  options: SnapshotImportOptions & { reader?: WaitingReader } = {},
): Promise<{ model: SnapshotModel; timings: SnapshotTimings }> {
  type Answer = { header: unknown; timings: SnapshotTimings };
  const { value, body } = await (
    options.reader ? options.reader.read<Answer>(options) : runReader<Answer>(snapshotJob(path, options.maxBytes), path, options)
  ).catch(asImportError);
  try {
    return { model: decodeSnapshotColumns(value.header, body ?? new Uint8Array()), timings: value.timings };
  } catch (error) {
    if (error instanceof SnapshotColumnsError)
      throw new SnapshotImportError('crashed', `${path} was not opened: its reader's answer is not valid (${error.message}).`);
    throw error;
  }
}

/** A Chrome trace's table of events as the reader makes it (core/memory/trace-timeline.ts): rows of names and numbers. */
function isTraceTable(value: unknown): boolean {
  const t = value as { rows?: unknown; more?: unknown } | null;
  const row = (r: unknown) => {
    const x = r as Record<string, unknown> | null;
    return (
      typeof x === 'object' &&
      x !== null &&
      typeof x['name'] === 'string' &&
      typeof x['cat'] === 'string' &&
      ['count', 'totalUs', 'longestUs'].every((k) => typeof x[k] === 'number' && Number.isFinite(x[k]))
    );
  };
  return typeof t === 'object' && t !== null && typeof t.more === 'number' && Array.isArray(t.rows) && t.rows.length <= TRACE_TABLE_ROWS && t.rows.every(row);
}

/**
 * The memory timelines of a file the user opened — a PyTorch snapshot pickle (one per device with data) or a saved
 * run result — read, modelled and encoded for the wire in a reader process. Each timeline is checked here against
 * the wire's schema and its columns' lengths, without decoding it (checkTimelineWire): the renderer decodes it once,
 * and checks the values as it does. Rejects with SnapshotImportError.
 */
export async function openMemoryTimelines(
  path: string,
  options: SnapshotImportOptions & { onPhase?: (phase: MemoryOpenEvent['phase']) => void } = {},
): Promise<MemoryOpenResult> {
  const { value } = await runReader<MemoryOpenResult>({ kind: 'memory-timelines', path, maxBytes: options.maxBytes ?? SNAPSHOT_MAX_BYTES }, path, {
    ...options,
    onProgress: (p) => {
      const phase = (p as { phase?: unknown } | null)?.phase;
      if (phase === 'read' || phase === 'parse' || phase === 'model' || phase === 'timeline') options.onPhase?.(phase);
    },
  }).catch(asImportError);
  // Its checks build schemas: loaded when a snapshot is opened, not at every start of a command that may open one.
  const { checkTimelineWire, TimelineWireError } = await import('../../core/memory/timeline-wire');
  try {
    if (!Array.isArray(value.timelines) || !Array.isArray(value.summary) || value.timelines.length !== value.summary.length)
      throw new TimelineWireError('the timelines and their summaries do not match');
    for (const wire of value.timelines) checkTimelineWire(wire);
    if (value.traceEvents !== undefined && !isTraceTable(value.traceEvents)) throw new TimelineWireError('its table of trace events is not one');
  } catch (error) {
    if (error instanceof TimelineWireError)
      throw new SnapshotImportError('crashed', `${path} was not opened: its reader's answer is not valid (${error.message}).`);
    throw error;
  }
  return value;
}
