/**
 * A whitelist unpickler for data pickles (PyTorch memory snapshots): protocols 2–5, only the opcodes that
 * build data — None, booleans, numbers, strings, bytes, lists, tuples, dicts, sets, the memo. Every opcode
 * that could name or call code (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, EXT*, PERSID,
 * out-of-band buffers) is refused, so nothing in a pickle ever runs. Memo references are shared, not
 * copied; integers beyond 2^53 are BigInt; dicts are Maps. Caps on size, nesting and item count hold a
 * hostile input to bounded time and memory.
 */

export type PickleValue =
  null | boolean | number | bigint | string | Uint8Array | PickleValue[] | PickleTuple | Map<PickleValue, PickleValue> | Set<PickleValue>;

/** A Python tuple: an array that says it was one. */
export class PickleTuple extends Array<PickleValue> {}

export interface UnpickleLimits {
  maxBytes: number;
  /** Nested marks (containers being built) at once. */
  maxDepth: number;
  /** Values created in all. */
  maxItems: number;
}

export const DEFAULT_UNPICKLE_LIMITS: UnpickleLimits = { maxBytes: 2 * 1024 ** 3, maxDepth: 256, maxItems: 200_000_000 };

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

const MARK = Symbol('mark');
type StackItem = PickleValue | typeof MARK;

// TextDecoder is in every JavaScript runtime the workbench runs in (Node, browsers, Electron), but in no
// type library core/ compiles against (no DOM, no Node): declared here, used for nothing else.
declare const TextDecoder: new (label: string, options?: { fatal?: boolean }) => { decode(input: Uint8Array): string };

const text = new TextDecoder('utf-8', { fatal: false });
const latin1 = new TextDecoder('latin1');

/** Parses a data pickle; throws UnpickleError, with the byte offset, for anything else. */
export function unpickle(bytes: Uint8Array, limits: UnpickleLimits = DEFAULT_UNPICKLE_LIMITS): PickleValue {
  if (bytes.byteLength > limits.maxBytes) throw new UnpickleError(`The pickle is ${bytes.byteLength} bytes, over the limit of ${limits.maxBytes}.`, 0);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stack: StackItem[] = [];
  const marks: number[] = [];
  const memo = new Map<number, PickleValue>();
  let pos = 0;
  let items = 0;

  const fail = (message: string): never => {
    throw new UnpickleError(`${message} (at byte ${pos}).`, pos);
  };
  const need = (n: number) => {
    if (n < 0 || pos + n > bytes.byteLength) fail(`The pickle ends early: ${n} more bytes were announced than it holds`);
  };
  const u8 = () => {
    need(1);
    return bytes[pos++]!;
  };
  const u16 = () => {
    need(2);
    const v = view.getUint16(pos, true);
    pos += 2;
    return v;
  };
  const u32 = () => {
    need(4);
    const v = view.getUint32(pos, true);
    pos += 4;
    return v;
  };
  const i32 = () => {
    need(4);
    const v = view.getInt32(pos, true);
    pos += 4;
    return v;
  };
  const u64 = () => {
    need(8);
    const v = view.getBigUint64(pos, true);
    pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) fail('A length past 2^53 was announced');
    return Number(v);
  };
  const take = (n: number) => {
    need(n);
    const out = bytes.subarray(pos, pos + n);
    pos += n;
    return out;
  };
  const line = () => {
    const end = bytes.indexOf(0x0a, pos);
    if (end < 0) fail('The pickle ends inside a text line');
    const out = latin1.decode(bytes.subarray(pos, end));
    pos = end + 1;
    return out;
  };
  const push = (v: StackItem) => {
    if (++items > limits.maxItems) fail(`The pickle holds more than ${limits.maxItems} values`);
    stack.push(v);
  };
  const pop = (): PickleValue => {
    if (!stack.length) fail('The pickle pops from an empty stack');
    const v = stack.pop()!;
    if (v === MARK) fail('The pickle pops a mark as a value');
    return v as PickleValue;
  };
  const top = (): PickleValue => {
    const v = stack[stack.length - 1];
    if (v === undefined || v === MARK) fail('The pickle expects a value on the stack');
    return v as PickleValue;
  };
  const popMark = (): PickleValue[] => {
    const at = marks.pop();
    if (at === undefined) fail('The pickle closes a mark it never opened');
    const values = stack.splice(at!) as PickleValue[];
    return values;
  };
  const asList = (v: PickleValue): PickleValue[] => {
    if (!Array.isArray(v) || v instanceof PickleTuple) fail('The pickle appends to something that is not a list');
    return v as PickleValue[];
  };
  const asMap = (v: PickleValue): Map<PickleValue, PickleValue> => {
    if (!(v instanceof Map)) fail('The pickle sets an item on something that is not a dict');
    return v as Map<PickleValue, PickleValue>;
  };
  const asSet = (v: PickleValue): Set<PickleValue> => {
    if (!(v instanceof Set)) fail('The pickle adds to something that is not a set');
    return v as Set<PickleValue>;
  };
  const key = (k: PickleValue): PickleValue => k;
  const integer = (big: bigint): number | bigint => (big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big);
  const littleEndianSigned = (raw: Uint8Array): bigint => {
    if (raw.length === 0) return 0n;
    let v = 0n;
    for (let i = raw.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(raw[i]!);
    if (raw[raw.length - 1]! & 0x80) v -= 1n << BigInt(raw.length * 8);
    return v;
  };
  const tuple = (values: PickleValue[]) => PickleTuple.from(values) as PickleTuple;

  if (bytes[0] !== 0x80) fail('This is not a pickle of protocol 2 or later (it does not start with PROTO)');
  for (;;) {
    const at = pos;
    const op = u8();
    if (CODE_OPCODES[op]) {
      pos = at;
      fail(`The pickle asks to run code (${CODE_OPCODES[op]}): a memory snapshot holds only data, so it was refused and nothing was run`);
    }
    switch (op) {
      case 0x80: {
        const protocol = u8();
        if (protocol < 2 || protocol > 5) fail(`Pickle protocol ${protocol} is not supported (2 to 5 are)`);
        break;
      }
      case 0x95: // FRAME: a length hint only
        u64();
        break;
      case 0x2e: // STOP
        if (stack.length !== 1 || marks.length) fail('The pickle stops with other than one value on its stack');
        return stack[0] as PickleValue;
      case 0x28: // MARK
        if (marks.length >= limits.maxDepth) fail(`The pickle nests deeper than ${limits.maxDepth} levels`);
        marks.push(stack.length);
        break;
      case 0x30: // POP
        if (stack.pop() === undefined) fail('The pickle pops from an empty stack');
        break;
      case 0x31: // POP_MARK
        popMark();
        break;
      case 0x32: // DUP
        push(top());
        break;
      case 0x4e: // NONE
        push(null);
        break;
      case 0x88:
        push(true);
        break;
      case 0x89:
        push(false);
        break;
      case 0x49: {
        // INT (text): also the protocol 0 form of booleans
        const t = line().trim();
        if (t === '00') push(false);
        else if (t === '01') push(true);
        else if (/^[-+]?\d+$/.test(t)) push(integer(BigInt(t)));
        else fail(`INT holds "${t.slice(0, 20)}", not an integer`);
        break;
      }
      case 0x4a:
        push(i32());
        break;
      case 0x4b:
        push(u8());
        break;
      case 0x4d:
        push(u16());
        break;
      case 0x4c: {
        // LONG (text)
        const t = line().trim().replace(/L$/, '');
        if (!/^[-+]?\d+$/.test(t)) fail(`LONG holds "${t.slice(0, 20)}", not an integer`);
        push(integer(BigInt(t)));
        break;
      }
      case 0x8a:
        push(integer(littleEndianSigned(take(u8()))));
        break;
      case 0x8b: {
        const n = i32();
        if (n < 0) fail('LONG4 announces a negative length');
        push(integer(littleEndianSigned(take(n))));
        break;
      }
      case 0x46: {
        const t = line();
        const v = Number(t);
        if (!Number.isFinite(v) && !/^[-+]?(inf|nan)/i.test(t.trim())) fail(`FLOAT holds "${t.slice(0, 20)}"`);
        push(v);
        break;
      }
      case 0x47: {
        need(8);
        const v = view.getFloat64(pos, false);
        pos += 8;
        push(v);
        break;
      }
      case 0x55: // SHORT_BINSTRING
        push(latin1.decode(take(u8())));
        break;
      case 0x54: {
        const n = i32();
        if (n < 0) fail('BINSTRING announces a negative length');
        push(latin1.decode(take(n)));
        break;
      }
      case 0x8c:
        push(text.decode(take(u8())));
        break;
      case 0x58:
        push(text.decode(take(u32())));
        break;
      case 0x8d:
        push(text.decode(take(u64())));
        break;
      case 0x56: // UNICODE (raw-unicode-escape text): data, kept as its text
        push(line());
        break;
      case 0x43:
        push(take(u8()).slice());
        break;
      case 0x42:
        push(take(u32()).slice());
        break;
      case 0x8e:
      case 0x96:
        push(take(u64()).slice());
        break;
      case 0x5d:
        push([]);
        break;
      case 0x6c:
        push(popMark());
        break;
      case 0x61: {
        const v = pop();
        asList(top()).push(v);
        break;
      }
      case 0x65: {
        const values = popMark();
        const list = asList(top());
        for (const v of values) list.push(v); // not push(...values): a hostile mark can hold millions
        break;
      }
      case 0x29:
        push(tuple([]));
        break;
      case 0x74:
        push(tuple(popMark()));
        break;
      case 0x85:
        push(tuple([pop()]));
        break;
      case 0x86: {
        const b = pop();
        push(tuple([pop(), b]));
        break;
      }
      case 0x87: {
        const c = pop();
        const b = pop();
        push(tuple([pop(), b, c]));
        break;
      }
      case 0x7d:
        push(new Map());
        break;
      case 0x64: {
        const values = popMark();
        if (values.length % 2) fail('DICT has a key without a value');
        const map = new Map<PickleValue, PickleValue>();
        for (let i = 0; i < values.length; i += 2) map.set(key(values[i]!), values[i + 1]!);
        push(map);
        break;
      }
      case 0x73: {
        const v = pop();
        const k = pop();
        asMap(top()).set(key(k), v);
        break;
      }
      case 0x75: {
        const values = popMark();
        if (values.length % 2) fail('SETITEMS has a key without a value');
        const map = asMap(top());
        for (let i = 0; i < values.length; i += 2) map.set(key(values[i]!), values[i + 1]!);
        break;
      }
      case 0x8f:
        push(new Set());
        break;
      case 0x90: {
        const values = popMark();
        const set = asSet(top());
        for (const v of values) set.add(v);
        break;
      }
      case 0x91:
        push(new Set(popMark()));
        break;
      case 0x70: // PUT (text index)
        memo.set(Number(line()), top());
        break;
      case 0x71:
        memo.set(u8(), top());
        break;
      case 0x72:
        memo.set(u32(), top());
        break;
      case 0x94:
        memo.set(memo.size, top());
        break;
      case 0x67:
      case 0x68:
      case 0x6a: {
        const index = op === 0x67 ? Number(line()) : op === 0x68 ? u8() : u32();
        if (!memo.has(index)) fail(`The pickle refers to memo entry ${index}, which it never stored`);
        push(memo.get(index)!);
        break;
      }
      default:
        pos = at;
        fail(`Opcode 0x${op.toString(16).padStart(2, '0')} is not one this reader accepts`);
    }
  }
}
