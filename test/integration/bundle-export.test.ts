import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { launchPlanSchema } from '../../core/plan/plan-schema';
import { readBundle } from '../../main/bundle/read-bundle';
import { BundleWriteError, buildBundleEntries, writeBundle } from '../../main/bundle/write-bundle';
import { makeRedactor } from '../../core/bundle/redact';
import { ROOT, runCli } from '../helpers/cli';

// `gpu-workbench bundle export` writes what `bundle inspect` opens, hides who and where by default, and
// never leaves a part of a zip behind.
const dir = mkdtempSync(join(tmpdir(), 'wb-export-'));
const RESULT = join(ROOT, 'test/fixtures/runs/oob-off-by-one.json');
const PLAN = join(ROOT, 'samples/oob-off-by-one/plan.json');
const recorded = JSON.parse(readFileSync(RESULT, 'utf8')) as { diagnosis: { kind: string } };
const UUID = 'GPU-5e7f6a2b-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
// Names that would leak: set as this machine's, then looked for in every byte of the bundle.
const leaky = {
  HOME: '/home/zelda-quartz',
  USER: 'zelda',
  LOGNAME: 'zelda',
  HOSTNAME: 'quartzhost-17.lab.example',
  LD_LIBRARY_PATH: '/home/zelda-quartz/cuda/lib64:/opt/cuda/lib64',
  CUDA_VISIBLE_DEVICES: UUID,
  SECRET_API_TOKEN: 'do-not-ship-me',
};
const sanitizerReport = join(dir, 'sanitize.json');
writeFileSync(sanitizerReport, JSON.stringify({ verdict: 'clean', headline: 'no errors', raw: 'ran by zelda on quartzhost-17 in /home/zelda-quartz/work' }));

const text = (entries: Map<string, Uint8Array>) => [...entries.values()].map((b) => Buffer.from(b).toString('utf8')).join('\n');

test('export then inspect: the bundle round-trips with every entry the manifest names', async () => {
  const out = join(dir, 'oob.zip');
  const r = await runCli(['bundle', 'export', '--result', RESULT, '--plan', PLAN, '--sanitizer', sanitizerReport, '--out', out, '--doctor-timeout', '20'], {
    env: leaky,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /✓ Wrote .*oob\.zip .*redacted/);
  const bundle = await readBundle(out);
  assert.deepEqual([...bundle.entries.keys()].sort(), [
    'doctor.json',
    'environment.json',
    'manifest.json',
    'plan.json',
    'repro/CMakeLists.txt',
    'repro/Makefile',
    'repro/README.md',
    'repro/repro.cu',
    'result.json',
    'sanitizer.json',
    'sources/broken.cu',
  ]);
  assert.equal(bundle.manifest.schema, 1);
  assert.equal(bundle.manifest.redacted, true);
  assert.deepEqual(bundle.manifest.contents.sources, ['sources/broken.cu']);
  const json = (name: string) => JSON.parse(Buffer.from(bundle.entries.get(name)!).toString('utf8')) as Record<string, unknown>;
  const plan = launchPlanSchema.parse(json('plan.json'));
  assert.match(plan.kernels[0]!.source, /i <= n/, 'the broken source is in the plan');
  assert.equal((json('result.json')['diagnosis'] as { kind: string }).kind, recorded.diagnosis.kind);
  assert.ok(Array.isArray((json('doctor.json') as { checks?: unknown[] }).checks) || 'timedOut' in json('doctor.json'));
  assert.match(Buffer.from(bundle.entries.get('repro/Makefile')!).toString(), /^ARCH \?= sm_90$/m, 'the run compiled for sm_90');
  const inspect = await runCli(['bundle', 'inspect', out, '--json']);
  assert.equal(inspect.code, 0, inspect.stderr);
  assert.equal((JSON.parse(inspect.stdout) as { entries: unknown[] }).entries.length, 11);
});

test('redaction by default: no user name, host name, home path, GPU UUID or unlisted variable in any entry', async () => {
  const out = join(dir, 'redacted.zip');
  const r = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--sanitizer', sanitizerReport, '--out', out], { env: leaky });
  assert.equal(r.code, 0, r.stderr);
  const bundle = await readBundle(out);
  const all = text(bundle.entries);
  for (const secret of ['zelda', 'quartzhost', '/home/zelda-quartz', UUID, 'do-not-ship-me', 'SECRET_API_TOKEN'])
    assert.ok(!all.includes(secret), `"${secret}" is in the bundle`);
  const env = JSON.parse(Buffer.from(bundle.entries.get('environment.json')!).toString()) as { redacted: boolean; variables: Record<string, string> };
  assert.equal(env.redacted, true);
  assert.equal(env.variables['LD_LIBRARY_PATH'], '~/cuda/lib64:/opt/cuda/lib64');
  assert.equal(env.variables['CUDA_VISIBLE_DEVICES'], 'GPU-0');
  assert.match(Buffer.from(bundle.entries.get('sanitizer.json')!).toString(), /ran by <user> on <host> in ~\/work/);

  const plain = join(dir, 'plain.zip');
  const p = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', plain, '--no-redact'], { env: leaky });
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.stdout, /NOT redacted/);
  const opened = await readBundle(plain);
  assert.equal(opened.manifest.redacted, false);
  assert.match(Buffer.from(opened.entries.get('environment.json')!).toString(), /\/home\/zelda-quartz\/cuda\/lib64/);
  assert.ok(!text(opened.entries).includes('do-not-ship-me'), 'the allow-list holds without redaction too');
});

test('--preview prints exactly the files export writes and the redacted environment, and writes nothing', async () => {
  const out = join(dir, 'preview.zip');
  const r = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', out, '--preview', '--json'], { env: leaky });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!existsSync(out), 'a preview writes nothing');
  const preview = JSON.parse(r.stdout) as { files: { name: string }[]; environment: Record<string, string>; redacted: boolean };
  assert.deepEqual(preview.environment, {
    CUDA_VISIBLE_DEVICES: 'GPU-0',
    LD_LIBRARY_PATH: '~/cuda/lib64:/opt/cuda/lib64',
    ...(preview.environment['PATH'] ? { PATH: preview.environment['PATH'] } : {}),
  });
  const written = join(dir, 'same.zip');
  assert.equal((await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', written], { env: leaky })).code, 0);
  assert.deepEqual(
    preview.files.map((f) => f.name),
    [...(await readBundle(written)).entries.keys()],
  );
  const human = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--preview'], { env: leaky });
  assert.match(human.stdout, /nothing written/);
  assert.match(human.stdout, /^ {2}CUDA_VISIBLE_DEVICES=GPU-0$/m);
});

test('--no-sources leaves kernel text and repro/ out; the plan keeps its shape and still opens', async () => {
  const out = join(dir, 'nosrc.zip');
  const r = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', out, '--no-sources']);
  assert.equal(r.code, 0, r.stderr);
  const bundle = await readBundle(out);
  assert.ok(![...bundle.entries.keys()].some((n) => n.startsWith('sources/') || n.startsWith('repro/')));
  const plan = launchPlanSchema.parse(JSON.parse(Buffer.from(bundle.entries.get('plan.json')!).toString()));
  assert.equal(plan.kernels[0]!.source, '');
  assert.ok(!text(bundle.entries).includes('i <= n'));
});

test('a bundle that cannot be written says why and leaves nothing: a missing folder, a folder in the way', async () => {
  const missing = join(dir, 'no-such-folder', 'b.zip');
  const r = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', missing]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /was not written to .*no-such-folder\/b\.zip: its folder does not exist\. Nothing was left behind\./);
  assert.ok(!existsSync(join(dir, 'no-such-folder')));
  const folder = join(dir, 'a-folder.zip');
  mkdirSync(folder);
  const f = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', folder]);
  assert.equal(f.code, 1);
  assert.match(f.stderr, /it is a folder/);
  const bad = await runCli(['bundle', 'export', '--result', RESULT]);
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /--plan plan\.json or --sample NAME/);
});

test('a write that fails midway leaves the old bundle whole and no temporary file', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'wb-atomic-'));
  const target = join(folder, 'keep.zip');
  const good = new Map([['manifest.json', new TextEncoder().encode('{}')]]);
  await writeBundle(target, good);
  const before = readFileSync(target);
  // yazl refuses the second name after the first entry has streamed into the temporary file.
  const failing = new Map([
    ['manifest.json', new Uint8Array(64 * 1024).fill(65)],
    ['../escape.txt', new Uint8Array(8)],
  ]);
  await assert.rejects(writeBundle(target, failing), (e: unknown) => e instanceof BundleWriteError && /Nothing was left behind/.test(e.message));
  assert.deepEqual(readFileSync(target), before);
  assert.deepEqual(readdirSync(folder), ['keep.zip']);
});

test('a user named like a buffer (root, in containers): the plan and repro.cu keep the name, and the repro still builds', async (t) => {
  const plan = launchPlanSchema.parse({
    version: 1,
    kernels: [{ id: 'root', entry: 'root', source: '__global__ void root(float* root) { root[threadIdx.x] = 1.0f; }', sourceName: 'root.cu' }],
    buffers: [{ name: 'root', type: 'f32', count: 32 }],
    steps: [
      { op: 'alloc', buffer: 'root' },
      { op: 'launch', kernel: 'root', grid: [1, 1, 1], block: [32, 1, 1], args: [{ buffer: 'root' }] },
      { op: 'download', buffer: 'root', expect: { kind: 'constant', value: 1 } },
      { op: 'free', buffer: 'root' },
    ],
  });
  const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/oob-off-by-one.json'), 'utf8'));
  const { entries } = buildBundleEntries({
    plan,
    outcome,
    origin: '/root/plan.json',
    workbenchVersion: '0',
    createdAt: new Date(0).toISOString(),
    includeSources: true,
    redactor: makeRedactor({ userNames: ['root'], hostNames: ['gpu-box'], homeDirs: ['/root'] }),
    env: {},
    doctor: null,
    arch: 'sm_90',
  });
  const text = (name: string) => new TextDecoder().decode(entries.get(name)!);
  const written = JSON.parse(text('plan.json')) as { buffers: { name: string }[]; kernels: { id: string; entry: string }[] };
  assert.deepEqual([written.buffers[0]!.name, written.kernels[0]!.id, written.kernels[0]!.entry], ['root', 'root', 'root']);
  assert.doesNotMatch(text('repro/repro.cu'), /<user>/);
  if (!existsSync('/usr/local/cuda/bin/nvcc')) return t.skip('nvcc is not installed here');
  const dir = mkdtempSync(join(tmpdir(), 'wb-root-repro-'));
  writeFileSync(join(dir, 'repro.cu'), entries.get('repro/repro.cu')!);
  execFileSync('/usr/local/cuda/bin/nvcc', ['-arch=sm_90', '-o', join(dir, 'repro'), join(dir, 'repro.cu')], { stdio: 'pipe' });
});
