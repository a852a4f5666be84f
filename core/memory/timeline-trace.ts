/**
 * Any timeline (a run's, a snapshot's device, a monitoring session's) as Chrome Trace Event JSON, the format
 * Perfetto and chrome://tracing open, produced in text chunks so it can be streamed to a file or a Blob.
 *
 * Each timeline is one process (named by its title), placed on the wall clock so several line up: a counter
 * track ("C") per counter, complete events ("X") for spans, one thread per lane, and for allocations; an instant
 * ("i") per marker. Complete events on one thread must nest or follow each other, so overlapping spans and
 * allocations are spread over as many threads ("lanes") as were busy at once, each taking the lane that came
 * free first.
 */
import { formatBytes } from '../format';
import { BYTES_PER_EVENT_ESTIMATE, MAX_TRACE_BYTES, TraceTooLargeError } from './chrome-trace';
import { TraceChunks, TraceLanes } from './trace-chunks';
import { sortedIndex } from './sort-index';
import { SPAN_LANES, type Timeline } from './timeline';
import { describeTimelineFrame, userFrameOf } from './timeline-model';

/** Events the export writes for these timelines (metadata aside): what the size estimate is made from. */
export function countTimelineTraceEvents(timelines: Timeline[]): number {
  let n = 0;
  for (const t of timelines) {
    n += t.allocations.count + t.spans.count + t.markers.length;
    for (const c of t.counters) n += c.time.length;
  }
  return n;
}

/** Bytes the export will take, roughly: events at their usual size, and markers' text as it is. */
export function estimateTimelineTraceBytes(timelines: Timeline[]): number {
  let detail = 0;
  for (const t of timelines) for (const m of t.markers) detail += m.detail.length + m.label.length;
  return countTimelineTraceEvents(timelines) * BYTES_PER_EVENT_ESTIMATE + detail;
}

export function timelineTooLargeMessage(what: string, maxBytes: number): string {
  return (
    `The trace would be ${what}, over the ${formatBytes(maxBytes)} that Perfetto and chrome://tracing can open in a browser tab (a 900 MB JSON trace crashes Perfetto's UI). ` +
    'Zoom to a shorter window and export that, or record less.'
  );
}

/** A copy of the timeline with only what overlaps [fromUs, toUs]: what "export the visible window" writes. */
export function timelineWindow(t: Timeline, fromUs: number, toUs: number): Timeline {
  const a = t.allocations;
  const keepA: number[] = [];
  for (let i = 0; i < a.count; i++) if (a.start[i]! <= toUs && a.end[i]! >= fromUs) keepA.push(i);
  const s = t.spans;
  const keepS: number[] = [];
  for (let i = 0; i < s.count; i++) if (s.start[i]! <= toUs && s.end[i]! >= fromUs) keepS.push(i);
  const pick = <T extends Float64Array | Int32Array | Uint8Array>(column: T, keep: number[]): T => {
    const out = new (column.constructor as new (n: number) => T)(keep.length);
    keep.forEach((i, k) => (out[k] = column[i]!));
    return out;
  };
  const newIndex = new Map(keepA.map((i, k) => [i, k]));
  return {
    ...t,
    counters: t.counters.map((c) => {
      const keep: number[] = [];
      for (let i = 0; i < c.time.length; i++) if (c.time[i]! <= toUs && (i + 1 === c.time.length || c.time[i + 1]! >= fromUs)) keep.push(i);
      return { ...c, time: pick(c.time, keep), value: pick(c.value, keep) };
    }),
    allocations: {
      count: keepA.length,
      start: pick(a.start, keepA),
      end: pick(a.end, keepA),
      address: pick(a.address, keepA),
      size: pick(a.size, keepA),
      stack: pick(a.stack, keepA),
      step: pick(a.step, keepA),
      label: pick(a.label, keepA),
    },
    spans: {
      count: keepS.length,
      start: pick(s.start, keepS),
      end: pick(s.end, keepS),
      lane: pick(s.lane, keepS),
      label: pick(s.label, keepS),
      step: pick(s.step, keepS),
    },
    markers: t.markers
      .filter((m) => m.timeUs >= fromUs && m.timeUs <= toUs)
      .map(({ allocation, ...m }) => (allocation !== undefined && newIndex.has(allocation) ? { ...m, allocation: newIndex.get(allocation)! } : m)),
  };
}

const hex = (n: number) => (Number.isFinite(n) ? `0x${n.toString(16)}` : null);

export interface TimelineTraceOptions {
  chunkChars?: number;
  /** What the trace was made from, written into otherData. */
  source?: string;
  stats?: { events: number };
  /** Stops with TraceTooLargeError past this many characters (the host's writer also counts bytes). */
  maxChars?: number;
}

export function* timelineTraceChunks(timelines: Timeline[], options: TimelineTraceOptions = {}): Generator<string> {
  const maxChars = options.maxChars ?? MAX_TRACE_BYTES;
  const out = new TraceChunks(
    { source: options.source ?? 'GPU Workbench memory timeline', exporter: 'gpu-workbench' },
    { ...options, maxChars, tooLarge: (max) => new TraceTooLargeError(timelineTooLargeMessage(`more than ${formatBytes(max)}`, max)) },
  );
  const meta = (name: string, pid: number, tid: number, args: Record<string, unknown>) => JSON.stringify({ name, ph: 'M', pid, tid, args });

  const origin = Math.min(...timelines.map((t) => t.originUs));
  for (let k = 0; k < timelines.length; k++) {
    const t = timelines[k]!;
    const pid = k + 1;
    const base = t.originUs - origin;
    const ts = (us: number) => Math.max(0, base + us);
    yield* out.emit(meta('process_name', pid, 0, { name: t.title }));
    yield* out.emit(meta('process_sort_index', pid, 0, { sort_index: k }));
    yield* out.emit(meta('thread_name', pid, 0, { name: 'counters and markers' }));
    yield* out.emit(meta('thread_sort_index', pid, 0, { sort_index: -1 }));

    // A lane per overlapping span, per track.
    const lanes = new TraceLanes<string>();
    const laneFor = function* (track: string, start: number, stop: number): Generator<string, number> {
      const { tid, opened } = lanes.take(track, start, stop);
      if (opened !== null) {
        yield* out.emit(meta('thread_name', pid, tid, { name: `${track} · lane ${opened}` }));
        yield* out.emit(meta('thread_sort_index', pid, tid, { sort_index: tid }));
      }
      return tid;
    };

    const names = new Set<string>();
    for (const c of t.counters) {
      let name = c.label || c.id;
      for (let n = 2; names.has(name); n++) name = `${c.label || c.id} (${n})`;
      names.add(name);
      const quoted = JSON.stringify(name);
      for (let i = 0; i < c.time.length; i++) {
        if (!Number.isFinite(c.value[i]!)) continue;
        yield* out.emit(`{"name":${quoted},"ph":"C","pid":${pid},"tid":0,"ts":${ts(c.time[i]!)},"args":{"bytes":${c.value[i]}}}`);
      }
    }

    const s = t.spans;
    for (const i of sortedIndex(s.start)) {
      const lane = SPAN_LANES[s.lane[i]!] ?? 'other';
      const start = ts(s.start[i]!);
      const stop = Math.max(start, ts(s.end[i]!));
      const tid = yield* laneFor(lane, start, stop);
      const label = s.label[i]! >= 0 ? t.labels[s.label[i]!]! : lane;
      const step = s.step[i]!;
      yield* out.emit(
        `{"name":${JSON.stringify(label)},"cat":"${lane}","ph":"X","pid":${pid},"tid":${tid},"ts":${start},"dur":${stop - start},"args":{"step":${step >= 0 ? step + 1 : null}}}`,
      );
    }

    const a = t.allocations;
    const end = ts(t.durationUs);
    for (const i of sortedIndex(a.start)) {
      const start = ts(a.start[i]!);
      const alive = a.end[i] === Infinity;
      const stop = Math.max(start, alive ? end : ts(a.end[i]!));
      const tid = yield* laneFor('allocations', start, stop);
      const frame = userFrameOf(t, i);
      const label = a.label[i]! >= 0 ? t.labels[a.label[i]!]! : null;
      const name = `${formatBytes(a.size[i]!)} ${label ?? (frame ? `${frame.file}:${frame.line}` : '')}`.trim();
      const step = a.step[i]!;
      yield* out.emit(
        `{"name":${JSON.stringify(name)},"cat":"allocation","ph":"X","pid":${pid},"tid":${tid},"ts":${start},"dur":${stop - start},"args":{"address":${JSON.stringify(hex(a.address[i]!))},"bytes":${a.size[i]},"step":${step >= 0 ? step + 1 : null},"frame":${JSON.stringify(frame ? describeTimelineFrame(frame) : null)}${alive ? ',"alive_at_end":true' : ''}}}`,
      );
    }

    for (const m of t.markers) {
      yield* out.emit(
        JSON.stringify({
          name: m.label,
          cat: m.kind,
          ph: 'i',
          s: 'p',
          pid,
          tid: 0,
          ts: ts(m.timeUs),
          args: { kind: m.kind, detail: m.detail, ...(m.step !== undefined ? { step: m.step + 1 } : {}) },
        }),
      );
    }
  }
  yield* out.end();
}
