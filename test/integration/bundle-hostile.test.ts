import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ZipFile } from 'yazl';

import { BUNDLE_SCHEMA } from '../../core/bundle/bundle-limits';
import { BundleRefusedError, readBundle } from '../../main/bundle/read-bundle';
import { runCli } from '../helpers/cli';

// Bundles someone sent you are data: every hostile shape below is refused with its reason, nothing is
// written anywhere (a bundle is read into memory, never extracted), and nothing in one runs.
const dir = mkdtempSync(join(tmpdir(), 'wb-bundles-'));
const manifest = (over: object = {}) =>
  JSON.stringify({
    schema: 1,
    createdAt: '2026-11-23T12:00:00Z',
    workbench: { version: '0.1.0' },
    contents: { plan: null, result: null, sources: [] },
    ...over,
  });
const plan = (options: object = {}) =>
  JSON.stringify({
    version: 1,
    kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(float* p) { p[0] = 1; }', options }],
    buffers: [{ name: 'p', type: 'f32', count: 1 }],
    steps: [{ op: 'alloc', buffer: 'p' }],
  });

/** Writes a zip of these entries; `rename` swaps a name of the same length in the bytes, for names yazl refuses to write. */
async function zip(name: string, entries: { name: string; data: string | Buffer; mode?: number }[], rename?: [string, string]): Promise<string> {
  const z = new ZipFile();
  for (const e of entries) z.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data), e.name, e.mode ? { mode: e.mode } : {});
  z.end();
  const chunks: Buffer[] = [];
  for await (const chunk of z.outputStream) chunks.push(chunk as Buffer);
  let bytes = Buffer.concat(chunks);
  if (rename) {
    const [from, to] = rename.map((s) => Buffer.from(s));
    assert.equal(from!.length, to!.length);
    for (let at = bytes.indexOf(from!); at >= 0; at = bytes.indexOf(from!, at + 1)) to!.copy(bytes, at);
    bytes = Buffer.from(bytes);
  }
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

test('a well-formed bundle opens: its manifest, its plan checked, its entries in memory', async () => {
  const path = await zip('good.zip', [
    { name: 'manifest.json', data: manifest({ contents: { plan: 'plan.json', result: null, sources: ['src/k.cu'] } }) },
    { name: 'plan.json', data: plan() },
    { name: 'src/k.cu', data: '__global__ void k(float* p) { p[0] = 1; }' },
  ]);
  const bundle = await readBundle(path);
  assert.equal(bundle.manifest.schema, 1);
  assert.deepEqual([...bundle.entries.keys()].sort(), ['manifest.json', 'plan.json', 'src/k.cu']);
});

test('hostile bundles are each refused with the reason, and nothing is written', async () => {
  const before = readdirSync(dir).length;
  const cases: [string, Promise<string>, RegExp][] = [
    [
      'zip-slip',
      zip(
        'slip.zip',
        [
          { name: 'manifest.json', data: manifest() },
          { name: 'aa/evil.sh', data: 'x' },
        ],
        ['aa/evil.sh', '../evil.sh'],
      ),
      /climbs out|invalid relative path|not a readable zip/,
    ],
    [
      'absolute path',
      zip(
        'abs.zip',
        [
          { name: 'manifest.json', data: manifest() },
          { name: 'xetc/passwd', data: 'x' },
        ],
        ['xetc/passwd', '/etc/passwd'],
      ),
      /absolute path/,
    ],
    [
      'symlink',
      zip('link.zip', [
        { name: 'manifest.json', data: manifest() },
        { name: 'link', data: '/etc/passwd', mode: 0o120777 },
      ]),
      /is a symbolic link/,
    ],
    [
      'duplicate names',
      zip(
        'dup.zip',
        [
          { name: 'manifest.json', data: manifest() },
          { name: 'a.txt', data: '1' },
          { name: 'b.txt', data: '2' },
        ],
        ['b.txt', 'a.txt'],
      ),
      /appears twice/,
    ],
    [
      'zip bomb',
      zip('bomb.zip', [
        { name: 'manifest.json', data: manifest() },
        { name: 'zeros.bin', data: Buffer.alloc(64 * 1024 * 1024) },
      ]),
      /zip bomb's ratio/,
    ],
    ['bad JSON', zip('badjson.zip', [{ name: 'manifest.json', data: '{"schema": 1,' }]), /manifest\.json is not valid JSON/],
    [
      'future schema',
      zip('future.zip', [{ name: 'manifest.json', data: manifest({ schema: 9 }) }]),
      new RegExp(`newer GPU Workbench \\(bundle schema 9\\); this version reads schema ${BUNDLE_SCHEMA}`),
    ],
    ['no manifest', zip('nomanifest.zip', [{ name: 'plan.json', data: plan() }]), /no manifest\.json/],
    [
      'a forbidden compiler flag in its plan',
      zip('flag.zip', [
        { name: 'manifest.json', data: manifest({ contents: { plan: 'plan.json', result: null, sources: [] } }) },
        { name: 'plan.json', data: plan({ extraFlags: ['-Xcompiler', '-fplugin=/tmp/x.so'] }) },
      ]),
      /its plan is not valid/,
    ],
    [
      'a missing entry the manifest names',
      zip('missing.zip', [{ name: 'manifest.json', data: manifest({ contents: { plan: 'plan.json', result: null, sources: [] } }) }]),
      /names "plan\.json", which the bundle does not hold/,
    ],
    ['not a zip', Promise.resolve(join(dir, 'notzip.zip')).then((p) => (writeFileSync(p, 'hello'), p)), /not a readable zip/],
  ];
  for (const [what, pathPromise, reason] of cases) {
    const path = await pathPromise;
    await assert.rejects(readBundle(path), (e: unknown) => e instanceof BundleRefusedError && reason.test(e.reason), what);
  }
  assert.equal(readdirSync(dir).length, before + cases.length, 'only the test’s own zips are in the folder: nothing was extracted');
});

/** A zip of empty stored entries, written directly: yazl takes minutes for 100,000 entries. */
function manyEmptyEntries(count: number): Buffer {
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
  // ZIP64 is not needed below 65,535 entries; above, the count lives in the ZIP64 end record.
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

test('100,000 entries are refused from the count in the zip’s directory, before any is read', async () => {
  const path = join(dir, 'many.zip');
  writeFileSync(path, manyEmptyEntries(100_000));
  const started = performance.now();
  await assert.rejects(readBundle(path), (e: unknown) => e instanceof BundleRefusedError && /100000 entries, over the limit of 10000/.test(e.reason));
  console.log(`# refused in ${(performance.now() - started).toFixed(0)} ms`);
});

test('gpu-workbench bundle inspect: the summary of a good bundle; a hostile one refused with exit 64 and its reason', async () => {
  const good = await zip('inspect-good.zip', [
    { name: 'manifest.json', data: manifest({ contents: { plan: 'plan.json', result: null, sources: [] } }) },
    { name: 'plan.json', data: plan() },
  ]);
  const ok = await runCli(['bundle', 'inspect', good]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /schema 1, made 2026-11-23T12:00:00Z by GPU Workbench 0\.1\.0/);
  assert.match(ok.stdout, /plan\.json/);
  const bad = await zip('inspect-bad.zip', [{ name: 'manifest.json', data: manifest({ schema: 3 }) }]);
  const refused = await runCli(['bundle', 'inspect', bad]);
  assert.equal(refused.code, 64);
  assert.match(refused.stderr, /was not opened: it was made by a newer GPU Workbench \(bundle schema 3\).*Nothing was written/);
});
