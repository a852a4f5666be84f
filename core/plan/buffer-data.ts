import { elementSize, readElement, writeElement, type ElementType } from './element-types';
import type { BufferSpec } from './plan-schema';

type NumericArray = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

/** A typed-array view for element types JavaScript has one for (little-endian hosts, as every CUDA host is). */
export function typedView(type: ElementType, bytes: Uint8Array): NumericArray | null {
  const { buffer, byteOffset, byteLength } = bytes;
  if (byteOffset % elementSize(type) !== 0) return null;
  switch (type) {
    case 'i8':
      return new Int8Array(buffer, byteOffset, byteLength);
    case 'u8':
      return new Uint8Array(buffer, byteOffset, byteLength);
    case 'i16':
      return new Int16Array(buffer, byteOffset, byteLength / 2);
    case 'u16':
      return new Uint16Array(buffer, byteOffset, byteLength / 2);
    case 'i32':
      return new Int32Array(buffer, byteOffset, byteLength / 4);
    case 'u32':
      return new Uint32Array(buffer, byteOffset, byteLength / 4);
    case 'f32':
      return new Float32Array(buffer, byteOffset, byteLength / 4);
    case 'f64':
      return new Float64Array(buffer, byteOffset, byteLength / 8);
    default:
      return null; // 64-bit integers, f16 and bf16 go element by element
  }
}

/** Host bytes for a buffer's initializer. Deterministic: the same plan gives the same bytes everywhere. */
export function initialBytes(buffer: BufferSpec): Uint8Array {
  const size = elementSize(buffer.type);
  const bytes = new Uint8Array(buffer.count * size);
  const fast = typedView(buffer.type, bytes);
  const init = buffer.init;
  if (!init) throw new Error(`buffer "${buffer.name}" has no initializer: it is never uploaded`);
  if (init.kind === 'file') throw new Error(`buffer "${buffer.name}" is read from a file by the runner, not generated`);
  if (fast && init.kind !== 'random') {
    if (init.kind === 'constant') fast.fill(init.value);
    else if (init.kind === 'iota') for (let i = 0; i < buffer.count; i++) fast[i] = init.start + i * init.step;
    return bytes;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (init.kind) {
    case 'zeros':
      return bytes;
    case 'constant':
      for (let i = 0; i < buffer.count; i++) writeElement(view, i * size, buffer.type, init.value);
      return bytes;
    case 'iota':
      for (let i = 0; i < buffer.count; i++) writeElement(view, i * size, buffer.type, init.start + i * init.step);
      return bytes;
    case 'random': {
      const next = mulberry32(init.seed);
      const span = init.max - init.min;
      const integer = !buffer.type.startsWith('f') && buffer.type !== 'bf16';
      for (let i = 0; i < buffer.count; i++) {
        const r = init.min + next() * span;
        writeElement(view, i * size, buffer.type, integer ? Math.floor(r) : r);
      }
      return bytes;
    }
  }
}

/** Small, fast, seedable PRNG (Mulberry32): uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface BufferSummary {
  name: string;
  type: ElementType;
  count: number;
  min: number | null;
  max: number | null;
  mean: number | null;
  nanCount: number;
  infCount: number;
  head: number[];
  tail: number[];
  /** Every element, when the buffer is small enough to show whole. */
  values: number[] | null;
}

export const PREVIEW_ELEMENTS = 16;
export const WHOLE_BUFFER_LIMIT = 1024;

/** Element i of a buffer's bytes, as a number, by the fastest route the type allows. */
export function elementReader(type: ElementType, bytes: Uint8Array): (index: number) => number {
  const size = elementSize(type);
  const whole = bytes.byteLength - (bytes.byteLength % size);
  const fast = typedView(type, whole === bytes.byteLength ? bytes : bytes.subarray(0, whole));
  if (fast) return (i) => fast[i]!;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return (i) => readElement(view, i * size, type);
}

/** Elements [offset, offset + count) of a buffer, clipped to its length: one page of the results table. */
export function readPage(type: ElementType, bytes: Uint8Array, offset: number, count: number): number[] {
  const at = elementReader(type, bytes);
  const length = Math.floor(bytes.byteLength / elementSize(type));
  const out: number[] = [];
  for (let i = Math.max(0, offset); i < Math.min(length, offset + count); i++) out.push(at(i));
  return out;
}

interface Stats {
  min: number;
  max: number;
  sum: number;
  finite: number;
  nanCount: number;
  infCount: number;
}

/**
 * Typed-array loops, one per kind, so each stays monomorphic: a read-back of millions of elements is
 * summarised on every run. A finite sum means no NaN or Inf was met, so the common case needs no
 * per-element test; anything else takes the careful loop. The float loop keeps four running sums and two
 * minima and maxima, so no addition waits for the one before it (the H200 host's profile of a re-run put the
 * one-lane loop at a sixth of the runner's time). Its sum rounds differently in the last bits, and f64 values near
 * 1e308 whose one-lane running sum overflowed may now sum to a finite number (a truer mean).
 */
function floatStats(values: Float32Array | Float64Array): Stats {
  const n = values.length;
  let min0 = Infinity;
  let min1 = Infinity;
  let max0 = -Infinity;
  let max1 = -Infinity;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const a = values[i]!;
    const b = values[i + 1]!;
    const c = values[i + 2]!;
    const d = values[i + 3]!;
    s0 += a;
    s1 += b;
    s2 += c;
    s3 += d;
    // On a tie the earlier element is kept, as the one-lane loop did (0 and -0 compare equal).
    const lowAB = b < a ? b : a;
    const highAB = b > a ? b : a;
    const lowCD = d < c ? d : c;
    const highCD = d > c ? d : c;
    min0 = lowAB < min0 ? lowAB : min0;
    min1 = lowCD < min1 ? lowCD : min1;
    max0 = highAB > max0 ? highAB : max0;
    max1 = highCD > max1 ? highCD : max1;
  }
  let sum = s0 + s1 + (s2 + s3);
  let min = min1 < min0 ? min1 : min0;
  let max = max1 > max0 ? max1 : max0;
  for (; i < n; i++) {
    const v = values[i]!;
    min = v < min ? v : min;
    max = v > max ? v : max;
    sum += v;
  }
  if (Number.isFinite(sum)) return { min, max, sum, finite: n, nanCount: 0, infCount: 0 };
  return elementStats(values.length, (i) => values[i]!);
}

function integerStats(values: Exclude<NumericArray, Float32Array | Float64Array>): Stats {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
  }
  return { min, max, sum, finite: values.length, nanCount: 0, infCount: 0 };
}

function elementStats(count: number, at: (index: number) => number): Stats {
  const stats: Stats = { min: Infinity, max: -Infinity, sum: 0, finite: 0, nanCount: 0, infCount: 0 };
  for (let i = 0; i < count; i++) {
    const v = at(i);
    if (Number.isNaN(v)) stats.nanCount++;
    else if (!Number.isFinite(v)) stats.infCount++;
    else {
      if (v < stats.min) stats.min = v;
      if (v > stats.max) stats.max = v;
      stats.sum += v;
      stats.finite++;
    }
  }
  return stats;
}

/**
 * floatStats' minimum, maximum and sum by another route (the runner's native loop, native/src/stats.cc: the same
 * four lanes, so the same bits), for f32 (isF64 false) or f64 elements; a sum that is not finite sends the caller to
 * its careful loop.
 */
export type FloatSums = (bytes: Uint8Array, isF64: boolean) => { min: number; max: number; sum: number };

function floatStatsBy(values: Float32Array | Float64Array, sums: FloatSums): Stats {
  const { min, max, sum } = sums(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), values instanceof Float64Array);
  if (Number.isFinite(sum)) return { min, max, sum, finite: values.length, nanCount: 0, infCount: 0 };
  return elementStats(values.length, (i) => values[i]!);
}

/** Statistics and a preview of a read-back buffer. NaN and Inf are counted, not folded into min/max/mean. */
export function summarizeBuffer(name: string, type: ElementType, bytes: Uint8Array, floatSums?: FloatSums): BufferSummary {
  const count = Math.floor(bytes.byteLength / elementSize(type));
  const whole = count * elementSize(type);
  const fast = typedView(type, whole === bytes.byteLength ? bytes : bytes.subarray(0, whole));
  const { min, max, sum, finite, nanCount, infCount } =
    fast instanceof Float32Array || fast instanceof Float64Array
      ? floatSums
        ? floatStatsBy(fast, floatSums)
        : floatStats(fast)
      : fast
        ? integerStats(fast)
        : elementStats(count, elementReader(type, bytes));
  const read = (from: number, to: number) => readPage(type, bytes, from, to - from);
  return {
    name,
    type,
    count,
    min: finite ? min : null,
    max: finite ? max : null,
    mean: finite ? sum / finite : null,
    nanCount,
    infCount,
    head: read(0, PREVIEW_ELEMENTS),
    tail: count > PREVIEW_ELEMENTS ? read(Math.max(PREVIEW_ELEMENTS, count - PREVIEW_ELEMENTS), count) : [],
    values: count <= WHOLE_BUFFER_LIMIT ? read(0, count) : null,
  };
}
