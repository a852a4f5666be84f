import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { discoverLibraries } from '../../main/services/discovery-service';
import { parseJson, runCli, SAMPLES } from '../helpers/cli';

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
  const r = await runCli(['run', vecAdd, '--kernel', 'vecAdd', '--arg', 'n:i32=1']);
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
    [['run', process.execPath, '--kernel', 'k'], /(binary file|the limit is)/],
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
