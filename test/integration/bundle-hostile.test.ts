import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { BUNDLE_SCHEMA } from '../../core/bundle/bundle-limits';
import { BundleRefusedError, readBundle } from '../../main/bundle/read-bundle';
import { bundleManifest, manyEmptyEntriesZip, tinyPlan, writeZip } from '../helpers/bundle-zips';
import { runCli } from '../helpers/cli';

// Bundles someone sent you are data: every hostile shape below is refused with its reason, nothing is
// written anywhere (a bundle is read into memory, never extracted), and nothing in one runs.
const dir = mkdtempSync(join(tmpdir(), 'wb-bundles-'));
const manifest = (over: object = {}) => bundleManifest(over, 1);
const plan = tinyPlan;
const zip = (name: string, entries: Parameters<typeof writeZip>[2], rename?: [string, string]) => writeZip(dir, name, entries, rename);

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

test('100,000 entries are refused from the count in the zip’s directory, before any is read', async () => {
  const path = join(dir, 'many.zip');
  writeFileSync(path, manyEmptyEntriesZip(100_000));
  const started = performance.now();
  await assert.rejects(readBundle(path), (e: unknown) => e instanceof BundleRefusedError && /100000 entries, over the limit of 1024/.test(e.reason));
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
  const bad = await zip('inspect-bad.zip', [{ name: 'manifest.json', data: manifest({ schema: BUNDLE_SCHEMA + 1 }) }]);
  const refused = await runCli(['bundle', 'inspect', bad]);
  assert.equal(refused.code, 64);
  assert.match(
    refused.stderr,
    new RegExp(`was not opened: it was made by a newer GPU Workbench \\(bundle schema ${BUNDLE_SCHEMA + 1}\\).*Nothing was written`),
  );
});
