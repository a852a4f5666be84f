import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
