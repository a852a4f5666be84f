import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { discoverLibraries } from '../../main/services/discovery-service';
import { get } from 'node:http';

import { parseJson, runCli, SAMPLES } from '../helpers/cli';
import { startServe } from '../helpers/serve';

const hasDriver = discoverLibraries().cuda.loaded;
const vecAdd = join(SAMPLES, 'vector-add/vector_add.cu');
const noStack = (text: string) => assert.doesNotMatch(text, /\n\s+at .+[:(].*\d+:\d+\)?/, 'no stack trace');

test(
  'devices --json without a driver: a structured answer naming every path searched, exit 2',
  { skip: hasDriver && 'this machine has a driver' },
  async () => {
    const r = await runCli(['devices', '--json']);
    assert.equal(r.code, 2);
    const out = parseJson<{ ok: boolean; problem: { title: string; searched: string[] }; discovery: { cuda: { attempts: unknown[] } } }>(r);
    assert.equal(out.ok, false);
    assert.equal(out.problem.title, 'No NVIDIA driver found');
    assert.ok(out.problem.searched.some((s) => s.startsWith('libcuda.so.1 (loader path)')));
    assert.equal(out.problem.searched.length, out.discovery.cuda.attempts.length);
    noStack(r.stdout + r.stderr);
  },
);

test('run without a driver says so, after validating the input', { skip: hasDriver && 'this machine has a driver' }, async () => {
  const r = await runCli(['run', vecAdd, '--kernel', 'vecAdd', '--arg', 'a:f32[4]', '--arg', 'b:f32[4]', '--arg', 'c:f32[4]', '--arg', 'n:i32=4']);
  assert.equal(r.code, 2);
  assert.match(r.stdout, /No NVIDIA driver found/);
  noStack(r.stdout + r.stderr);
});

test('bad command lines get one clear message and exit 64', async () => {
  const cases: [string[], RegExp][] = [
    [['run', vecAdd, '--kernel', 'vecAdd', '--grid', '4,,2'], /--grid "4,,2"/],
    [['run', vecAdd, '--kernel', 'vecAdd', '--block', '-32'], /--block "-32"/],
    [['run', vecAdd, '--kernel', 'vecAdd', '--grid', '1,1,1,1'], /at most 3/],
    [['run', vecAdd, '--kernel', 'vecAdd', '--arg', 'c:f32[-1]'], /not a positive whole number/],
    [['run', vecAdd, '--kernel', 'vecAdd', '--arg', 'c:f32[99999999999999999999]'], /more than any device can hold/],
    [['run', vecAdd, '--kernel', 'vecAdd', '--arg', 'n:i32=ten'], /not a number/],
    [['run', vecAdd, '--kernel', 'vecAdd', '--arg', 'a:f32[4]', '--arg', 'a:f32[4]'], /used twice/],
    [['run', vecAdd, '--kernel', 'vecAdd', '--smem', '-5'], /--smem must be between/],
    [['run', vecAdd], /--kernel NAME/],
    [['run', '/no/such/file.cu', '--kernel', 'k'], /does not exist/],
    [['run', process.execPath, '--kernel', 'k'], /(binary file|larger than the limit)/],
    [['run', '--plan', join(SAMPLES, 'vector-add/vector_add.cu')], /not valid JSON/],
    [['frobnicate'], /unknown command/],
  ];
  for (const [args, message] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 64, `${args.join(' ')}\n${r.stdout}${r.stderr}`);
    assert.match(r.stdout + r.stderr, message, args.join(' '));
    noStack(r.stdout + r.stderr);
  }
});

test('--help lists every command although a command line loads only the command it names', async () => {
  const all = await runCli(['--help']);
  assert.equal(all.code, 0);
  const listed = [...all.stdout.matchAll(/^ {2}(\w+)\b/gm)].map((m) => m[1]);
  const commands = [
    'devices',
    'doctor',
    'compile',
    'validate',
    'explain',
    'run',
    'serve',
    'bundle',
    'sanitize',
    'samples',
    'memory',
    'monitor',
    'profile',
    'check',
    'diagnose',
  ];
  assert.deepEqual(
    listed.filter((name) => commands.includes(name!)),
    commands,
    all.stdout,
  );
  const one = await runCli(['diagnose', '--help']);
  assert.equal(one.code, 0);
  assert.match(one.stdout, /Usage: gpu-workbench diagnose \[options\] -- <command>/);
  assert.match(one.stdout, /--thorough/);
  const mistake = await runCli(['diagnose', '--frobnicate', '--', 'true']);
  assert.equal(mistake.code, 64);
  assert.match(mistake.stderr + mistake.stdout, /unknown option '--frobnicate'/);
});

test('plans that cannot run are refused before any compiler or GPU is touched: one clear message each, exit 64', async () => {
  const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-plans-'));
  const base = JSON.parse(readFileSync(join(SAMPLES, 'vector-add/plan.json'), 'utf8')) as {
    kernels: { sourceFile?: string }[];
    buffers: { name: string; type: string; count: unknown }[];
    steps: { op: string; buffer?: string; args?: unknown[] }[];
  };
  // A plan names files in its own folder: the kernel goes beside the plans.
  copyFileSync(join(SAMPLES, 'vector-add/vector_add.cu'), join(work, 'vector_add.cu'));
  base.kernels[0]!.sourceFile = 'vector_add.cu';
  const variant = (change: (plan: typeof base) => void) => {
    const plan = structuredClone(base);
    change(plan);
    const file = join(work, `plan-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(plan));
    return file;
  };
  const launch = (plan: typeof base) => plan.steps.find((s) => s.op === 'launch')!;
  const cases: [string, string, RegExp][] = [
    ['count 0', variant((p) => (p.buffers[0]!.count = 0)), /buffers\.0\.count: must be at least 1 element/],
    ['count -1', variant((p) => (p.buffers[0]!.count = -1)), /buffers\.0\.count: must be at least 1 element/],
    ['count 2^63', variant((p) => (p.buffers[0]!.count = 2 ** 63)), /buffers\.0\.count: is more elements than any device can hold/],
    ['count 1.5', variant((p) => (p.buffers[0]!.count = 1.5)), /buffers\.0\.count: must be a whole number of elements/],
    [
      'a scalar that is not a number',
      variant((p) => (launch(p).args![3] = { scalar: { type: 'i32', value: 'ten' } })),
      /must be a number \(64-bit integers may be given as a string of digits\)/,
    ],
    ['a missing buffer', variant((p) => (launch(p).args![1] = { buffer: 'nope' })), /names buffer "nope", which the plan does not declare/],
    [
      'too few arguments',
      variant((p) => launch(p).args!.pop()),
      /passes 3 arguments, but vecAdd\(const float\* a, const float\* b, float\* c, int n\) takes 4/,
    ],
    [
      'an f32 value for an int parameter',
      variant((p) => (launch(p).args![3] = { scalar: { type: 'f32', value: 1000000 } })),
      /argument 4 \(int n\) takes i32, but the plan gives a f32/,
    ],
    ['a scalar for a pointer', variant((p) => (launch(p).args![0] = { scalar: { type: 'i32', value: 0 } })), /argument 1 \(const float\* a\) is a pointer/],
    ['a buffer of the wrong type', variant((p) => (p.buffers[0]!.type = 'i32')), /points to f32, but buffer a holds i32/],
    ['buffers larger than host memory', variant((p) => (p.buffers[0]!.count = 2 ** 38)), /needs 1 TiB of host memory, but this machine has .* free/],
  ];
  for (const [what, file, message] of cases) {
    const r = await runCli(['run', '--plan', file]);
    assert.equal(r.code, 64, `${what}\n${r.stdout}${r.stderr}`);
    assert.match(r.stdout + r.stderr, message, what);
    noStack(r.stdout + r.stderr);
  }
});

test('the failure gallery: every sample manifest, plan and source loads, and every launch matches its kernel', async () => {
  const r = await runCli(['samples', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const gallery = parseJson<{ name: string }[]>(r);
  assert.ok(gallery.length >= 16);
  for (const { name } of gallery) {
    for (const variant of [[], ['--fixed']]) {
      const run = await runCli(['run', '--sample', name, ...variant, '--json']);
      // Without a driver every valid plan stops at "no driver" (2); an invalid one would be 64.
      assert.equal(run.code, hasDriver ? run.code : 2, `${name} ${variant.join('')}: ${run.stdout}${run.stderr}`);
    }
  }
});

test(
  'compile asking for a compiler this machine lacks: one clear message and exit 2, not "a bug"',
  { skip: discoverLibraries().nvrtc.loaded && 'NVRTC is here' },
  async () => {
    const r = await runCli(['compile', vecAdd, '--backend', 'nvrtc']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /NVRTC was asked for but is not available/);
    assert.doesNotMatch(r.stdout + r.stderr, /Unexpected error|This is a bug/);
    noStack(r.stdout + r.stderr);
  },
);

test('gpu-workbench serve: serves with its token, and SIGTERM stops it cleanly', async () => {
  const serve = await startServe({}, 'cli');
  const status = await new Promise<number>((resolve, reject) => {
    get(`http://127.0.0.1:${serve.port}/?token=${serve.token}`, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
  assert.equal(status, 200);
  const exited = new Promise<number | null>((resolve) => serve.child.once('exit', (code) => resolve(code)));
  serve.child.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('doctor looks for compute-sanitizer in the toolkit folders and on PATH, and says how to get it', async () => {
  const r = await runCli(['doctor', '--json']);
  const out = parseJson<{ checks: { id: string; status: string; searched?: string[]; remedy: string | null }[] }>(r);
  const check = out.checks.find((c) => c.id === 'compute-sanitizer')!;
  assert.ok(check, 'a compute-sanitizer check');
  if (check.status === 'warn') {
    assert.ok(check.searched!.includes('/usr/local/cuda/bin/compute-sanitizer'), check.searched!.join('\n'));
    assert.match(check.remedy!, /cuda-sanitizer/);
  }
});
