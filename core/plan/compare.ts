import { elementReader } from './buffer-data';
import { elementSize, isFloatType, type ElementType } from './element-types';
import type { Expectation, Tolerance } from './plan-schema';

export interface Mismatch {
  index: number;
  expected: number;
  actual: number;
}

export interface Comparison {
  buffer: string;
  /** In words: "the constant 0", "iota(0, 1)", "buffer ref". */
  against: string;
  checked: number;
  mismatches: number;
  /** The first few wrong elements, in index order; the first is the one to look at. */
  first: Mismatch[];
  maxAbsError: number;
  tolerance: { abs: number; rel: number };
}

const SHOWN_MISMATCHES = 8;

/** Half precision keeps ~3 significant digits, bfloat16 ~2: exact comparison of them would only report rounding. */
export function defaultTolerance(type: ElementType): { abs: number; rel: number } {
  if (type === 'f16') return { abs: 1e-3, rel: 1e-3 };
  if (type === 'bf16') return { abs: 1e-2, rel: 1e-2 };
  if (type === 'f32') return { abs: 1e-6, rel: 1e-5 };
  if (type === 'f64') return { abs: 1e-12, rel: 1e-12 };
  return { abs: 0, rel: 0 };
}

export function describeExpectation(expect: Expectation): string {
  switch (expect.kind) {
    case 'constant':
      return `the constant ${expect.value}`;
    case 'iota':
      return `iota(start ${expect.start}, step ${expect.step})`;
    case 'buffer':
      return `buffer ${expect.buffer}`;
  }
}

/**
 * Compares a read-back buffer with what it should hold. NaN equals NaN only where both are NaN; an
 * expected value that the element type cannot represent exactly is compared after the same rounding.
 */
export function compareBuffer(
  buffer: string,
  type: ElementType,
  actualBytes: Uint8Array,
  expect: Expectation,
  reference: Uint8Array | null,
  tolerance?: Partial<Tolerance>,
): Comparison {
  const tol = { ...defaultTolerance(type), ...tolerance };
  const actual = elementReader(type, actualBytes);
  const count = Math.floor(actualBytes.byteLength / elementSize(type));
  const expected = expectedAt(type, expect, reference);
  const float = isFloatType(type);
  const first: Mismatch[] = [];
  let mismatches = 0;
  let maxAbsError = 0;
  for (let i = 0; i < count; i++) {
    const a = actual(i);
    const e = expected(i);
    let equal: boolean;
    if (Number.isNaN(a) || Number.isNaN(e)) equal = Number.isNaN(a) && Number.isNaN(e);
    else if (a === e) equal = true;
    else {
      const error = Math.abs(a - e);
      if (error > maxAbsError && Number.isFinite(error)) maxAbsError = error;
      equal = float || tol.abs > 0 || tol.rel > 0 ? error <= tol.abs + tol.rel * Math.abs(e) : false;
    }
    if (!equal) {
      mismatches++;
      if (first.length < SHOWN_MISMATCHES) first.push({ index: i, expected: e, actual: a });
    }
  }
  return { buffer, against: describeExpectation(expect), checked: count, mismatches, first, maxAbsError, tolerance: tol };
}

function expectedAt(type: ElementType, expect: Expectation, reference: Uint8Array | null): (i: number) => number {
  const round = roundTo(type);
  switch (expect.kind) {
    case 'constant': {
      const v = round(expect.value);
      return () => v;
    }
    case 'iota':
      return (i) => round(expect.start + i * expect.step);
    case 'buffer': {
      if (!reference) throw new Error(`the reference buffer ${expect.buffer} was not read back`);
      return elementReader(type, reference);
    }
  }
}

/** The value as the buffer's element type would store it, so 0.1 in an f32 buffer compares equal to 0.1f. */
function roundTo(type: ElementType): (v: number) => number {
  switch (type) {
    case 'f32':
      return Math.fround;
    case 'f64':
    case 'f16':
    case 'bf16':
      return (v) => v;
    default:
      return Math.trunc;
  }
}
