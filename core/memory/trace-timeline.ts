/**
 * A Chrome trace (Trace Event JSON: what `gpu-workbench run --trace`, `memory --trace` and the Memory tab's Export
 * trace write, and what Perfetto and chrome://tracing open) drawn by the memory timeline: one Timeline per process
 * of the trace. What the workbench writes comes back as it was drawn — counters of bytes, allocations (complete
 * events of category "allocation"), kernels, copies, memsets, syncs and module loads, and the OOM, leak, error and
 * peak markers; any other trace's complete events (and B/E pairs) go to an "other events" lane, and every event with
 * a duration is also counted in a table by name: how many, their total and longest time.
 *
 * Nothing in the file is trusted: every field is checked for its type, and an event that is not well formed is passed
 * over and counted. Pure: the caller has parsed the JSON within its limits.
 */
import { formatBytes, thousands } from '../format';
import { SPAN_LANES, type CounterGroup, type MarkerKind, type SpanLane, type Timeline, type TimelineMarker } from './timeline';
import { AllocationsBuilder, CounterBuilder, counterHead, LabelTable, parseAddress, SpansBuilder } from './timeline-columns';

/** The events of one name and category that have a duration: the trace's events in a table. */
export interface TraceEventRow {
  name: string;
  cat: string;
  count: number;
  totalUs: number;
  longestUs: number;
}

export interface TraceRead {
  timelines: Timeline[];
  /** By total time, longest first; at most TRACE_TABLE_ROWS rows. */
  events: TraceEventRow[];
  /** Rows past TRACE_TABLE_ROWS, not listed. */
  moreEvents: number;
  notes: string[];
}

export class TraceFormatError extends Error {
  override readonly name = 'TraceFormatError';
}

export const TRACE_TABLE_ROWS = 200;

const MARKERS: readonly MarkerKind[] = ['oom', 'leak', 'error', 'peak'];
const LANES: readonly string[] = SPAN_LANES;

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v.slice(0, 1024) : typeof v === 'number' ? String(v) : fallback);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Whether parsed JSON is a Chrome trace: an object with a traceEvents array, or an array of objects with `ph`. */
export function isChromeTrace(value: unknown): boolean {
  if (isRecord(value)) return Array.isArray(value['traceEvents']);
  return Array.isArray(value) && value.length > 0 && isRecord(value[0]) && typeof value[0]['ph'] === 'string';
}

/** A duration event, from X (ts and dur) or a B/E pair on one thread. */
interface Span {
  pid: string;
  name: string;
  cat: string;
  start: number;
  end: number;
  args: Rec;
}

/** The trace's well-formed events: its spans (B/E paired per thread), counters, instants and process names. */
function readEvents(events: unknown[]) {
  const spans: Span[] = [];
  const counters: { pid: string; name: string; ts: number; args: Rec }[] = [];
  const instants: { pid: string; name: string; cat: string; ts: number; args: Rec }[] = [];
  const names = new Map<string, string>();
  const open = new Map<string, Span[]>();
  let skipped = 0;
  for (const e of events) {
    const ph = isRecord(e) ? str(e['ph']) : '';
    const ts = isRecord(e) ? num(e['ts']) : null;
    if (!isRecord(e) || (ts === null && ph !== 'M')) {
      skipped++;
      continue;
    }
    const pid = str(e['pid'], '0');
    const name = str(e['name']);
    const cat = str(e['cat']);
    const args = isRecord(e['args']) ? e['args'] : {};
    if (ph === 'M') {
      if (name === 'process_name' && typeof args['name'] === 'string') names.set(pid, args['name'].slice(0, 256));
    } else if (ph === 'X' && num(e['dur']) !== null && num(e['dur'])! >= 0) spans.push({ pid, name, cat, start: ts!, end: ts! + num(e['dur'])!, args });
    else if (ph === 'B' || ph === 'E') {
      const key = `${pid}\u0000${str(e['tid'])}`;
      const stack = open.get(key) ?? [];
      open.set(key, stack);
      if (ph === 'B') stack.push({ pid, name, cat, start: ts!, end: ts!, args });
      else {
        const begun = stack.pop();
        if (begun && ts! >= begun.start) spans.push({ ...begun, end: ts!, args: { ...begun.args, ...args } });
        else skipped++;
      }
    } else if (ph === 'C') counters.push({ pid, name, ts: ts!, args });
    else if (ph === 'i' || ph === 'I' || ph === 'R') instants.push({ pid, name, cat, ts: ts!, args });
  }
  for (const stack of open.values()) skipped += stack.length;
  return { spans, counters, instants, names, skipped };
}

/** The events that have a duration, by name and category: the longest in all first. */
function eventTable(spans: Span[]): { rows: TraceEventRow[]; more: number } {
  const rows = new Map<string, TraceEventRow>();
  for (const s of spans) {
    const key = `${s.cat}\u0000${s.name}`;
    const row = rows.get(key) ?? { name: s.name, cat: s.cat, count: 0, totalUs: 0, longestUs: 0 };
    rows.set(key, row);
    row.count++;
    row.totalUs += s.end - s.start;
    row.longestUs = Math.max(row.longestUs, s.end - s.start);
  }
  const sorted = [...rows.values()].sort((a, b) => b.totalUs - a.totalUs || a.name.localeCompare(b.name));
  return { rows: sorted.slice(0, TRACE_TABLE_ROWS), more: Math.max(0, sorted.length - TRACE_TABLE_ROWS) };
}

const counterGroup = (name: string): CounterGroup =>
  /reserved/i.test(name) ? 'reserved' : /allocated/i.test(name) ? 'allocated' : /^pid \d+|process/i.test(name) ? 'process' : 'device';

/** A counter's series that are bytes: `args.bytes`, or any argument whose name says bytes. */
const byteSeries = (args: Rec): [string, number][] =>
  Object.entries(args).flatMap(([k, v]) => (num(v) !== null && /bytes/i.test(k) ? [[k, v as number] as [string, number]] : []));

/** One process of the trace as a timeline, its times from the trace's own origin (shared by every process). */
function processTimeline(pid: string, title: string, origin: number, read: ReturnType<typeof readEvents>): Timeline {
  const labels = new LabelTable();
  const allocations = new AllocationsBuilder();
  const spans = new SpansBuilder();
  let end = 0;
  for (const s of read.spans.filter((x) => x.pid === pid).sort((a, b) => a.start - b.start)) {
    const start = s.start - origin;
    const stop = s.end - origin;
    const bytes = num(s.args['bytes']);
    const step = num(s.args['step']);
    if (s.cat === 'allocation' && bytes !== null && bytes >= 0) {
      // As the workbench names them ("4 MiB x"): the name without its size is the buffer's, or the line's.
      const rest = s.name.startsWith(`${formatBytes(bytes)} `) ? s.name.slice(formatBytes(bytes).length + 1) : s.name;
      allocations.push({
        start,
        end: s.args['alive_at_end'] === true ? Infinity : stop,
        address: parseAddress(str(s.args['address'])),
        size: bytes,
        ...(rest ? { label: labels.id(rest) } : {}),
        ...(step !== null && step >= 1 ? { step: step - 1 } : {}),
      });
    } else {
      const lane: SpanLane = LANES.includes(s.cat) ? (s.cat as SpanLane) : 'other';
      spans.push(lane, start, stop, labels.id(s.name || s.cat || 'event'), step !== null && step >= 1 ? step - 1 : null);
    }
    end = Math.max(end, stop);
  }
  const series = new Map<string, CounterBuilder>();
  for (const c of read.counters.filter((x) => x.pid === pid).sort((a, b) => a.ts - b.ts)) {
    for (const [key, value] of byteSeries(c.args)) {
      const label = key === 'bytes' ? c.name : `${c.name} ${key}`;
      let builder = series.get(label);
      if (!builder) series.set(label, (builder = new CounterBuilder(counterHead(`trace:${pid}:${label}`, label, counterGroup(label)))));
      builder.push(c.ts - origin, value);
      end = Math.max(end, c.ts - origin);
    }
  }
  const markers: TimelineMarker[] = [];
  for (const i of read.instants.filter((x) => x.pid === pid)) {
    const kind = MARKERS.find((k) => k === i.cat || k === i.args['kind']);
    if (!kind) continue;
    const step = num(i.args['step']);
    markers.push({
      kind,
      timeUs: i.ts - origin,
      label: i.name,
      detail: str(i.args['detail']).slice(0, 4096),
      ...(step !== null && step >= 1 ? { step: step - 1 } : {}),
    });
    end = Math.max(end, i.ts - origin);
  }
  return {
    version: 1,
    source: 'snapshot',
    title,
    device: null,
    originUs: origin,
    durationUs: Math.max(end, 1),
    counters: [...series.values()].map((b) => b.finish()),
    allocations: allocations.finish(),
    spans: spans.finish(),
    markers: markers.sort((a, b) => a.timeUs - b.timeUs),
    labels: labels.labels,
    stacks: [],
    steps: [],
  };
}

/** A parsed Chrome trace as timelines (one per process with anything to draw) and its table of events. */
export function timelinesFromChromeTrace(value: unknown): TraceRead {
  if (!isChromeTrace(value)) throw new TraceFormatError('This JSON is not a Chrome trace: it has no traceEvents list, and is not a list of trace events.');
  const events = (Array.isArray(value) ? value : (value as Rec)['traceEvents']) as unknown[];
  const read = readEvents(events);
  const times = [...read.spans.map((s) => s.start), ...read.counters.map((c) => c.ts), ...read.instants.map((i) => i.ts)];
  const origin = times.reduce((a, b) => Math.min(a, b), Infinity);
  const pids = [...new Set([...read.spans, ...read.counters, ...read.instants].map((e) => e.pid))];
  const timelines = Number.isFinite(origin)
    ? pids
        .map((pid) => processTimeline(pid, read.names.get(pid) ?? `process ${pid}`, origin, read))
        .filter((t) => t.counters.length || t.allocations.count || t.spans.count || t.markers.length)
    : [];
  const { rows, more } = eventTable(read.spans);
  const notes = [
    `A Chrome trace of ${thousands(events.length)} events, drawn from what it records: counters of bytes, allocations, spans and markers.`,
    ...(read.skipped ? [`${thousands(read.skipped)} events were not well formed (no time, or an end without its begin) and are left out.`] : []),
  ];
  return { timelines, events: rows, moreEvents: more, notes };
}
