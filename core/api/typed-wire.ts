/**
 * Typed arrays across a wire that speaks JSON, as bytes rather than text. A value is written as JSON in which each
 * typed array (Float64Array, Int32Array, Uint8Array) is null, a list of references (where each array goes, by its
 * path of keys, and where its bytes lie), and one body holding every array's bytes, each at an 8-byte aligned offset,
 * in the platform's byte order (little-endian wherever the workbench runs; the timeline's wire checks it).
 *
 * Two wires carry it:
 * - A reader process answers the host with the references in its answer frame ({ok, value, typed}) and the body in the
 *   body frame before it (core/readers/reader-protocol.ts).
 * - The serve host answers the browser, for an answer its channel declares binary (core/api/channels.ts: a timeline's
 *   columns) that holds a typed array, with one binary WebSocket frame:
 *     bytes 0..3     the header's length H in bytes, little-endian
 *     bytes 4..4+H   the header, UTF-8 JSON: {"typed": the references, "message": the message with nulls}
 *     zero bytes up to the next multiple of 8
 *     the body
 *   so that the browser views each array in the frame's own buffer, with no copy (a body that is not 8-byte aligned
 *   in its buffer, as a reader's body frame is, is copied once). Every other message is a JSON text frame, written
 *   by JSON.stringify alone, without the walk that looks for typed arrays (main/serve/serve-socket.ts). (msgpack or
 *   CBOR would also carry bytes, but would make every message binary and add a dependency, for what a header and a
 *   body do here.)
 * Electron's IPC needs none of this: structured clone carries typed arrays as they are.
 *
 * References are paths rather than markers inside the JSON, so that no value read from a file can pose as one; the
 * decoder checks every reference (its slot exists and is null, its bytes lie in the body, no two overlap).
 */

export type TypedColumn = Float64Array | Int32Array | Uint8Array;
type TypedKind = 'f64' | 'i32' | 'u8';

export interface TypedRef {
  /** Keys from the message's root to the array's slot (array indices as strings). */
  path: string[];
  type: TypedKind;
  /** Where its bytes start in the body: a multiple of 8. */
  offset: number;
  /** Its length in elements. */
  length: number;
}

export class TypedWireError extends Error {
  override readonly name = 'TypedWireError';
  constructor(
    message: string,
    /** The message's id, where its header was read before the problem was found. */
    readonly messageId: unknown = undefined,
  ) {
    super(message);
  }
}

// TextEncoder and TextDecoder are in every runtime the workbench runs in, but in no lib core/ compiles against (as in unpickle.ts).
declare const TextEncoder: new () => { encode(input: string): Uint8Array };
declare const TextDecoder: new (label: string, options?: { fatal?: boolean }) => { decode(input: Uint8Array): string };

const SIZE: Record<TypedKind, number> = { f64: 8, i32: 4, u8: 1 };
const ALIGN = 8;
const MAX_REFS = 1_000_000;
const MAX_DEPTH = 64;
const padded = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

function kindOf(value: ArrayBufferView): TypedKind {
  if (value instanceof Float64Array) return 'f64';
  if (value instanceof Int32Array) return 'i32';
  if (value instanceof Uint8Array) return 'u8';
  throw new TypedWireError(`a ${value.constructor.name} cannot cross the wire (only Float64Array, Int32Array and Uint8Array do)`);
}

type Slot = { up: Slot | null; key: string };
const pathOf = (slot: Slot | null): string[] => {
  const keys: string[] = [];
  for (let s = slot; s; s = s.up) keys.push(s.key);
  return keys.reverse();
};

/** A value as JSON text with its typed arrays left out (null), the references to them, and their bytes. */
export function stringifyTyped(value: unknown): { text: string; refs: TypedRef[]; body: Uint8Array } {
  const slots = new Map<object, Slot | null>();
  const refs: TypedRef[] = [];
  const arrays: TypedColumn[] = [];
  let bytes = 0;
  const text = JSON.stringify(value, function (this: object, key: string, v: unknown) {
    if (typeof v !== 'object' || v === null) return v;
    // The root's holder is JSON.stringify's own wrapper: the root's path is empty.
    const slot = slots.has(this) ? { up: slots.get(this)!, key } : null;
    if (!ArrayBuffer.isView(v)) {
      slots.set(v, slot);
      return v;
    }
    const type = kindOf(v);
    refs.push({ path: pathOf(slot), type, offset: bytes, length: v.byteLength / SIZE[type] });
    arrays.push(v as TypedColumn);
    bytes = padded(bytes + v.byteLength);
    return null;
  }) as string | undefined;
  const body = new Uint8Array(bytes);
  arrays.forEach((a, i) => body.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), refs[i]!.offset));
  return { text: text ?? 'null', refs, body };
}

function isRef(r: unknown): r is TypedRef {
  if (typeof r !== 'object' || r === null) return false;
  const { path, type, offset, length } = r as Record<string, unknown>;
  return (
    Array.isArray(path) &&
    path.length <= MAX_DEPTH &&
    path.every((k) => typeof k === 'string' && k !== '__proto__') &&
    (type === 'f64' || type === 'i32' || type === 'u8') &&
    Number.isSafeInteger(offset) &&
    Number.isSafeInteger(length) &&
    (offset as number) >= 0 &&
    (length as number) >= 0 &&
    (offset as number) % ALIGN === 0
  );
}

const own = (container: unknown, key: string): boolean =>
  typeof container === 'object' && container !== null && !ArrayBuffer.isView(container) && Object.prototype.hasOwnProperty.call(container, key);

/** An array's view of the body, which starts 8-byte aligned in its buffer. */
function viewOf(body: Uint8Array, type: TypedKind, offset: number, length: number): TypedColumn {
  const at = body.byteOffset + offset;
  return type === 'f64'
    ? new Float64Array(body.buffer, at, length)
    : type === 'i32'
      ? new Int32Array(body.buffer, at, length)
      : new Uint8Array(body.buffer, at, length);
}

/** The body where its arrays can view it: itself when aligned (a browser's frame), else one copy (a reader's body frame, a pooled Buffer). */
function aligned(body: Uint8Array): Uint8Array {
  if (body.byteOffset % ALIGN === 0) return body;
  const copy = new Uint8Array(body.byteLength);
  copy.set(body);
  return copy;
}

/**
 * The value with its typed arrays back in their slots, viewing `bytes`. Throws TypedWireError for a reference that is
 * not one: a slot that is missing or not null, bytes past the body, two arrays over the same bytes.
 */
export function joinTyped(value: unknown, refs: unknown, bytes: Uint8Array): unknown {
  if (!Array.isArray(refs) || refs.length > MAX_REFS) throw new TypedWireError(`its list of typed arrays is not a list of at most ${MAX_REFS}`);
  const body = refs.length ? aligned(bytes) : bytes;
  let root = value;
  let end = 0;
  refs.forEach((ref: unknown, i) => {
    if (!isRef(ref)) throw new TypedWireError(`typed array ${i} is not described by a path, a type, an aligned offset and a length`);
    const size = ref.length * SIZE[ref.type];
    if (ref.offset < end || ref.offset + size > body.byteLength)
      throw new TypedWireError(`typed array ${i} (${ref.path.join('.')}) lies past the body's ${body.byteLength} bytes or over another array`);
    end = ref.offset + size;
    const array = viewOf(body, ref.type, ref.offset, ref.length);
    if (ref.path.length === 0) {
      if (root !== null) throw new TypedWireError('a typed array is placed at the root, which is not empty');
      root = array;
      return;
    }
    let holder = root as Record<string, unknown>;
    for (const key of ref.path.slice(0, -1)) {
      if (!own(holder, key)) throw new TypedWireError(`typed array ${i} names ${ref.path.join('.')}, which the message does not hold`);
      holder = holder[key] as Record<string, unknown>;
    }
    const last = ref.path[ref.path.length - 1]!;
    if (!own(holder, last)) throw new TypedWireError(`typed array ${i} names ${ref.path.join('.')}, which the message does not hold`);
    if (holder[last] !== null) throw new TypedWireError(`typed array ${i} names ${ref.path.join('.')}, which is not an empty slot`);
    holder[last] = array;
  });
  return root;
}

const HEADER_BYTES = 4;

/** A message as the serve host sends it: JSON text, or (when it holds typed arrays) one binary frame as described above. */
export function encodeMessage(message: unknown): string | Uint8Array {
  const { text, refs, body } = stringifyTyped(message);
  if (!refs.length) return text;
  const header = new TextEncoder().encode(`{"typed":${JSON.stringify(refs)},"message":${text}}`);
  const start = padded(HEADER_BYTES + header.byteLength);
  const frame = new Uint8Array(start + body.byteLength);
  new DataView(frame.buffer).setUint32(0, header.byteLength, true);
  frame.set(header, HEADER_BYTES);
  frame.set(body, start);
  return frame;
}

/** A binary frame's message with its typed arrays in place (viewing the frame's buffer). Throws TypedWireError. */
export function decodeMessageFrame(frame: Uint8Array): unknown {
  if (frame.byteLength < HEADER_BYTES) throw new TypedWireError('a binary frame is shorter than its header');
  const length = new DataView(frame.buffer, frame.byteOffset, HEADER_BYTES).getUint32(0, true);
  if (length > frame.byteLength - HEADER_BYTES) throw new TypedWireError(`a binary frame's header claims ${length} bytes of its ${frame.byteLength}`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(frame.subarray(HEADER_BYTES, HEADER_BYTES + length)));
  } catch {
    throw new TypedWireError("a binary frame's header is not JSON");
  }
  if (typeof header !== 'object' || header === null || !('message' in header) || !('typed' in header))
    throw new TypedWireError("a binary frame's header holds no message and no list of typed arrays");
  const { message, typed } = header as { message: unknown; typed: unknown };
  try {
    return joinTyped(message, typed, frame.subarray(padded(HEADER_BYTES + length)));
  } catch (error) {
    if (!(error instanceof TypedWireError)) throw error;
    throw new TypedWireError(error.message, (message as { id?: unknown } | null)?.id);
  }
}
