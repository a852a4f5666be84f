/**
 * A data pickle (a PyTorch memory snapshot) copied opcode by opcode with each of its text strings passed through
 * `redact`: the snapshot's stack frames name files by their full paths, home folders included, and a redacted bundle
 * must not carry them. Nothing is built but the copy: the walk is linear, each string is decoded alone, and the
 * copy is the file's size give or take what the strings gained or lost. A string is written again with the
 * smallest opcode that holds it (memo references count values, not bytes, so they stay right); FRAME opcodes, a
 * length hint protocol 4 allows to leave out, are left out, since the lengths they give no longer hold. An opcode
 * that can name code (GLOBAL, REDUCE…) or that this walk does not know is refused: a snapshot holds none.
 */
export class PickleRedactionError extends Error {
  override readonly name = 'PickleRedactionError';
}

type Argument = 'none' | 1 | 2 | 4 | 8 | 'u8-bytes' | 'u32-bytes' | 'u64-bytes' | 'line';

/** Each data opcode's argument, as the pickle format lays it out (Lib/pickletools.py). */
const ARGUMENTS: ReadonlyMap<number, Argument> = new Map<number, Argument>([
  // none
  ...[0x28, 0x29, 0x30, 0x31, 0x32, 0x4e, 0x88, 0x89, 0x5d, 0x6c, 0x61, 0x65, 0x74, 0x85, 0x86, 0x87, 0x7d, 0x64, 0x73, 0x75, 0x8f, 0x90, 0x91, 0x94].map(
    (op) => [op, 'none'] as const,
  ),
  [0x80, 1], // PROTO
  [0x4b, 1], // BININT1
  [0x71, 1], // BINPUT
  [0x68, 1], // BINGET
  [0x4d, 2], // BININT2
  [0x4a, 4], // BININT
  [0x72, 4], // LONG_BINPUT
  [0x6a, 4], // LONG_BINGET
  [0x47, 8], // BINFLOAT
  [0x8a, 'u8-bytes'], // LONG1
  [0x55, 'u8-bytes'], // SHORT_BINSTRING
  [0x43, 'u8-bytes'], // SHORT_BINBYTES
  [0x8b, 'u32-bytes'], // LONG4
  [0x54, 'u32-bytes'], // BINSTRING
  [0x42, 'u32-bytes'], // BINBYTES
  [0x8e, 'u64-bytes'], // BINBYTES8
  [0x96, 'u64-bytes'], // BYTEARRAY8
  ...[0x49, 0x4c, 0x46, 0x53, 0x56, 0x70, 0x67].map((op) => [op, 'line'] as const), // INT LONG FLOAT STRING UNICODE PUT GET
]);
const STOP = 0x2e;
const FRAME = 0x95;
const SHORT_BINUNICODE = 0x8c;
const BINUNICODE = 0x58;
const BINUNICODE8 = 0x8d;

// As the snapshot reader decodes them (core/memory/unpickle.ts): a byte that is not UTF-8 reads as U+FFFD.
const decoder = new TextDecoder('utf-8');
const encoder = new TextEncoder();

/** The pickle with every text string redacted; throws PickleRedactionError on anything but a well-formed data pickle. */
export function redactPickleStrings(bytes: Uint8Array, redact: (text: string) => string): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new GrowingBytes(bytes.byteLength + 1024);
  // Opcodes copied as they are run together: one copy of each stretch between two strings, not one per opcode.
  let verbatimFrom = 0;
  let at = 0;
  const need = (n: number, what: string): number => {
    if (n > bytes.byteLength - at) throw new PickleRedactionError(`the pickle ends inside ${what} at byte ${at}`);
    return n;
  };
  const length = (width: 1 | 4 | 8, what: string): number => {
    need(width, what);
    const big = width === 8 ? view.getBigUint64(at, true) : null;
    // A 64-bit length past the file cannot be met: compared as a BigInt, so that no length past 2^53 rounds into range.
    if (big !== null && big > BigInt(bytes.byteLength)) throw new PickleRedactionError(`the pickle ends inside ${what} at byte ${at}`);
    const n = big !== null ? Number(big) : width === 1 ? view.getUint8(at) : view.getUint32(at, true);
    at += width;
    return need(n, what);
  };
  while (at < bytes.byteLength) {
    const start = at;
    const op = bytes[at++]!;
    if (op === STOP) {
      out.append(bytes.subarray(verbatimFrom, at));
      return out.bytes();
    }
    if (op === FRAME) {
      at += need(8, 'a FRAME');
      out.append(bytes.subarray(verbatimFrom, start));
      verbatimFrom = at;
      continue;
    }
    if (op === SHORT_BINUNICODE || op === BINUNICODE || op === BINUNICODE8) {
      const n = length(op === SHORT_BINUNICODE ? 1 : op === BINUNICODE ? 4 : 8, 'a string');
      const text = decoder.decode(bytes.subarray(at, at + n));
      at += n;
      out.append(bytes.subarray(verbatimFrom, start));
      out.appendString(encoder.encode(redact(text)));
      verbatimFrom = at;
      continue;
    }
    const argument = ARGUMENTS.get(op);
    if (argument === undefined) throw new PickleRedactionError(`opcode 0x${op.toString(16)} at byte ${start} is not one a data pickle holds`);
    if (argument === 'line') {
      const end = bytes.indexOf(0x0a, at);
      if (end < 0) throw new PickleRedactionError(`the pickle ends inside a line at byte ${at}`);
      at = end + 1;
    } else if (typeof argument === 'number') at += need(argument, 'an argument');
    else if (argument !== 'none') {
      // Read first: `at += length()` would add to the `at` from before length() moved past the length itself.
      const n = length(argument === 'u8-bytes' ? 1 : argument === 'u32-bytes' ? 4 : 8, 'bytes');
      at += n;
    }
  }
  throw new PickleRedactionError('the pickle has no STOP');
}

/** The copy, written into one buffer that doubles when it must. */
class GrowingBytes {
  private buffer: Uint8Array;
  private size = 0;
  constructor(capacity: number) {
    this.buffer = new Uint8Array(capacity);
  }
  append(chunk: Uint8Array): void {
    if (this.size + chunk.byteLength > this.buffer.byteLength) {
      const bigger = new Uint8Array(Math.max(this.buffer.byteLength * 2, this.size + chunk.byteLength));
      bigger.set(this.buffer.subarray(0, this.size));
      this.buffer = bigger;
    }
    this.buffer.set(chunk, this.size);
    this.size += chunk.byteLength;
  }
  /** A text string, with the smallest opcode that holds it. */
  appendString(utf8: Uint8Array): void {
    const n = utf8.byteLength;
    if (n < 256) this.append(new Uint8Array([SHORT_BINUNICODE, n]));
    else {
      const head = new Uint8Array(5);
      head[0] = BINUNICODE;
      new DataView(head.buffer).setUint32(1, n, true);
      this.append(head);
    }
    this.append(utf8);
  }
  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.size);
  }
}
