import { ACTIONS } from './snapshot-model';
import { isPickleNumberText } from './unpickle';

/**
 * A data pickle (a PyTorch memory snapshot) copied opcode by opcode with each of its text strings (and bytes values,
 * read as Latin-1) passed through `redact`: the snapshot's stack frames name files by their full paths, home folders
 * included, and a redacted bundle must not carry them. Nothing is built but the copy: the walk is linear, each string
 * is decoded alone, and the copy is the file's size give or take what the strings gained or lost. A string is written
 * again with the smallest opcode that holds it (memo references count values, not bytes, so they stay right); FRAME
 * opcodes, a length hint protocol 4 allows to leave out, are left out, since the lengths they give no longer hold. An
 * opcode that can name code (GLOBAL, REDUCE…), that the snapshot reader does not take (STRING), or that this walk does
 * not know is refused: a snapshot holds none. Nothing passes unread: a text number that is not one is refused too.
 */
export class PickleRedactionError extends Error {
  override readonly name = 'PickleRedactionError';
}

type Argument = 'none' | 1 | 2 | 4 | 8 | 'u8-bytes' | 'u32-bytes' | 'integer-line' | 'float-line';

/** Each data opcode's argument that is copied as it is, as the pickle format lays it out (Lib/pickletools.py). */
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
  [0x8a, 'u8-bytes'], // LONG1: an integer's bytes
  [0x8b, 'u32-bytes'], // LONG4
  ...[0x49, 0x4c, 0x70, 0x67].map((op) => [op, 'integer-line'] as const), // INT LONG PUT GET
  [0x46, 'float-line'], // FLOAT
]);

/** The opcodes that carry text, each read as the snapshot reader reads it (core/memory/unpickle.ts). */
const TEXT: ReadonlyMap<number, { width: 1 | 4 | 8 | 'line'; encoding: 'utf-8' | 'latin1' }> = new Map([
  [0x8c, { width: 1, encoding: 'utf-8' }], // SHORT_BINUNICODE
  [0x58, { width: 4, encoding: 'utf-8' }], // BINUNICODE
  [0x8d, { width: 8, encoding: 'utf-8' }], // BINUNICODE8
  [0x55, { width: 1, encoding: 'latin1' }], // SHORT_BINSTRING (protocol 2's str)
  [0x54, { width: 4, encoding: 'latin1' }], // BINSTRING
  [0x56, { width: 'line', encoding: 'latin1' }], // UNICODE (protocol 0)
] as const);

/** The opcodes that carry bytes: a path may hide in them as well as in text, so they are redacted as Latin-1 text. */
const BYTES: ReadonlyMap<number, { width: 1 | 4 | 8; kind: 'bytes' | 'bytearray' }> = new Map([
  [0x43, { width: 1, kind: 'bytes' }], // SHORT_BINBYTES
  [0x42, { width: 4, kind: 'bytes' }], // BINBYTES
  [0x8e, { width: 8, kind: 'bytes' }], // BINBYTES8
  [0x96, { width: 8, kind: 'bytearray' }], // BYTEARRAY8
] as const);

const STOP = 0x2e;
const FRAME = 0x95;
const SHORT_BINUNICODE = 0x8c;
const BINUNICODE = 0x58;
const SHORT_BINBYTES = 0x43;
const BINBYTES = 0x42;
const BYTEARRAY8 = 0x96;

// As the snapshot reader decodes them: a byte that is not UTF-8 reads as U+FFFD.
const decoders = { 'utf-8': new TextDecoder('utf-8'), latin1: new TextDecoder('latin1') };
const encoder = new TextEncoder();

/**
 * The pickle with every text string (and every bytes value, read as Latin-1) redacted; throws PickleRedactionError on
 * anything but a well-formed data pickle. A text number (INT, FLOAT…) is copied only if the reader would take it as one.
 */
export function redactPickleStrings(bytes: Uint8Array, redact: (text: string) => string): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new GrowingBytes(bytes.byteLength + 1024);
  // Opcodes copied as they are run together: one copy of each stretch between two rewritten values, not one per opcode.
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
  /** The argument that runs to the next newline, its newline passed. */
  const line = (): Uint8Array => {
    const end = bytes.indexOf(0x0a, at);
    if (end < 0) throw new PickleRedactionError(`the pickle ends inside a line at byte ${at}`);
    const value = bytes.subarray(at, end);
    at = end + 1;
    return value;
  };
  /** The value's bytes, the next `n` of the file. */
  const take = (n: number): Uint8Array => bytes.subarray(at, (at += n));
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
    const text = TEXT.get(op);
    if (text) {
      const raw = text.width === 'line' ? line() : take(length(text.width, 'a string'));
      out.append(bytes.subarray(verbatimFrom, start));
      out.appendString(encoder.encode(redact(decoders[text.encoding].decode(raw))));
      verbatimFrom = at;
      continue;
    }
    const value = BYTES.get(op);
    if (value) {
      const raw = take(length(value.width, 'bytes'));
      const redacted = latin1Bytes(redact(bytesAsLatin1(raw)), start);
      if (!sameBytes(redacted, raw)) {
        out.append(bytes.subarray(verbatimFrom, start));
        out.appendBytes(redacted, value.kind);
        verbatimFrom = at;
      }
      continue;
    }
    const argument = ARGUMENTS.get(op);
    if (argument === undefined) throw new PickleRedactionError(`opcode 0x${op.toString(16)} at byte ${start} is not one a data pickle holds`);
    if (argument === 'integer-line' || argument === 'float-line') {
      const number = decoders.latin1.decode(line());
      if (!isPickleNumberText(argument === 'integer-line' ? 'integer' : 'float', number))
        throw new PickleRedactionError(`the text number at byte ${start} is not a number`);
    } else if (typeof argument === 'number') at += need(argument, 'an argument');
    else if (argument !== 'none') {
      // Read first: `at += length()` would add to the `at` from before length() moved past the length itself.
      const n = length(argument === 'u8-bytes' ? 1 : 4, 'bytes');
      at += n;
    }
  }
  throw new PickleRedactionError('the pickle has no STOP');
}

/**
 * Bytes as Latin-1 text, one character a byte. Not TextDecoder('latin1'): the Encoding standard makes that label
 * windows-1252 (0x80 reads as €), and some Node versions follow it, which latin1Bytes could not write back.
 */
function bytesAsLatin1(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.byteLength; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return text;
}

/** Latin-1 text as its bytes (the redactor's placeholders are ASCII: a character past Latin-1 is refused, not mangled). */
function latin1Bytes(text: string, at: number): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0xff) throw new PickleRedactionError(`the bytes value at byte ${at} would hold a character bytes cannot`);
    out[i] = c;
  }
  return out;
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);

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
    this.appendSized(utf8, utf8.byteLength < 256 ? [SHORT_BINUNICODE, 1] : [BINUNICODE, 4]);
  }
  /** A bytes value with the opcode of its kind: a bytearray stays one (BYTEARRAY8, protocol 5, which it came in). */
  appendBytes(value: Uint8Array, kind: 'bytes' | 'bytearray'): void {
    this.appendSized(value, kind === 'bytearray' ? [BYTEARRAY8, 8] : value.byteLength < 256 ? [SHORT_BINBYTES, 1] : [BINBYTES, 4]);
  }
  /** An opcode, the value's length in `width` little-endian bytes, and the value. */
  private appendSized(value: Uint8Array, [opcode, width]: [number, 1 | 4 | 8]): void {
    const head = new Uint8Array(1 + width);
    const view = new DataView(head.buffer);
    head[0] = opcode;
    if (width === 1) head[1] = value.byteLength;
    else if (width === 4) view.setUint32(1, value.byteLength, true);
    else view.setBigUint64(1, BigInt(value.byteLength), true);
    this.append(head);
    this.append(value);
  }
  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.size);
  }
}

/**
 * The words a PyTorch memory snapshot is built of: its dicts' keys and the values of its enumerations (a trace entry's
 * action, a block's state, a segment's type). They name no one, and a user or host called `state` or `small` must not
 * turn them into placeholders the snapshot's readers no longer know.
 */
const SNAPSHOT_WORDS: ReadonlySet<string> = new Set([
  ...['segments', 'device_traces', 'allocator_settings', 'external_annotations'],
  ...['address', 'total_size', 'stream', 'segment_type', 'allocated_size', 'active_size', 'requested_size', 'blocks', 'device', 'frames'],
  ...['is_expandable', 'segment_pool_id', 'size', 'state', 'filename', 'line', 'name'],
  ...['action', 'addr', 'device_free', 'time_us', 'compile_context', 'user_metadata'],
  ...ACTIONS,
  ...['active_allocated', 'active_pending_free', 'inactive', 'large', 'small'],
  ...['PYTORCH_CUDA_ALLOC_CONF', 'max_split_size', 'garbage_collection_threshold', 'expandable_segments', 'roundup_power2_divisions'],
  ...['pinned_num_register_threads', 'pinned_use_cuda_host_register', 'release_lock_on_cudamalloc', 'graph_capture_record_stream_reuse'],
]);

/**
 * How a bundle redacts a snapshot's strings: as the report's own text is redacted (home folders, user and host names
 * as words, GPU UUIDs and serials: the frames' paths read the same in both), except the snapshot's own words.
 */
export const snapshotStringRedaction =
  (text: (value: string) => string) =>
  (value: string): string =>
    SNAPSHOT_WORDS.has(value) ? value : text(value);
