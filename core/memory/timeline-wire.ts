/**
 * A Timeline as JSON, for the serve WebSocket and Electron IPC: its typed columns as base64 strings (a million
 * allocations are ~60 MB of text rather than ~200 MB of number arrays), frames written once and referred to by
 * index, so stacks keep sharing them across the wire.
 *
 * checkTimelineWire checks a wire without decoding it: the envelope with zod (types, string lengths, list lengths),
 * every column's text length against its count, and every index the envelope itself holds (stacks, markers). The host
 * checks a reader's answer so, and passes it on as it is. decodeTimeline (the renderer's) checks the same first, then
 * decodes the columns and checks what only they hold: every index against what it indexes, every number that must be
 * finite. Either throws TimelineWireError saying where and what.
 */
import { z } from 'zod';

import { Base64Error, base64Length, base64ToFloat64, base64ToInt32, base64ToUint8, LITTLE_ENDIAN, typedToBase64 } from './base64';
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
const b64 = z.string().max(Math.ceil((WIRE_LIMITS.allocations * 8) / 3) * 4 + 4);

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
    time: z.string().max(Math.ceil((WIRE_LIMITS.counterPoints * 8) / 3) * 4 + 4),
    value: z.string().max(Math.ceil((WIRE_LIMITS.counterPoints * 8) / 3) * 4 + 4),
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
    allocations: z.object({ count: count(WIRE_LIMITS.allocations), start: b64, end: b64, address: b64, size: b64, stack: b64, step: b64, label: b64 }).strict(),
    spans: z.object({ count: count(WIRE_LIMITS.spans), start: b64, end: b64, lane: b64, label: b64, step: b64 }).strict(),
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

export interface EncodeOptions {
  /** A native base64 encoder, where there is one (the host passes Buffer's, several times faster); the result is the same text. */
  base64?: (bytes: Uint8Array) => string;
}

/** A text as the wire carries it: within the length decodeTimeline allows it (a label that names a C++ frame can run past it). */
const cut = (t: string, max: number): string => (t.length > max ? `${t.slice(0, max - 1)}…` : t);
/** A frame's line as the wire carries it: a line number, or 0 for none. */
const lineOf = (line: number): number => (Number.isInteger(line) && line >= 0 && line <= 2 ** 31 ? line : 0);

/** The wire of a timeline; its texts cut to the wire's lengths, so that what is encoded decodes. */
export function encodeTimeline(t: Timeline, options: EncodeOptions = {}): TimelineWire {
  requireLittleEndian();
  const base64Of = (column: Float64Array | Int32Array | Uint8Array) => typedToBase64(column, options.base64);
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
      time: base64Of(c.time),
      value: base64Of(c.value),
    })),
    allocations: {
      count: a.count,
      start: base64Of(a.start),
      end: base64Of(a.end),
      address: base64Of(a.address),
      size: base64Of(a.size),
      stack: base64Of(a.stack),
      step: base64Of(a.step),
      label: base64Of(a.label),
    },
    spans: {
      count: s.count,
      start: base64Of(s.start),
      end: base64Of(s.end),
      lane: base64Of(s.lane),
      label: base64Of(s.label),
      step: base64Of(s.step),
    },
    markers: t.markers.map((m) => ({ ...m, label: cut(m.label, 1000), detail: cut(m.detail, 65_536) })),
    labels: t.labels.map((l) => cut(l, 1000)),
    frames,
    stacks,
    steps: t.steps.map((step) => ({ ...step, label: cut(step.label, 1000) })),
    ...(t.sourceFile !== undefined ? { sourceFile: t.sourceFile } : {}),
  };
}

function column<T>(what: string, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof Base64Error) throw new TimelineWireError(`${what} ${error.message}.`);
    throw error;
  }
}

function checkRange(what: string, values: Int32Array, min: number, max: number): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < min || v > max) throw new TimelineWireError(`${what}[${i}] is ${v}, outside ${min}..${max}.`);
  }
}

/** A column's text is as long as its count's bytes in base64; its characters are the decoder's to check. */
function checkColumnLength(what: string, text: string, bytes: number): void {
  const expected = base64Length(bytes);
  if (text.length !== expected) throw new TimelineWireError(`${what} holds ${text.length} base64 characters where ${expected} were expected (${bytes} bytes).`);
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
    checkColumnLength(`counters[${k}].time`, c.time, c.count * 8);
    checkColumnLength(`counters[${k}].value`, c.value, c.count * 8);
  });

  const a = w.allocations;
  for (const name of ['start', 'end', 'address', 'size'] as const) checkColumnLength(`allocations.${name}`, a[name], a.count * 8);
  for (const name of ['stack', 'step', 'label'] as const) checkColumnLength(`allocations.${name}`, a[name], a.count * 4);
  const sp = w.spans;
  for (const name of ['start', 'end'] as const) checkColumnLength(`spans.${name}`, sp[name], sp.count * 8);
  checkColumnLength('spans.lane', sp.lane, sp.count);
  for (const name of ['label', 'step'] as const) checkColumnLength(`spans.${name}`, sp[name], sp.count * 4);

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
    const time = column(`counters[${k}].time`, () => base64ToFloat64(c.time, c.count));
    const value = column(`counters[${k}].value`, () => base64ToFloat64(c.value, c.count));
    for (let i = 0; i < c.count; i++) {
      if (!Number.isFinite(time[i]!) || !Number.isFinite(value[i]!)) throw new TimelineWireError(`counters[${k}] point ${i} is not a finite number.`);
      if (i > 0 && time[i]! < time[i - 1]!) throw new TimelineWireError(`counters[${k}] goes back in time at point ${i}.`);
    }
    const { count: _count, time: _t, value: _v, ...head } = c;
    return { ...head, time, value };
  });

  const wa = w.allocations;
  const n = wa.count;
  const allocations = {
    count: n,
    start: column('allocations.start', () => base64ToFloat64(wa.start, n)),
    end: column('allocations.end', () => base64ToFloat64(wa.end, n)),
    address: column('allocations.address', () => base64ToFloat64(wa.address, n)),
    size: column('allocations.size', () => base64ToFloat64(wa.size, n)),
    stack: column('allocations.stack', () => base64ToInt32(wa.stack, n)),
    step: column('allocations.step', () => base64ToInt32(wa.step, n)),
    label: column('allocations.label', () => base64ToInt32(wa.label, n)),
  };
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
  const spans = {
    count: m,
    start: column('spans.start', () => base64ToFloat64(ws.start, m)),
    end: column('spans.end', () => base64ToFloat64(ws.end, m)),
    lane: column('spans.lane', () => base64ToUint8(ws.lane, m)),
    label: column('spans.label', () => base64ToInt32(ws.label, m)),
    step: column('spans.step', () => base64ToInt32(ws.step, m)),
  };
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
