/**
 * A Timeline as it crosses a wire (a reader's answer, the serve WebSocket, Electron IPC): its columns as the typed
 * arrays they are, which each wire carries as bytes (core/api/typed-wire.ts; structured clone under Electron), and
 * its frames written once and referred to by index, so stacks keep sharing them across the wire.
 *
 * checkTimelineWire checks a wire without reading its columns' values: the envelope with zod (types, string lengths,
 * list lengths), every column's type and length in elements against its count, and every index the envelope itself
 * holds (stacks, markers). The host checks a reader's answer so, and passes it on as it is. decodeTimeline (the
 * renderer's) checks the same first, then what only the columns hold: every index against what it indexes, every
 * number that must be finite. Either throws TimelineWireError saying where and what.
 */
import * as z from 'zod';

import { SPAN_LANES, type Timeline, type TimelineCounter, type TimelineFrame, type TimelineStack } from './timeline';

export const WIRE_LIMITS = {
  allocations: 5_000_000,
  spans: 5_000_000,
  counters: 10_000,
  counterPoints: 20_000_000,
  markers: 100_000,
  labels: 1_000_000,
  labelChars: 32 * 1024 * 1024,
  frames: 1_000_000,
  stacks: 1_000_000,
  stackFrames: 10_000_000,
  steps: 100_000,
} as const;

export class TimelineWireError extends Error {
  constructor(message: string) {
    super(`This is not a timeline the workbench can draw: ${message}`);
    this.name = 'TimelineWireError';
  }
}

const text = (max: number) => z.string().max(max);
const finite = z.number(); // zod 4 refuses NaN and ±Infinity
const count = (max: number) => z.number().int().min(0).max(max);
// Typed over any buffer: a column may view a frame's or a body's buffer (core/api/typed-wire.ts).
const f64: z.ZodType<Float64Array> = z.instanceof(Float64Array);
const i32: z.ZodType<Int32Array> = z.instanceof(Int32Array);
const u8: z.ZodType<Uint8Array> = z.instanceof(Uint8Array);

/** Typed arrays travel in the platform's byte order, and every platform the workbench runs on is little-endian. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const flagSchema = z.object({ kind: z.enum(['exited', 'foreign', 'not-visible']), text: text(2000), fix: text(2000) }).strict();
const counterSchema = z
  .object({
    id: text(1000),
    label: text(1000),
    group: z.enum(['device', 'process', 'allocated', 'reserved']),
    unit: z.literal('bytes'),
    pid: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31)
      .optional(),
    flag: flagSchema.optional(),
    capacity: z.number().min(0).optional(),
    count: count(WIRE_LIMITS.counterPoints),
    time: f64,
    value: f64,
  })
  .strict();
const markerSchema = z
  .object({
    kind: z.enum(['oom', 'leak', 'error', 'peak']),
    timeUs: finite,
    label: text(1000),
    detail: text(65_536),
    step: z.number().int().min(0).optional(),
    allocation: z.number().int().min(0).optional(),
  })
  .strict();

export const timelineWireSchema = z
  .object({
    version: z.literal(1),
    source: z.enum(['run', 'snapshot', 'monitor']),
    title: text(1000),
    device: z.number().int().min(0).max(1023).nullable(),
    originUs: finite,
    durationUs: finite.min(0),
    counters: z.array(counterSchema).max(WIRE_LIMITS.counters),
    allocations: z.object({ count: count(WIRE_LIMITS.allocations), start: f64, end: f64, address: f64, size: f64, stack: i32, step: i32, label: i32 }).strict(),
    spans: z.object({ count: count(WIRE_LIMITS.spans), start: f64, end: f64, lane: u8, label: i32, step: i32 }).strict(),
    markers: z.array(markerSchema).max(WIRE_LIMITS.markers),
    labels: z.array(text(1000)).max(WIRE_LIMITS.labels),
    frames: z
      .array(
        z.tuple([
          text(4096),
          z
            .number()
            .int()
            .min(0)
            .max(2 ** 31),
          text(4096),
        ]),
      )
      .max(WIRE_LIMITS.frames),
    stacks: z.array(z.object({ frames: z.array(z.number().int().min(0)).max(100_000), userFrame: z.number().int().min(-1) }).strict()).max(WIRE_LIMITS.stacks),
    steps: z.array(z.object({ index: z.number().int().min(0), label: text(1000) }).strict()).max(WIRE_LIMITS.steps),
    sourceFile: text(4096).nullable().optional(),
  })
  .strict();

export type TimelineWire = z.infer<typeof timelineWireSchema>;
type CounterWire = z.infer<typeof counterSchema>;

/** The first few problems zod found (a hostile wire can have a million). */
function describeFirstIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 5).map((issue) => `${issue.path.length ? issue.path.join('.') + ': ' : ''}${issue.message}`);
  if (error.issues.length > 5) shown.push(`… and ${error.issues.length - 5} more problems`);
  return shown.join('; ');
}

function requireLittleEndian(): void {
  if (!LITTLE_ENDIAN) throw new TimelineWireError('this platform is big-endian, and timeline columns travel little-endian.');
}

/** A text as the wire carries it: within the length decodeTimeline allows it (a label that names a C++ frame can run past it). */
const cut = (t: string, max: number): string => (t.length > max ? `${t.slice(0, max - 1)}…` : t);
/** A frame's line as the wire carries it: a line number, or 0 for none. */
const lineOf = (line: number): number => (Number.isInteger(line) && line >= 0 && line <= 2 ** 31 ? line : 0);

/** The wire of a timeline: its columns as they are (not copied), its texts cut to the wire's lengths so that what is encoded decodes. */
export function encodeTimeline(t: Timeline): TimelineWire {
  requireLittleEndian();
  const frameIds = new Map<string, number>();
  const frames: [string, number, string][] = [];
  const frameId = (f: TimelineFrame) => {
    const key = `${f.file}\0${f.line}\0${f.name}`;
    let id = frameIds.get(key);
    if (id === undefined) {
      id = frames.length;
      frames.push([cut(f.file, 4096), lineOf(f.line), cut(f.name, 4096)]);
      frameIds.set(key, id);
    }
    return id;
  };
  const stacks = t.stacks.map((st) => ({ frames: st.frames.map(frameId), userFrame: st.userFrame }));
  const a = t.allocations;
  const s = t.spans;
  return {
    version: 1,
    source: t.source,
    title: cut(t.title, 1000),
    device: t.device,
    originUs: t.originUs,
    durationUs: t.durationUs,
    counters: t.counters.map((c): CounterWire => ({
      id: cut(c.id, 1000),
      label: cut(c.label, 1000),
      group: c.group,
      unit: c.unit,
      ...(c.pid !== undefined ? { pid: c.pid } : {}),
      ...(c.flag ? { flag: c.flag } : {}),
      ...(c.capacity !== undefined ? { capacity: c.capacity } : {}),
      count: c.time.length,
      time: c.time,
      value: c.value,
    })),
    allocations: {
      count: a.count,
      start: a.start,
      end: a.end,
      address: a.address,
      size: a.size,
      stack: a.stack,
      step: a.step,
      label: a.label,
    },
    spans: {
      count: s.count,
      start: s.start,
      end: s.end,
      lane: s.lane,
      label: s.label,
      step: s.step,
    },
    markers: t.markers.map((m) => ({ ...m, label: cut(m.label, 1000), detail: cut(m.detail, 65_536) })),
    labels: t.labels.map((l) => cut(l, 1000)),
    frames,
    stacks,
    steps: t.steps.map((step) => ({ ...step, label: cut(step.label, 1000) })),
    ...(t.sourceFile !== undefined ? { sourceFile: t.sourceFile } : {}),
  };
}

function checkRange(what: string, values: Int32Array, min: number, max: number): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < min || v > max) throw new TimelineWireError(`${what}[${i}] is ${v}, outside ${min}..${max}.`);
  }
}

/** A column holds as many values as its count says (its type is the schema's to check). */
function checkColumnLength(what: string, column: ArrayLike<number>, count: number): void {
  if (column.length !== count) throw new TimelineWireError(`${what} holds ${column.length} values where ${count} were expected.`);
}

/**
 * A wire checked without decoding its columns: the envelope, every column's length against its count, the limits on
 * labels, stack frames and counter points, and every index the envelope holds. Throws TimelineWireError; returns the
 * wire as parsed (the same strings: nothing is copied or decoded).
 */
export function checkTimelineWire(wire: unknown): TimelineWire {
  const parsed = timelineWireSchema.safeParse(wire);
  if (!parsed.success) throw new TimelineWireError(describeFirstIssues(parsed.error));
  const w = parsed.data;

  let labelChars = 0;
  for (const l of w.labels) labelChars += l.length;
  if (labelChars > WIRE_LIMITS.labelChars) throw new TimelineWireError(`its labels hold ${labelChars} characters, over ${WIRE_LIMITS.labelChars}.`);

  let stackFrames = 0;
  w.stacks.forEach((st, i) => {
    stackFrames += st.frames.length;
    if (stackFrames > WIRE_LIMITS.stackFrames) throw new TimelineWireError(`its stacks hold more than ${WIRE_LIMITS.stackFrames} frames.`);
    for (const f of st.frames) if (f >= w.frames.length) throw new TimelineWireError(`stacks[${i}] names frame ${f}, and there are ${w.frames.length}.`);
    if (st.userFrame >= st.frames.length) throw new TimelineWireError(`stacks[${i}].userFrame is ${st.userFrame}, past its ${st.frames.length} frames.`);
  });

  let points = 0;
  w.counters.forEach((c, k) => {
    points += c.count;
    if (points > WIRE_LIMITS.counterPoints) throw new TimelineWireError(`its counters hold more than ${WIRE_LIMITS.counterPoints} points.`);
    checkColumnLength(`counters[${k}].time`, c.time, c.count);
    checkColumnLength(`counters[${k}].value`, c.value, c.count);
  });

  const a = w.allocations;
  for (const name of ['start', 'end', 'address', 'size', 'stack', 'step', 'label'] as const) checkColumnLength(`allocations.${name}`, a[name], a.count);
  const sp = w.spans;
  for (const name of ['start', 'end', 'lane', 'label', 'step'] as const) checkColumnLength(`spans.${name}`, sp[name], sp.count);

  w.markers.forEach((marker, i) => {
    if (marker.allocation !== undefined && marker.allocation >= a.count)
      throw new TimelineWireError(`markers[${i}] names allocation ${marker.allocation}, and there are ${a.count}.`);
  });
  return w;
}

export function decodeTimeline(wire: unknown): Timeline {
  requireLittleEndian();
  const w = checkTimelineWire(wire);

  const frames: TimelineFrame[] = w.frames.map(([file, line, name]) => ({ file, line, name }));
  const stacks: TimelineStack[] = w.stacks.map((st) => ({ frames: st.frames.map((f) => frames[f]!), userFrame: st.userFrame }));

  const counters: TimelineCounter[] = w.counters.map((c, k) => {
    const { time, value } = c;
    for (let i = 0; i < c.count; i++) {
      if (!Number.isFinite(time[i]!) || !Number.isFinite(value[i]!)) throw new TimelineWireError(`counters[${k}] point ${i} is not a finite number.`);
      if (i > 0 && time[i]! < time[i - 1]!) throw new TimelineWireError(`counters[${k}] goes back in time at point ${i}.`);
    }
    const { count: _count, time: _t, value: _v, ...head } = c;
    return { ...head, time, value };
  });

  const wa = w.allocations;
  const n = wa.count;
  const allocations = { ...wa };
  for (let i = 0; i < n; i++) {
    const start = allocations.start[i]!;
    const end = allocations.end[i]!;
    const size = allocations.size[i]!;
    if (!Number.isFinite(start)) throw new TimelineWireError(`allocations.start[${i}] is not a finite number.`);
    if (!(end >= start)) throw new TimelineWireError(`allocations.end[${i}] is not a time at or after its start (+Infinity: alive at the end).`);
    if (!(Number.isFinite(size) && size >= 0)) throw new TimelineWireError(`allocations.size[${i}] is not a size in bytes.`);
    const address = allocations.address[i]!;
    if (!(Number.isNaN(address) || (Number.isFinite(address) && address >= 0))) throw new TimelineWireError(`allocations.address[${i}] is not an address.`);
  }
  checkRange('allocations.stack', allocations.stack, -1, stacks.length - 1);
  checkRange('allocations.step', allocations.step, -1, 2 ** 31 - 1);
  checkRange('allocations.label', allocations.label, -1, w.labels.length - 1);

  const ws = w.spans;
  const m = ws.count;
  const spans = { ...ws };
  for (let i = 0; i < m; i++) {
    if (!Number.isFinite(spans.start[i]!) || !Number.isFinite(spans.end[i]!) || spans.end[i]! < spans.start[i]!)
      throw new TimelineWireError(`spans[${i}] does not run from a finite start to a finite end after it.`);
    if (spans.lane[i]! >= SPAN_LANES.length) throw new TimelineWireError(`spans.lane[${i}] is ${spans.lane[i]}; there are ${SPAN_LANES.length} lanes.`);
  }
  checkRange('spans.label', spans.label, -1, w.labels.length - 1);
  checkRange('spans.step', spans.step, -1, 2 ** 31 - 1);

  return {
    version: 1,
    source: w.source,
    title: w.title,
    device: w.device,
    originUs: w.originUs,
    durationUs: w.durationUs,
    counters,
    allocations,
    spans,
    markers: w.markers,
    labels: w.labels,
    stacks,
    steps: w.steps,
    ...(w.sourceFile !== undefined ? { sourceFile: w.sourceFile } : {}),
  };
}
