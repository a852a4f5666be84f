/**
 * Mutations for the readers' fuzz: byte flips, inserts and deletes, a chunk duplicated, the input cut, two inputs
 * spliced, a number or a length field replaced by an extreme value, a structure repeated. Every choice comes from the
 * case's own seeded generator, so a case is made again from (seed, reader, index) alone.
 */
import { mulberry32 } from '../../core/plan/buffer-data';

export type Rng = () => number;

/** The generator for one case: the run's seed, the reader and the case's index, mixed. */
export function caseRng(seed: number, reader: string, index: number): Rng {
  let h = seed >>> 0;
  for (const c of `${reader}:${index}`) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return mulberry32(h);
}

export const below = (rng: Rng, n: number): number => Math.floor(rng() * n);
export const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[below(rng, xs.length)]!;

/** No mutation makes an input larger than this: the fuzz is about shapes, the hostile-file suite about sizes. */
export const MAX_MUTANT_BYTES = 4 * 2 ** 20;

const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** Where a field of `width` bytes fits, near `around` when given. */
const spot = (rng: Rng, b: Uint8Array, width: number, around?: number) =>
  around !== undefined ? Math.max(0, Math.min(b.length - width, around)) : below(rng, Math.max(1, b.length - width + 1));

const INTERESTING_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x22, 0x5c, 0x3c, 0x3e, 0x5b, 0x7b, 0x2e, 0x28, 0x94, 0x68];

function flip(rng: Rng, b: Uint8Array): Uint8Array {
  const out = b.slice();
  for (let k = 1 + below(rng, 8); k > 0 && out.length; k--) {
    const at = below(rng, out.length);
    out[at] = rng() < 0.5 ? out[at]! ^ (1 << below(rng, 8)) : rng() < 0.5 ? pick(rng, INTERESTING_BYTES) : below(rng, 256);
  }
  return out;
}

function insert(rng: Rng, b: Uint8Array): Uint8Array {
  const bytes = Uint8Array.from({ length: 1 + below(rng, 16) }, () => (rng() < 0.5 ? pick(rng, INTERESTING_BYTES) : below(rng, 256)));
  const at = below(rng, b.length + 1);
  return concat(b.subarray(0, at), bytes, b.subarray(at));
}

function remove(rng: Rng, b: Uint8Array): Uint8Array {
  const at = below(rng, b.length + 1);
  return concat(b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + below(rng, rng() < 0.8 ? 16 : 1024))));
}

function duplicate(rng: Rng, b: Uint8Array): Uint8Array {
  const from = below(rng, b.length + 1);
  const chunk = b.subarray(from, from + 1 + below(rng, 1024));
  const at = below(rng, b.length + 1);
  return concat(b.subarray(0, at), chunk, b.subarray(at));
}

const truncate = (rng: Rng, b: Uint8Array): Uint8Array => b.slice(0, below(rng, b.length + 1));

/** The start of one input and the end of another, each cut at a random place. */
export function splice(rng: Rng, a: Uint8Array, other: Uint8Array): Uint8Array {
  return concat(a.subarray(0, below(rng, a.length + 1)), other.subarray(below(rng, other.length + 1)));
}

const EXTREME_TEXT = [
  '0',
  '-1',
  '-0',
  '2147483647',
  '2147483648',
  '4294967295',
  '4294967296',
  '9007199254740993',
  '1e308',
  '-1e308',
  '1e-400',
  '99999999999999999999999999',
  '0.5',
  'NaN',
  'Infinity',
];

/** Text formats: a run of digits (a number, a length, a line) replaced by an extreme one. */
function extremeText(rng: Rng, b: Uint8Array): Uint8Array {
  const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
  let at = below(rng, b.length);
  let tries = 64;
  while (tries-- > 0 && !isDigit(b[at])) at = below(rng, b.length);
  if (!isDigit(b[at])) return insert(rng, b);
  let start = at;
  let end = at;
  while (isDigit(b[start - 1]) || b[start - 1] === 0x2d) start--;
  while (isDigit(b[end]) || b[end] === 0x2e || b[end] === 0x65) end++;
  return concat(b.subarray(0, start), new TextEncoder().encode(pick(rng, EXTREME_TEXT)), b.subarray(end));
}

const EXTREME_INTS = [
  0n,
  1n,
  0x7fn,
  0x80n,
  0xffn,
  0x7fffn,
  0xffffn,
  0x7fffffffn,
  0x80000000n,
  0xffffffffn,
  0x100000000n,
  0x1fffffffffffffn,
  0xffffffffffffffffn,
];

/** Binary formats: a little-endian field (1, 2, 4 or 8 bytes) set to an extreme value, at `around` or anywhere. */
export function extremeField(rng: Rng, b: Uint8Array, around?: number, width?: number): Uint8Array {
  const w = width ?? pick(rng, [1, 2, 4, 4, 8]);
  if (b.length < w) return insert(rng, b);
  const out = b.slice();
  const at = spot(rng, out, w, around);
  let v = pick(rng, EXTREME_INTS);
  for (let i = 0; i < w; i++, v >>= 8n) out[at + i] = Number(v & 0xffn);
  return out;
}

/** A span repeated up to a thousand times: `span` picks it (a record, an object, a run of opcodes), else a random one. */
export function repeatStructure(rng: Rng, b: Uint8Array, span?: (rng: Rng, b: Uint8Array) => [number, number] | null): Uint8Array {
  const [from, to] = span?.(rng, b) ?? [below(rng, b.length + 1), 0];
  const end = to > from ? to : Math.min(b.length, from + 1 + below(rng, 256));
  const unit = b.subarray(from, end);
  if (!unit.length) return b;
  const times = Math.min(1 + below(rng, rng() < 0.7 ? 16 : 1000), Math.floor((MAX_MUTANT_BYTES - b.length) / unit.length));
  if (times < 1) return b;
  const repeated = new Uint8Array(unit.length * times);
  for (let i = 0; i < times; i++) repeated.set(unit, i * unit.length);
  return concat(b.subarray(0, end), repeated, b.subarray(end));
}

/** A JSON or XML-ish structure: from an opening bracket to its match (or an element to its closing tag). */
export function bracketSpan(rng: Rng, b: Uint8Array): [number, number] | null {
  const opens = [0x7b, 0x5b];
  let at = below(rng, b.length);
  for (let tries = 64; tries > 0 && !opens.includes(b[at]!); tries--) at = below(rng, b.length);
  if (!opens.includes(b[at]!)) return null;
  let depth = 0;
  for (let i = at; i < b.length; i++) {
    const c = b[i]!;
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
    if (depth === 0) return [at, i + 1];
  }
  return null;
}

export type Mutator = (rng: Rng, b: Uint8Array, others: readonly Uint8Array[]) => Uint8Array;

/** The generic mutations; a reader adds its own (length fields where its format has them, structures it knows). */
export const GENERIC: Mutator[] = [
  flip,
  flip,
  insert,
  remove,
  duplicate,
  truncate,
  (rng, b, others) => splice(rng, b, pick(rng, others)),
  (rng, b) => repeatStructure(rng, b),
];
export const TEXT: Mutator[] = [...GENERIC, extremeText, extremeText, (rng, b) => repeatStructure(rng, b, bracketSpan)];

/** One to four mutations of a seed input, each picked from `mutators`; never past MAX_MUTANT_BYTES. */
export function mutate(rng: Rng, input: Uint8Array, others: readonly Uint8Array[], mutators: readonly Mutator[]): Uint8Array {
  let b = input;
  for (let k = 1 + below(rng, rng() < 0.7 ? 2 : 4); k > 0; k--) {
    const next = pick(rng, mutators)(rng, b, others);
    b = next.length > MAX_MUTANT_BYTES ? next.subarray(0, MAX_MUTANT_BYTES) : next;
  }
  return b;
}
