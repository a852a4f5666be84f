/**
 * A snapshot model as Chrome Trace Event JSON (the format Perfetto and chrome://tracing open), produced as a
 * sequence of text chunks so that a caller can stream it to disk instead of holding one giant string.
 *
 * Per device (one process, pid = device + 1): a counter track "memory" with allocated and reserved bytes at
 * every entry that changed them; each allocation's lifetime as a complete event ("X") from its alloc to its
 * free_completed (or to the end of the trace, marked alive_at_end); an instant event for each OOM; process and
 * thread names. Complete events on one thread must not overlap (Perfetto drops or misdraws spans that overlap
 * without nesting), while allocations on one stream do: so each stream gets as many lanes (threads) as it had
 * allocations alive at once, and an allocation takes the lane that came free first.
 */
import { formatBytes as formatBytesForTrace } from '../format';
import { TraceChunks, TraceLanes } from './trace-chunks';
import { A, beforeRecording, describeFrame, type SnapshotModel } from './snapshot-model';

/** Perfetto's UI loads a JSON trace into the browser tab's memory; traces of a few hundred MB are the practical
 * ceiling (a 900 MB one crashed it), so the export stops at 256 MiB: split the recording or export less. */
export const MAX_TRACE_BYTES = 256 * 1024 * 1024;
/** A complete event as written here is 180–260 bytes; counters and instants fewer. Used to refuse early. */
export const BYTES_PER_EVENT_ESTIMATE = 200;

/** A trace past MAX_TRACE_BYTES (or the caller's own bound): refused, with what to do instead. */
export class TraceTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TraceTooLargeError';
  }
}

export function countTraceEvents(model: SnapshotModel): number {
  let n = 0;
  for (const t of model.devices) {
    for (let i = 0; i < t.count; i++) {
      const a = t.action[i]!;
      if (
        a === A.alloc ||
        a === A.oom ||
        a === A.free_completed ||
        a === A.segment_alloc ||
        a === A.segment_free ||
        a === A.segment_map ||
        a === A.segment_unmap
      )
        n++;
    }
  }
  return n;
}

const hex = (n: number) => `0x${n.toString(16)}`;

/** The trace as JSON text, in chunks of roughly `chunkChars` characters. */
export function* chromeTraceChunks(
  model: SnapshotModel,
  options: { chunkChars?: number; source?: string; stats?: { events: number } } = {},
): Generator<string> {
  const out = new TraceChunks({ source: options.source ?? 'PyTorch memory snapshot', exporter: 'gpu-workbench memory' }, options);

  for (const t of model.devices) {
    const before = beforeRecording(model, t);
    if (t.count === 0 && before.length === 0) continue;
    const pid = t.device + 1;
    const origin = t.count ? t.time[0]! : 0;
    const end = t.count ? t.time[t.count - 1]! - origin : 0;
    yield* out.emit(JSON.stringify({ name: 'process_name', ph: 'M', pid, tid: 0, args: { name: `cuda:${t.device} (PyTorch caching allocator)` } }));
    yield* out.emit(JSON.stringify({ name: 'thread_name', ph: 'M', pid, tid: 0, args: { name: 'memory and OOM' } }));
    yield* out.emit(JSON.stringify({ name: 'thread_sort_index', ph: 'M', pid, tid: 0, args: { sort_index: -1 } }));

    // A lane per overlapping allocation, per stream.
    const lanes = new TraceLanes<number>();
    const laneFor = function* (stream: number, start: number, stop: number): Generator<string, number> {
      const { tid, opened } = lanes.take(stream, start, stop);
      if (opened !== null)
        yield* out.emit(JSON.stringify({ name: 'thread_name', ph: 'M', pid, tid, args: { name: `stream ${hex(stream)} · lane ${opened}` } }));
      return tid;
    };

    for (const b of before) {
      const tid = yield* laneFor(b.stream, 0, end);
      yield* out.emit(
        `{"name":${JSON.stringify(`${formatBytesForTrace(b.size)} (before the recording)`)},"ph":"X","pid":${pid},"tid":${tid},"ts":0,"dur":${end},"args":{"address":"${hex(b.address)}","bytes":${b.size},"frame":${JSON.stringify(describeFrame(b.userFrame))},"before_recording":true}}`,
      );
    }

    let lastAlloc = NaN;
    let lastRes = NaN;
    for (let i = 0; i < t.count; i++) {
      const a = t.action[i]!;
      const ts = t.time[i]! - origin;
      if (t.allocated[i] !== lastAlloc || t.reserved[i] !== lastRes) {
        lastAlloc = t.allocated[i]!;
        lastRes = t.reserved[i]!;
        yield* out.emit(`{"name":"memory","ph":"C","pid":${pid},"tid":0,"ts":${ts},"args":{"allocated":${lastAlloc},"reserved":${lastRes}}}`);
      }
      if (a === A.alloc) {
        const freed = t.freedAt[i]!;
        const stop = freed >= 0 ? t.time[freed]! - origin : end;
        const tid = yield* laneFor(t.stream[i]!, ts, stop);
        const stack = t.stack[i]!;
        const frameId = stack >= 0 ? model.userFrame[stack]! : -1;
        const frame = frameId >= 0 ? model.frames[frameId]! : null;
        yield* out.emit(
          `{"name":${JSON.stringify(`${formatBytesForTrace(t.size[i]!)} ${frame ? `${frame.filename}:${frame.line}` : ''}`.trim())},"ph":"X","pid":${pid},"tid":${tid},"ts":${ts},"dur":${stop - ts},"args":{"address":"${hex(t.address[i]!)}","bytes":${t.size[i]},"frame":${JSON.stringify(describeFrame(frame))}${freed < 0 ? ',"alive_at_end":true' : ''}}}`,
        );
      } else if (a === A.oom) {
        const free = t.deviceFree.get(i) ?? NaN;
        yield* out.emit(
          JSON.stringify({
            name: `OOM: asked for ${formatBytesForTrace(t.size[i]!)}, ${Number.isFinite(free) ? formatBytesForTrace(free) : 'unknown'} free`,
            ph: 'i',
            s: 'p',
            pid,
            tid: 0,
            ts,
            args: { requested: t.size[i], device_free: Number.isFinite(free) ? free : null, allocated: t.allocated[i], reserved: t.reserved[i] },
          }),
        );
      }
    }
  }
  yield* out.end();
}
