/**
 * A whitelist unpickler for data pickles (PyTorch memory snapshots): protocols 2–5, only the opcodes that
 * build data — None, booleans, numbers, strings, bytes, lists, tuples, dicts, sets, the memo. Every opcode
 * that could name or call code (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, EXT*, PERSID,
 * out-of-band buffers) is refused, so nothing in a pickle ever runs. Memo references are shared, not
 * copied; integers beyond 2^53 are BigInt; dicts are Maps.
 *
 * A hostile input is held to bounded time and memory before the work is done, not after: what lives at once
 * (the stack, the memo, one container) is capped, every container level counts against the depth whatever
 * opcode built it, integers are refused by their length before they are decoded, and every memo reference
 * (and DUP) is charged the bytes its value stands for, so the value's expanded size — what a consumer that
 * copies per reference (JSON, structured clone of strings) would pay — is bounded by the file's size.
 */
import { formatBytes, thousands } from '../format';

export type PickleValue =
  null | boolean | number | bigint | string | Uint8Array | PickleValue[] | PickleTuple | Map<PickleValue, PickleValue> | Set<PickleValue>;

/** A Python tuple: an array that says it was one. */
export class PickleTuple extends Array<PickleValue> {}

export interface UnpickleLimits {
  maxBytes: number;
  /** Nesting: of the value (every container level, whatever opcode built it) and of marks open at once. */
  maxDepth: number;
  /** Values created in all. */
  maxItems: number;
  /** Values on the stack at once. */
  maxStack: number;
  /** Memo entries (and one past the highest memo index) ... */
  maxMemo: number;
  /** ... and at most one per this many bytes of the file, past the first 65,536. */
  memoBytes: number;
  /** Elements of one list, dict or set. */
  maxLength: number;
  /** Bytes of one LONG1/LONG4 integer. */
  maxIntegerBytes: number;
  /** Memo references may stand for this many bytes (expanded) per byte of the file ... */
  expansionPerByte: number;
  /** ... and at least this many in all. */
  minExpansion: number;
}

export const DEFAULT_UNPICKLE_LIMITS: UnpickleLimits = {
  // The snapshot reader's file cap (SNAPSHOT_MAX_BYTES).
  maxBytes: 1024 ** 3,
  // A snapshot nests 7 levels (snapshot, traces, device, entry, frames, frame, value); recursive walkers of the
  // value (our own, JSON, structured clone) overflow the call stack in the thousands.
  maxDepth: 256,
  // The benches' 1,000,000-entry snapshot makes 17 million; 200 million is about what the reader's 8 GB heap holds.
  maxItems: 200_000_000,
  // CPython's pickler writes at most 1,000 items (2,000 for a dict) per mark, so a snapshot's stack holds a few
  // thousand values; one array of 200 million is a fatal "invalid size" in V8, not an exception.
  maxStack: 1_000_000,
  // A snapshot memoizes its dicts, lists and strings: one entry per 33 to 58 bytes of the recordings here and of the
  // benches' snapshot, about one per trace entry. A memo of nothing else (NONE MEMOIZE POP: 3 bytes an entry) is
  // held to about the file's size.
  maxMemo: 16_000_000,
  memoBytes: 16,
  // A Map or Set past 2^24 entries throws in V8.
  maxLength: 16_000_000,
  // Addresses, sizes and times are 64-bit (Python writes 2^64 - 1 in 9 bytes); decoding is quadratic in the length.
  maxIntegerBytes: 16,
  // Frames are written once and referred to by 2- or 5-byte memo references: the H100 recordings here expand 56
  // times, the benches' snapshot 62, and deep C++ stacks with long names may several times that.
  expansionPerByte: 1024,
  minExpansion: 64 * 1024 ** 2,
};

export class UnpickleError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'UnpickleError';
  }
}

const CODE_OPCODES: Record<number, string> = {
  0x63: 'GLOBAL',
  0x93: 'STACK_GLOBAL',
  0x52: 'REDUCE',
  0x62: 'BUILD',
  0x69: 'INST',
  0x6f: 'OBJ',
  0x81: 'NEWOBJ',
  0x92: 'NEWOBJ_EX',
  0x82: 'EXT1',
  0x83: 'EXT2',
  0x84: 'EXT4',
  0x50: 'PERSID',
  0x51: 'BINPERSID',
  0x97: 'NEXT_BUFFER',
  0x98: 'READONLY_BUFFER',
};

// TextDecoder is in every JavaScript runtime the workbench runs in (Node, browsers, Electron), but in no
// type library core/ compiles against (no DOM, no Node): declared here, used for nothing else.
declare const TextDecoder: new (label: string, options?: { fatal?: boolean }) => { decode(input: Uint8Array): string };

const text = new TextDecoder('utf-8', { fatal: false });
const latin1 = new TextDecoder('latin1');

/** What one value stands for on its own, in bytes: a slot, and the characters or bytes it carries. */
const SLOT = 8;
const sizeOf = (v: PickleValue): number => (typeof v === 'string' ? SLOT + v.length : v instanceof Uint8Array ? SLOT + v.byteLength : SLOT);
/** Memo entries any file may make, however small. */
const MIN_MEMO = 65_536;
/** Text integers (INT, LONG), floats and memo indices: 39 digits hold 16 bytes, with room for a sign and an L. */
const MAX_NUMBER_LINE = 64;

/**
 * A text number as this reader takes it, at most MAX_NUMBER_LINE long: an integer (INT, LONG, PUT, GET: digits, a
 * sign, LONG's trailing L) or a float (FLOAT: a number, or inf or nan whole). The redaction of a snapshot copies only
 * such lines (core/memory/redact-pickle.ts): a line that is anything else could carry text past it.
 */
export function isPickleNumberText(kind: 'integer' | 'float', line: string): boolean {
  if (line.length > MAX_NUMBER_LINE) return false;
  const t = line.trim();
  if (kind === 'integer') return /^[-+]?\d+$/.test(t.replace(/L$/, ''));
  return Number.isFinite(Number(t)) || /^[-+]?(inf|nan)$/i.test(t);
}

const integer = (big: bigint): number | bigint => (big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big);

function littleEndianSigned(raw: Uint8Array): bigint {
  if (raw.length === 0) return 0n;
  let v = 0n;
  for (let i = raw.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(raw[i]!);
  if (raw[raw.length - 1]! & 0x80) v -= 1n << BigInt(raw.length * 8);
  return v;
}

const isList = (v: PickleValue): v is PickleValue[] => Array.isArray(v) && !(v instanceof PickleTuple);

/** Parses a data pickle; throws UnpickleError, with the byte offset, for anything else. */
export function unpickle(bytes: Uint8Array, limits: Partial<UnpickleLimits> = {}): PickleValue {
  const l = { ...DEFAULT_UNPICKLE_LIMITS, ...limits };
  if (bytes.byteLength > l.maxBytes)
    throw new UnpickleError(
      `The pickle is ${thousands(bytes.byteLength)} bytes, over the limit of ${thousands(l.maxBytes)}. It was refused and nothing was run.`,
      0,
    );
  return new Unpickler(bytes, l).run();
}

class Unpickler {
  pos = 0;
  private items = 0;
  private charged = 0;
  private readonly budget: number;
  private readonly view: DataView;
  readonly stack: PickleValue[] = [];
  // Per stack value: the bytes it stands for expanded, how deep it nests, its memo index (-1: none), and whether it
  // was referred to again (memo, DUP) — after which nothing may be added to it, or its size would be out of date.
  readonly sizes: number[] = [];
  readonly depths: number[] = [];
  private readonly memoOf: number[] = [];
  readonly shared: boolean[] = [];
  readonly marks: number[] = [];
  private readonly memo: PickleValue[] = [];
  // Per memo entry, one number (16 million of them may live at once): while its value is on the stack, -1 - its
  // position; once it has left, size × levels + depth (sizes stay under the expansion budget, far below 2^53 / levels).
  private readonly memoMeta: number[] = [];
  private readonly levels: number;
  private readonly memoLimit: number;
  memoCount = 0;
  /** What the last pop, popValues or popMark took: its size (summed) and depth (the deepest). */
  size = 0;
  depth = 0;

  constructor(
    readonly bytes: Uint8Array,
    readonly limits: UnpickleLimits,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.budget = Math.max(limits.minExpansion, limits.expansionPerByte * bytes.byteLength);
    this.levels = limits.maxDepth + 1;
    this.memoLimit = Math.min(limits.maxMemo, Math.max(MIN_MEMO, Math.floor(bytes.byteLength / limits.memoBytes)));
  }

  run(): PickleValue {
    if (this.bytes[0] !== 0x80) this.fail('This is not a pickle of protocol 2 or later (it does not start with PROTO)');
    for (;;) {
      const at = this.pos;
      const op = this.u8();
      if (op === 0x2e) {
        // STOP
        if (this.stack.length !== 1 || this.marks.length) this.fail('The pickle stops with other than one value on its stack');
        return this.stack[0]!;
      }
      const handler = OPS[op];
      if (handler) {
        handler(this);
        continue;
      }
      this.pos = at;
      const code = CODE_OPCODES[op];
      if (code) this.fail(`The pickle asks to run code (${code}): a memory snapshot holds only data`);
      this.fail(`Opcode 0x${op.toString(16).padStart(2, '0')} is not one this reader accepts`);
    }
  }

  fail(message: string): never {
    throw new UnpickleError(`${message} (at byte ${this.pos}). It was refused and nothing was run.`, this.pos);
  }

  // ------------------------------------------------------------------------------------------ reading bytes

  need(n: number): void {
    const left = this.bytes.byteLength - this.pos;
    if (n < 0 || n > left) this.fail(`The pickle ends early: ${thousands(n)} bytes were announced where ${thousands(left)} remain`);
  }
  u8(): number {
    this.need(1);
    return this.bytes[this.pos++]!;
  }
  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  i32(): number {
    this.need(4);
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }
  u64(): number {
    this.need(8);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`A length of ${v} bytes was announced, past 2^53`);
    return Number(v);
  }
  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, false);
    this.pos += 8;
    return v;
  }
  /** `n` bytes, checked against what is left before anything is made of them. */
  take(n: number): Uint8Array {
    this.need(n);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  /** A text line; one longer than `max` (looked for no further) is refused before it is decoded. */
  line(max = Infinity, what = 'A text line'): string {
    const end = this.bytes.subarray(this.pos, Math.min(this.bytes.byteLength, this.pos + max + 1)).indexOf(0x0a);
    if (end < 0 && this.pos + max < this.bytes.byteLength) this.fail(`${what} runs past ${max} characters; a snapshot's are shorter`);
    if (end < 0) this.fail('The pickle ends inside a text line');
    const out = latin1.decode(this.bytes.subarray(this.pos, this.pos + end));
    this.pos += end + 1;
    return out;
  }
  /** A text integer (INT, LONG, a memo index): its digits, refused by their length before they are parsed. */
  digits(what: string): string {
    const line = this.line(MAX_NUMBER_LINE, what);
    const t = line.trim().replace(/L$/, '');
    if (!isPickleNumberText('integer', line)) this.fail(`${what} holds "${t.slice(0, 20)}", not an integer`);
    return t;
  }
  /** LONG1/LONG4: refused by the length they announce, before any byte is decoded. */
  long(n: number, what: string): void {
    if (n > this.limits.maxIntegerBytes)
      this.fail(`${what} holds an integer of ${thousands(n)} bytes; a snapshot's integers fit in ${this.limits.maxIntegerBytes}`);
    this.scalar(integer(littleEndianSigned(this.take(n))));
  }

  // ------------------------------------------------------------------------------------------ the stack

  push(v: PickleValue, size: number, depth: number, shared: boolean): void {
    if (++this.items > this.limits.maxItems) this.fail(`The pickle holds more than ${thousands(this.limits.maxItems)} values`);
    if (this.stack.length >= this.limits.maxStack)
      this.fail(`The pickle piles up more than ${thousands(this.limits.maxStack)} values at once (a snapshot's pickler writes 1,000 at a time)`);
    this.stack.push(v);
    this.sizes.push(size);
    this.depths.push(depth);
    this.memoOf.push(-1);
    this.shared.push(shared);
  }
  scalar(v: PickleValue): void {
    this.push(v, sizeOf(v), 0, false);
  }
  /** A container built from what the last pop took: one level deeper than the deepest of it. */
  built(v: PickleValue): void {
    this.push(v, SLOT + this.size, this.nested(this.depth + 1), false);
  }
  nested(depth: number): number {
    if (depth > this.limits.maxDepth) this.fail(`The pickle nests deeper than ${this.limits.maxDepth} levels (a snapshot nests 7)`);
    return depth;
  }
  /** Whether the innermost mark has nothing above it. */
  atMark(): boolean {
    const n = this.marks.length;
    return n > 0 && this.marks[n - 1] === this.stack.length;
  }
  /** The position of the top value; a mark or an empty stack is refused. */
  topAt(what = 'The pickle expects a value'): number {
    const k = this.stack.length - 1;
    if (k < 0 || this.atMark()) this.fail(`${what} where its stack has none`);
    return k;
  }
  pop(): PickleValue {
    const k = this.topAt('The pickle takes a value');
    this.release(k);
    this.size = this.sizes.pop()!;
    this.depth = this.depths.pop()!;
    this.memoOf.pop();
    this.shared.pop();
    return this.stack.pop()!;
  }
  popValues(n: number): PickleValue[] {
    const out = new Array<PickleValue>(n);
    let size = 0;
    let depth = 0;
    for (let i = n - 1; i >= 0; i--) {
      out[i] = this.pop();
      size += this.size;
      depth = Math.max(depth, this.depth);
    }
    this.size = size;
    this.depth = depth;
    return out;
  }
  popMark(): PickleValue[] {
    const at = this.marks.pop();
    if (at === undefined) this.fail('The pickle closes a mark it never opened');
    let size = 0;
    let depth = 0;
    for (let k = at; k < this.stack.length; k++) {
      this.release(k);
      size += this.sizes[k]!;
      depth = Math.max(depth, this.depths[k]!);
    }
    this.size = size;
    this.depth = depth;
    this.sizes.length = this.depths.length = this.memoOf.length = this.shared.length = at;
    return this.stack.splice(at);
  }
  /** The value at `k` leaves the stack: a memo entry of it keeps its final size and depth. */
  private release(k: number): void {
    const m = this.memoOf[k]!;
    if (m < 0) return;
    this.memoMeta[m] = this.sizes[k]! * this.levels + this.depths[k]!;
  }

  // ------------------------------------------------------------------------------------------ containers

  /** The container on top, about to hold `length` elements (the last pop's): never one referred to again. */
  grow<T extends PickleValue>(is: (v: PickleValue) => v is T, kind: string, length: (c: T) => number): T {
    const k = this.topAt(`The pickle adds to a ${kind}`);
    const c = this.stack[k]!;
    if (!is(c)) this.fail(`The pickle adds to something that is not a ${kind}`);
    if (this.shared[k]) this.fail(`The pickle adds to a ${kind} it has already referred to again: a snapshot never does`);
    const n = length(c);
    if (n > this.limits.maxLength) this.fail(`A ${kind} of the pickle holds more than ${thousands(this.limits.maxLength)} elements`);
    this.sizes[k] = this.sizes[k]! + this.size;
    this.depths[k] = Math.max(this.depths[k]!, this.nested(this.depth + 1));
    return c;
  }
  pairs(values: PickleValue[], what: string): PickleValue[] {
    if (values.length % 2) this.fail(`${what} has a key without a value`);
    return values;
  }

  // ------------------------------------------------------------------------------------------ the memo

  memoize(index: number): void {
    const k = this.topAt('The pickle stores in its memo');
    if (!Number.isInteger(index) || index < 0 || index >= this.memoLimit)
      this.fail(
        `The pickle stores memo entry ${index}, past the limit of ${thousands(this.memoLimit)} entries ` +
          `(one per ${this.limits.memoBytes} bytes of its file, at most ${thousands(this.limits.maxMemo)})`,
      );
    if (this.memo[index] !== undefined) this.fail(`The pickle stores memo entry ${index} twice`);
    if (this.memoOf[k]! >= 0) this.fail(`The pickle stores one value in the memo twice (entries ${this.memoOf[k]} and ${index})`);
    this.memo[index] = this.stack[k]!;
    this.memoMeta[index] = -1 - k;
    this.memoOf[k] = index;
    this.memoCount++;
  }
  get(index: number): void {
    const v = this.memo[index];
    if (v === undefined) this.fail(`The pickle refers to memo entry ${index}, which it never stored`);
    const meta = this.memoMeta[index]!;
    let depth = meta % this.levels;
    let size = (meta - depth) / this.levels;
    if (meta < 0) {
      const k = -1 - meta;
      size = this.sizes[k]!;
      depth = this.depths[k]!;
      this.shared[k] = true;
    }
    this.charge(size, `memo entry ${index}`);
    this.push(v, size, depth, true);
  }
  dup(): void {
    const k = this.topAt('The pickle duplicates a value');
    this.shared[k] = true;
    this.charge(this.sizes[k]!, 'DUP');
    this.push(this.stack[k]!, this.sizes[k]!, this.depths[k]!, true);
  }
  /** A second reference to a value: what it stands for, expanded, counts against a budget the file's size sets. */
  private charge(size: number, what: string): void {
    this.charged += size;
    if (this.charged <= this.budget) return;
    const l = this.limits;
    this.fail(
      `The pickle's references to values it already holds would expand it past ${formatBytes(this.budget)} (the limit: ${l.expansionPerByte} times ` +
        `its ${formatBytes(this.bytes.byteLength)}, at least ${formatBytes(l.minExpansion)}); the last, ${what}, stands for ${formatBytes(size)}`,
    );
  }
}

type Op = (u: Unpickler) => void;

const tuple = (values: PickleValue[]): PickleTuple => PickleTuple.from(values) as PickleTuple;
const isMap = (v: PickleValue): v is Map<PickleValue, PickleValue> => v instanceof Map;
const isSet = (v: PickleValue): v is Set<PickleValue> => v instanceof Set;

function setItems(u: Unpickler, values: PickleValue[]): void {
  const map = u.grow(isMap, 'dict', (m) => m.size + values.length / 2);
  for (let i = 0; i < values.length; i += 2) map.set(values[i]!, values[i + 1]!);
}

function dictOf(values: PickleValue[]): Map<PickleValue, PickleValue> {
  const map = new Map<PickleValue, PickleValue>();
  for (let i = 0; i < values.length; i += 2) map.set(values[i]!, values[i + 1]!);
  return map;
}

/** The data opcodes, by byte. STOP is the reader's own; an opcode not here is refused. */
const OPS: Record<number, Op> = {
  0x80: (u) => {
    const protocol = u.u8();
    if (protocol < 2 || protocol > 5) u.fail(`Pickle protocol ${protocol} is not supported (2 to 5 are)`);
  },
  0x95: (u) => void u.u64(), // FRAME: a length hint only
  0x28: (u) => {
    // MARK
    if (u.marks.length >= u.limits.maxDepth) u.fail(`The pickle nests deeper than ${u.limits.maxDepth} levels (a snapshot nests 7)`);
    u.marks.push(u.stack.length);
  },
  0x30: (u) => {
    // POP: a value, or the mark on top (as Python does)
    if (u.atMark()) u.marks.pop();
    else u.pop();
  },
  0x31: (u) => void u.popMark(), // POP_MARK
  0x32: (u) => u.dup(),
  0x4e: (u) => u.scalar(null),
  0x88: (u) => u.scalar(true),
  0x89: (u) => u.scalar(false),
  0x49: (u) => {
    // INT (text): also the protocol 0 form of booleans
    const t = u.digits('INT');
    u.scalar(t === '00' ? false : t === '01' ? true : integer(BigInt(t)));
  },
  0x4a: (u) => u.scalar(u.i32()),
  0x4b: (u) => u.scalar(u.u8()),
  0x4d: (u) => u.scalar(u.u16()),
  0x4c: (u) => u.scalar(integer(BigInt(u.digits('LONG')))),
  0x8a: (u) => u.long(u.u8(), 'LONG1'),
  0x8b: (u) => {
    const n = u.i32();
    if (n < 0) u.fail('LONG4 announces a negative length');
    u.long(n, 'LONG4');
  },
  0x46: (u) => {
    const t = u.line(MAX_NUMBER_LINE, 'FLOAT');
    if (!isPickleNumberText('float', t)) u.fail(`FLOAT holds "${t.slice(0, 20)}"`);
    // Python writes inf and nan as words, which Number does not read.
    const word = t.trim().toLowerCase();
    u.scalar(word.endsWith('inf') ? (word.startsWith('-') ? -Infinity : Infinity) : word.endsWith('nan') ? NaN : Number(t));
  },
  0x47: (u) => u.scalar(u.f64()),
  0x55: (u) => u.scalar(latin1.decode(u.take(u.u8()))), // SHORT_BINSTRING
  0x54: (u) => {
    const n = u.i32();
    if (n < 0) u.fail('BINSTRING announces a negative length');
    u.scalar(latin1.decode(u.take(n)));
  },
  0x8c: (u) => u.scalar(text.decode(u.take(u.u8()))),
  0x58: (u) => u.scalar(text.decode(u.take(u.u32()))),
  0x8d: (u) => u.scalar(text.decode(u.take(u.u64()))),
  0x56: (u) => u.scalar(u.line()), // UNICODE (raw-unicode-escape text): data, kept as its text
  0x43: (u) => u.scalar(u.take(u.u8()).slice()),
  0x42: (u) => u.scalar(u.take(u.u32()).slice()),
  0x8e: (u) => u.scalar(u.take(u.u64()).slice()),
  0x96: (u) => u.scalar(u.take(u.u64()).slice()),
  0x5d: (u) => u.push([], SLOT, 1, false),
  0x6c: (u) => u.built(u.popMark()), // LIST
  0x61: (u) => {
    const v = u.pop();
    u.grow(isList, 'list', (c) => c.length + 1).push(v);
  },
  0x65: (u) => {
    const values = u.popMark();
    const list = u.grow(isList, 'list', (c) => c.length + values.length);
    for (const v of values) list.push(v); // not push(...values): a hostile mark can hold a million
  },
  0x29: (u) => u.push(tuple([]), SLOT, 1, false),
  0x74: (u) => u.built(tuple(u.popMark())),
  0x85: (u) => u.built(tuple(u.popValues(1))),
  0x86: (u) => u.built(tuple(u.popValues(2))),
  0x87: (u) => u.built(tuple(u.popValues(3))),
  0x7d: (u) => u.push(new Map(), SLOT, 1, false),
  0x64: (u) => u.built(dictOf(u.pairs(u.popMark(), 'DICT'))),
  0x73: (u) => setItems(u, u.popValues(2)),
  0x75: (u) => setItems(u, u.pairs(u.popMark(), 'SETITEMS')),
  0x8f: (u) => u.push(new Set(), SLOT, 1, false),
  0x90: (u) => {
    const values = u.popMark();
    const set = u.grow(isSet, 'set', (s) => s.size + values.length);
    for (const v of values) set.add(v);
  },
  0x91: (u) => u.built(new Set(u.popMark())), // FROZENSET
  0x70: (u) => u.memoize(Number(u.digits('PUT'))),
  0x71: (u) => u.memoize(u.u8()),
  0x72: (u) => u.memoize(u.u32()),
  0x94: (u) => u.memoize(u.memoCount),
  0x67: (u) => u.get(Number(u.digits('GET'))),
  0x68: (u) => u.get(u.u8()),
  0x6a: (u) => u.get(u.u32()),
};
