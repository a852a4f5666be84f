import assert from 'node:assert/strict';
import { createWriteStream, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';

import { ZipFile } from 'yazl';

import { BUNDLE_SCHEMA } from '../../core/bundle/bundle-limits';

/** Bundles made by hand for the tests that open them, the hostile ones included. */

/** Writes a zip of these entries into `dir`; `rename` swaps a name of the same length in the bytes, for names yazl refuses to write. */
export async function writeZip(
  dir: string,
  name: string,
  entries: { name: string; data: string | Buffer; mode?: number }[],
  rename?: [string, string],
): Promise<string> {
  const z = new ZipFile();
  for (const e of entries) z.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data), e.name, e.mode ? { mode: e.mode } : {});
  z.end();
  const chunks: Buffer[] = [];
  for await (const chunk of z.outputStream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  if (rename) {
    const [from, to] = rename.map((s) => Buffer.from(s));
    assert.equal(from!.length, to!.length, 'a rename keeps the length, so the zip stays readable');
    for (let at = bytes.indexOf(from!); at >= 0; at = bytes.indexOf(from!, at + 1)) to!.copy(bytes, at);
  }
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

export const bundleManifest = (over: object = {}, schema: number = BUNDLE_SCHEMA): string =>
  JSON.stringify({
    schema,
    createdAt: '2026-11-23T12:00:00Z',
    workbench: { version: '0.1.0' },
    contents: { plan: null, result: null, sources: [] },
    ...over,
  });

/** A one-kernel plan, with these compile options. */
export const tinyPlan = (options: object = {}): string =>
  JSON.stringify({
    version: 1,
    kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(float* p) { p[0] = 1; }', options }],
    buffers: [{ name: 'p', type: 'f32', count: 1 }],
    steps: [{ op: 'alloc', buffer: 'p' }],
  });

/** A zip of `count` empty stored entries, written directly: yazl takes minutes for 100,000 of them. */
export function manyEmptyEntriesZip(count: number): Buffer {
  const local: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const name = Buffer.from(`e/${i}`);
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(10, 4);
    header.writeUInt16LE(name.length, 26);
    local.push(header, name);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(10, 6);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt32LE(offset, 42);
    central.push(entry, name);
    offset += 30 + name.length;
  }
  const directory = Buffer.concat(central);
  // Past 65,535 entries the count lives in the ZIP64 end record.
  const zip64End = Buffer.alloc(56);
  zip64End.writeUInt32LE(0x06064b50, 0);
  zip64End.writeBigUInt64LE(44n, 4);
  zip64End.writeUInt16LE(45, 12);
  zip64End.writeUInt16LE(45, 14);
  zip64End.writeBigUInt64LE(BigInt(count), 24);
  zip64End.writeBigUInt64LE(BigInt(count), 32);
  zip64End.writeBigUInt64LE(BigInt(directory.length), 40);
  zip64End.writeBigUInt64LE(BigInt(offset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(offset + directory.length), 8);
  locator.writeUInt32LE(1, 16);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(0xffff, 8);
  end.writeUInt16LE(0xffff, 10);
  end.writeUInt32LE(0xffffffff, 12);
  end.writeUInt32LE(0xffffffff, 16);
  return Buffer.concat([...local, directory, zip64End, locator, end]);
}

/** A zip of these entries, each streamed through yazl from its chunks: a text of hundreds of MB made without holding it. */
export async function streamedZip(path: string, entries: { name: string; chunks: Iterable<Buffer> | Buffer }[]): Promise<string> {
  const z = new ZipFile();
  for (const e of entries)
    if (Buffer.isBuffer(e.chunks)) z.addBuffer(e.chunks, e.name);
    else z.addReadStream(Readable.from(e.chunks), e.name);
  z.end();
  await pipeline(z.outputStream, createWriteStream(path));
  return path;
}

/**
 * `bytes` of text: `head`, then `block` again and again, then `tail`. Deflate finds each repeat a block back, so it
 * compresses a block of a few KiB of varied text 100 to 150 to 1: under a zip bomb's ratio, as a crafted file would be.
 */
export function* repeatedText(bytes: number, head: string, block: Buffer, tail: string): Generator<Buffer> {
  yield Buffer.from(head);
  let left = bytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
  for (; left >= block.length; left -= block.length) yield block;
  yield block.subarray(0, left);
  yield Buffer.from(tail);
}

/** One file as a zip holds it: stored, or deflated; its bytes (`body`) when they are in memory. */
export interface ZipFileBytes {
  name: string;
  method: 0 | 8;
  crc: number;
  size: number;
  compressedSize: number;
  body: Buffer;
}

export function zipFileBytes(name: string, data: Buffer, deflate = false): ZipFileBytes {
  const body = deflate ? deflateRawSync(data) : data;
  return { name, method: deflate ? 8 : 0, crc: crc32(data), size: data.length, compressedSize: body.length, body };
}

/** A file's local header, its name included (30 bytes and the name): its data follows. */
export function localHeader(f: Omit<ZipFileBytes, 'body'>): Buffer {
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(20, 4);
  h.writeUInt16LE(f.method, 8);
  h.writeUInt32LE(f.crc, 14);
  h.writeUInt32LE(f.compressedSize, 18);
  h.writeUInt32LE(f.size, 22);
  h.writeUInt16LE(Buffer.byteLength(f.name), 26);
  return Buffer.concat([h, Buffer.from(f.name)]);
}

type DirectoryEntry = { file: Omit<ZipFileBytes, 'body'>; offset: number; name?: string };

/** The central directory and its end record, for a zip whose local headers and data take `bodyBytes`. */
function directoryAndEnd(directory: DirectoryEntry[], bodyBytes: number): Buffer {
  const central = directory.map(({ file, offset, name }) => {
    const n = Buffer.from(name ?? file.name);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(file.method, 10);
    c.writeUInt32LE(file.crc, 16);
    c.writeUInt32LE(file.compressedSize, 20);
    c.writeUInt32LE(file.size, 24);
    c.writeUInt16LE(n.length, 28);
    c.writeUInt32LE(offset, 42);
    return Buffer.concat([c, n]);
  });
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(directory.length, 8);
  end.writeUInt16LE(directory.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(bodyBytes, 16);
  return Buffer.concat([dir, end]);
}

/**
 * A zip made by hand, for shapes no writer makes: `body` as given (local headers and data), then a central directory
 * whose entries point where they are told — several at one local header, or one inside another's data.
 */
export function craftedZip(body: Buffer, directory: DirectoryEntry[]): Buffer {
  return Buffer.concat([body, directoryAndEnd(directory, body.length)]);
}

/**
 * A zip of one entry deflated as it streams from `chunks` to the file (node:zlib, the CRC native too): hundreds of MB
 * of text zipped in seconds without holding them. Sizes under 4 GiB (no ZIP64).
 */
export async function deflatedZip(path: string, name: string, chunks: Iterable<Buffer>): Promise<string> {
  const file = { name, method: 8 as const, crc: 0, size: 0, compressedSize: 0 };
  const header = localHeader(file).length;
  const out = await open(path, 'w');
  try {
    const counted = function* () {
      for (const chunk of chunks) {
        file.crc = crc32(chunk, file.crc);
        file.size += chunk.length;
        yield chunk;
      }
    };
    await pipeline(Readable.from(counted()), createDeflateRaw(), async (deflated: AsyncIterable<Buffer>) => {
      for await (const chunk of deflated) {
        await out.write(chunk, 0, chunk.length, header + file.compressedSize);
        file.compressedSize += chunk.length;
      }
    });
    await out.write(localHeader(file), 0, header, 0);
    const tail = directoryAndEnd([{ file, offset: 0 }], header + file.compressedSize);
    await out.write(tail, 0, tail.length, header + file.compressedSize);
  } finally {
    await out.close();
  }
  return path;
}

/** A block of varied text, seeded: repeated, deflate compresses it 100 to 150 to 1 (a bomb's ratio is 200), as a crafted file would be. */
export function variedBlock(bytes: number, piece: (next: () => number) => string): Buffer {
  let seed = 25;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  let text = '';
  while (text.length < bytes) text += piece(next);
  return Buffer.from(text.slice(0, bytes));
}
/** 16 KiB of one-digit numbers and commas; 4 KiB of `{}` and commas among varied white space. */
export const DIGITS = variedBlock(16384, (next) => `${Math.floor(next() * 10)},`);
const WHITESPACE = ['', ' ', '\t', '\n', '\r', '  '];
export const EMPTY_OBJECTS = variedBlock(4096, (next) => `${WHITESPACE[Math.floor(next() * 6)]}{}${WHITESPACE[Math.floor(next() * 6)]},`);

/** Each entry its own stream, as a writer makes them: the same MiB of zeros deflated once and written `count` times (a 1.1 MB zip). */
export function mebibyteEntriesZip(manifest: Buffer, count = 1000): Buffer {
  const files = [zipFileBytes('manifest.json', manifest), ...Array.from({ length: count }, (_, i) => zipFileBytes(`e/${i}`, Buffer.alloc(0)))];
  const zeros = zipFileBytes('e/x', Buffer.alloc(1024 ** 2), true);
  const parts: Buffer[] = [];
  let offset = 0;
  const directory = files.map((f, i) => {
    const file = i === 0 ? f : { ...zeros, name: f.name };
    const at = offset;
    parts.push(localHeader(file), file.body);
    offset += localHeader(file).length + file.body.length;
    return { file, offset: at };
  });
  return craftedZip(Buffer.concat(parts), directory);
}

/** `count` directory entries that all point at one compressed MiB of zeros (a 50 KB zip). */
export function sharedStreamZip(manifest: Buffer, count = 1000): Buffer {
  const man = zipFileBytes('manifest.json', manifest);
  const shared = zipFileBytes('e/0', Buffer.alloc(1024 ** 2), true);
  const first = Buffer.concat([localHeader(man), man.body]);
  const body = Buffer.concat([first, localHeader(shared), shared.body]);
  return craftedZip(body, [{ file: man, offset: 0 }, ...Array.from({ length: count }, (_, i) => ({ file: shared, offset: first.length, name: `e/${i}` }))]);
}
