/**
 * Base64 (RFC 4648, with padding) for typed arrays, without Node's Buffer or the DOM's atob/btoa: core/ runs in
 * both, and a timeline's columns cross the serve WebSocket and Electron IPC as JSON. Typed arrays are written in
 * the platform's byte order, which is little-endian on every platform the workbench runs on (checked).
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const CODES = new Uint8Array(64);
for (let i = 0; i < 64; i++) CODES[i] = ALPHABET.charCodeAt(i);
const VALUES = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) VALUES[ALPHABET.charCodeAt(i)] = i;
const PAD = 61; // '='

export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class Base64Error extends Error {}

/** Characters of base64 text for `bytes` bytes. */
export const base64Length = (bytes: number): number => Math.ceil(bytes / 3) * 4;

export function encodeBase64(bytes: Uint8Array): string {
  const n = bytes.length;
  const out = new Uint8Array(base64Length(n));
  let o = 0;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o++] = CODES[v >>> 18]!;
    out[o++] = CODES[(v >>> 12) & 63]!;
    out[o++] = CODES[(v >>> 6) & 63]!;
    out[o++] = CODES[v & 63]!;
  }
  if (i < n) {
    const v = (bytes[i]! << 16) | ((i + 1 < n ? bytes[i + 1]! : 0) << 8);
    out[o++] = CODES[v >>> 18]!;
    out[o++] = CODES[(v >>> 12) & 63]!;
    out[o++] = i + 1 < n ? CODES[(v >>> 6) & 63]! : PAD;
    out[o++] = PAD;
  }
  // Characters in slices: String.fromCharCode takes its arguments on the stack.
  let text = '';
  for (let at = 0; at < out.length; at += 0x8000) text += String.fromCharCode.apply(null, out.subarray(at, at + 0x8000) as unknown as number[]);
  return text;
}

/** Decodes base64 text into exactly `expectedBytes` bytes; throws Base64Error for anything else. */
export function decodeBase64(text: string, expectedBytes: number): Uint8Array {
  if (text.length !== base64Length(expectedBytes)) {
    throw new Base64Error(`holds ${text.length} base64 characters where ${base64Length(expectedBytes)} were expected (${expectedBytes} bytes)`);
  }
  const out = new Uint8Array(expectedBytes);
  const pads = (3 - (expectedBytes % 3)) % 3;
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const c0 = text.charCodeAt(i);
    const c1 = text.charCodeAt(i + 1);
    const c2 = text.charCodeAt(i + 2);
    const c3 = text.charCodeAt(i + 3);
    const v0 = c0 < 128 ? VALUES[c0]! : -1;
    const v1 = c1 < 128 ? VALUES[c1]! : -1;
    const last = i + 4 === text.length;
    const v2 = c2 === PAD && last ? 0 : c2 < 128 ? VALUES[c2]! : -1;
    const v3 = c3 === PAD && last ? 0 : c3 < 128 ? VALUES[c3]! : -1;
    if ((v0 | v1 | v2 | v3) < 0) throw new Base64Error(`has a character that is not base64 near position ${i}`);
    if (last && ((c3 === PAD) !== pads >= 1 || (c2 === PAD) !== (pads === 2))) throw new Base64Error('ends with padding that does not match its length');
    const v = (v0 << 18) | (v1 << 12) | (v2 << 6) | v3;
    if (o < expectedBytes) out[o++] = v >>> 16;
    if (o < expectedBytes) out[o++] = (v >>> 8) & 255;
    if (o < expectedBytes) out[o++] = v & 255;
  }
  return out;
}

type Typed = Float64Array | Int32Array | Uint8Array;

/** A column's bytes as base64; `encode` may be a native encoder where the platform has one (the host's Buffer). */
export const typedToBase64 = (column: Typed, encode: (bytes: Uint8Array) => string = encodeBase64): string =>
  encode(new Uint8Array(column.buffer, column.byteOffset, column.byteLength));

export function base64ToFloat64(text: string, count: number): Float64Array {
  return new Float64Array(decodeBase64(text, count * 8).buffer);
}

export function base64ToInt32(text: string, count: number): Int32Array {
  return new Int32Array(decodeBase64(text, count * 4).buffer);
}

export function base64ToUint8(text: string, count: number): Uint8Array {
  return decodeBase64(text, count);
}
