import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { BundleRefusedError, openBundleView, readBundle } from '../../main/bundle/read-bundle';
import {
  bundleManifest,
  craftedZip,
  deflatedZip,
  DIGITS,
  EMPTY_OBJECTS,
  localHeader,
  mebibyteEntriesZip,
  repeatedText,
  sharedStreamZip,
  streamedZip,
  tinyPlan,
  zipFileBytes,
  type ZipFileBytes,
} from '../helpers/bundle-zips';
import { runCli } from '../helpers/cli';

// Issue 25, "limits before work": small files that made `bundle inspect` die (V8's invalid size error, out of heap)
// or take a gigabyte, each made here at test time and refused in words before the work, with the test's memory flat.
const dir = mkdtempSync(join(tmpdir(), 'wb-hostile-limits-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const MB = 1e6;
const manifest = (contents: object = {}) => Buffer.from(bundleManifest({ contents: { plan: null, result: null, sources: [], ...contents } }));

/** Opens the bundle, which must be refused for `reason`; prints the time and the RSS it took (sampled as it runs). */
async function refused(what: string, path: string, reason: RegExp, open: (path: string) => Promise<unknown> = readBundle): Promise<void> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
  const started = performance.now();
  let error: unknown;
  try {
    await open(path);
  } catch (e) {
    error = e;
  } finally {
    clearInterval(timer);
  }
  const ms = performance.now() - started;
  peak = Math.max(peak, process.memoryUsage().rss);
  const file = statSync(path).size;
  console.log(
    `# ${what} (${(file / MB).toFixed(2)} MB file): refused in ${ms.toFixed(0)} ms, RSS ${(before / MB).toFixed(0)} MB → peak ${(peak / MB).toFixed(0)} MB (+${((peak - before) / MB).toFixed(0)} MB)`,
  );
  assert.ok(error instanceof BundleRefusedError, `${what}: ${error === undefined ? 'opened' : String(error)}`);
  console.log(`#   ${error.reason}`);
  assert.match(error.reason, reason, what);
  assert.ok(peak - before < 200 * MB, `${what}: RSS rose ${((peak - before) / MB).toFixed(0)} MB`);
}

/** The compressed to uncompressed sizes of a zip's single entry, from its central directory (no ZIP64, no comment). */
function centralSizes(path: string): { at: number; compressed: number; uncompressed: number } {
  const fd = openSync(path, 'r');
  try {
    const size = statSync(path).size;
    const end = Buffer.alloc(22);
    readSync(fd, end, 0, 22, size - 22);
    const at = end.readUInt32LE(16);
    const header = Buffer.alloc(46);
    readSync(fd, header, 0, 46, at);
    return { at, compressed: header.readUInt32LE(20), uncompressed: header.readUInt32LE(24) };
  } finally {
    closeSync(fd);
  }
}

test('a manifest of 140 million numbers, deflated as a text is (every zip check passed before), is refused by its size before it is inflated', async () => {
  const path = await deflatedZip(join(dir, 'numbers.zip'), 'manifest.json', repeatedText(280_000_001, '[', DIGITS, '0]'));
  const sizes = centralSizes(path);
  assert.ok(sizes.uncompressed < 200 * sizes.compressed, `the ratio is a text's, not a bomb's: ${(sizes.uncompressed / sizes.compressed).toFixed(0)}`);
  await refused('manifest of 140 million numbers', path, /^the entry "manifest\.json" is 280000001 bytes, over the limit of 262144 for a bundle manifest$/);
  const inspected = await runCli(['bundle', 'inspect', path]);
  assert.equal(inspected.code, 64, inspected.stderr);
  assert.match(inspected.stderr, /was not opened: the entry "manifest\.json" is 280000001 bytes, over the limit of 262144 for a bundle manifest/);

  // The same stream declaring 200 bytes: refused by what it inflates to, at the first chunk past them.
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.from([200, 0, 0, 0]), 0, 4, sizes.at + 24);
  closeSync(fd);
  await refused('the same, declaring 200 bytes', path, /^the entry "manifest\.json" (is damaged \(too many bytes in the stream|holds more than it declares)/);
});

test('a manifest of 503 MB of {}, deflated as a text is, is refused by its size before it is inflated', async () => {
  const path = await deflatedZip(join(dir, 'objects.zip'), 'manifest.json', repeatedText(503_000_000, '[', EMPTY_OBJECTS, '{}]'));
  const sizes = centralSizes(path);
  assert.ok(sizes.uncompressed < 200 * sizes.compressed, `ratio ${(sizes.uncompressed / sizes.compressed).toFixed(0)}`);
  await refused('manifest of 503 MB of {}', path, /^the entry "manifest\.json" is 503000000 bytes, over the limit of 262144 for a bundle manifest$/);
});

test('1,000 entries of 1 MiB (a 1 MB zip) are refused by the bundle’s total from the directory, before any is inflated', async () => {
  const path = join(dir, 'thousand.zip');
  writeFileSync(path, mebibyteEntriesZip(manifest()));
  await refused('1,000 entries of 1 MiB', path, /^its entries declare more than 402653184 bytes in all$/, openBundleView);
});

test('1,000 directory entries pointing at one compressed stream (a 50 KB zip) are refused as overlapping', async () => {
  const man = zipFileBytes('manifest.json', manifest());
  const first = Buffer.concat([localHeader(man), man.body]);
  const path = join(dir, 'shared.zip');
  writeFileSync(path, sharedStreamZip(manifest()));
  await refused('1,000 entries sharing one stream', path, /^the entries "e\/0" and "e\/1" overlap in the zip \(both start at byte \d+\)/, openBundleView);

  // An entry whose local header lies inside another's data (a quoted overlap) is refused too.
  const inner = zipFileBytes('b.txt', Buffer.from('hello'));
  const outer = zipFileBytes('a.bin', Buffer.concat([localHeader(inner), inner.body]));
  const quoted = Buffer.concat([first, localHeader(outer), outer.body]);
  const nested: { file: ZipFileBytes; offset: number }[] = [
    { file: man, offset: 0 },
    { file: outer, offset: first.length },
    { file: inner, offset: first.length + localHeader(outer).length },
  ];
  writeFileSync(join(dir, 'quoted.zip'), craftedZip(quoted, nested));
  await refused(
    'an entry inside another',
    join(dir, 'quoted.zip'),
    /^the entries "a\.bin" and "b\.txt" overlap in the zip \(the second starts inside the first, at byte \d+\)/,
  );
});

test('each entry is held to its role’s limit: its size before it is inflated, its JSON’s shape before it is parsed', async () => {
  const named = (contents: object) => ({ name: 'manifest.json', chunks: manifest(contents) });
  const source = await streamedZip(join(dir, 'source.zip'), [
    named({ sources: ['sources/k.cu'] }),
    { name: 'sources/k.cu', chunks: repeatedText(17 * 1024 ** 2, '// ', DIGITS, '\n') },
  ]);
  await refused('a 17 MiB source', source, /^the entry "sources\/k\.cu" is 17825792 bytes, over the limit of 16777216 for a kernel source$/);
  const unnamed = await streamedZip(join(dir, 'unnamed.zip'), [named({}), { name: 'extra.bin', chunks: repeatedText(2 * 1024 ** 2, '', DIGITS, '') }]);
  await refused(
    'an unnamed 2 MiB entry',
    unnamed,
    /^the entry "extra\.bin" is 2097152 bytes, over the limit of 1048576 for an entry the manifest does not name$/,
  );
  const values = await streamedZip(join(dir, 'values.zip'), [
    named({ result: 'result.json' }),
    { name: 'result.json', chunks: repeatedText(9_000_001, '[', DIGITS, '0]') },
  ]);
  await refused(
    'a result of 4.5 million numbers',
    values,
    /^result\.json holds more than 4,000,000 values \(the next one at byte 7,999,999\), over the limit for a run result$/,
    openBundleView,
  );
  const deep = await streamedZip(join(dir, 'deep.zip'), [named({ plan: 'plan.json' }), { name: 'plan.json', chunks: Buffer.from('['.repeat(100_000)) }]);
  await refused('a plan nested 100,000 deep', deep, /^plan\.json nests arrays and objects 33 deep at byte 32, over the limit of 32 for a launch plan$/);
  const plan = await streamedZip(join(dir, 'plan.zip'), [named({ plan: 'plan.json' }), { name: 'plan.json', chunks: Buffer.from(tinyPlan()) }]);
  assert.equal((await readBundle(plan)).manifest.contents.plan, 'plan.json', 'a plan within its limits opens');
});
