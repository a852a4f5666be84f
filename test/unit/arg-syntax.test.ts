import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseArg, planFromArgs, type ParsedArg } from '../../core/plan/arg-syntax';
import { launchPlanSchema } from '../../core/plan/plan-schema';

const value = (text: string): ParsedArg => {
  const r = parseArg(text);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.value;
};
const error = (text: string): string => {
  const r = parseArg(text);
  assert.equal(r.ok, false, text);
  return r.ok ? '' : r.error;
};

test('buffers: no initializer (never uploaded, so poisoned), zeros only when asked, constants, iota and seeded random', () => {
  assert.deepEqual(value('out:f32[1024]'), { kind: 'buffer', buffer: { name: 'out', type: 'f32', count: 1024 } });
  assert.deepEqual(value('out:f32[4]=0'), { kind: 'buffer', buffer: { name: 'out', type: 'f32', count: 4, init: { kind: 'zeros' } } });
  assert.deepEqual(value('a:f64[4]=1.5'), { kind: 'buffer', buffer: { name: 'a', type: 'f64', count: 4, init: { kind: 'constant', value: 1.5 } } });
  assert.deepEqual(value('a:i32[4]=iota'), { kind: 'buffer', buffer: { name: 'a', type: 'i32', count: 4, init: { kind: 'iota', start: 0, step: 1 } } });
  assert.deepEqual(value('a:i32[4]=iota(10,-2)'), {
    kind: 'buffer',
    buffer: { name: 'a', type: 'i32', count: 4, init: { kind: 'iota', start: 10, step: -2 } },
  });
  assert.deepEqual(value('r:bf16[8]=rand(7,-1,1)'), {
    kind: 'buffer',
    buffer: { name: 'r', type: 'bf16', count: 8, init: { kind: 'random', seed: 7, min: -1, max: 1 } },
  });
});

test('scalars: numbers for 32-bit and float types, exact strings for 64-bit integers', () => {
  assert.deepEqual(value('n:i32=1024'), { kind: 'scalar', name: 'n', type: 'i32', value: 1024 });
  assert.deepEqual(value('x:f32=-0.5'), { kind: 'scalar', name: 'x', type: 'f32', value: -0.5 });
  assert.deepEqual(value('big:u64=18446744073709551615'), { kind: 'scalar', name: 'big', type: 'u64', value: '18446744073709551615' });
});

test('bad arguments get a message naming the problem', () => {
  assert.match(error('out'), /not of the form/);
  assert.match(error('out:float[4]'), /unknown element type "float"/);
  assert.match(error('out:f32[-1]'), /not a positive whole number/);
  assert.match(error('out:f32[0]'), /at least 1 element/);
  assert.match(error('out:f32[9223372036854775808]'), /more than any device can hold/);
  assert.match(error('out:f32[abc]'), /not a positive whole number/);
  assert.match(error('n:i32'), /needs a value/);
  assert.match(error('n:i32=abc'), /not a number/);
  assert.match(error('n:i32=1.5'), /not an integer/);
  assert.match(error('n:i64=1.5'), /not an integer/);
  assert.match(error('a:f32[4]=rand(-1)'), /seed/);
  assert.match(error('a:f32[4]=banana'), /not a number, iota/);
});

test('planFromArgs builds a valid plan: alloc, upload, launch, sync, download, free', () => {
  const plan = planFromArgs({
    source: '__global__ void k(float* a, int n) {}',
    sourceName: 'k.cu',
    kernel: 'k',
    grid: [2, 1, 1],
    block: [128, 1, 1],
    sharedBytes: 0,
    args: [value('a:f32[256]=iota'), value('n:i32=256')],
  });
  const parsed = launchPlanSchema.safeParse(plan);
  assert.ok(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues));
  assert.deepEqual(
    parsed.data.steps.map((s) => s.op),
    ['alloc', 'upload', 'launch', 'sync', 'download', 'free'],
  );
  const launch = parsed.data.steps[2]!;
  assert.ok(launch.op === 'launch');
  assert.deepEqual(launch.args, [{ buffer: 'a' }, { scalar: { type: 'i32', value: 256 } }]);
});

test('planFromArgs uploads only buffers with an initializer: out:f32[N] is allocated and left poisoned, =0 uploads zeros', () => {
  const plan = planFromArgs({
    source: '__global__ void k(const float* a, float* out, float* acc, int n) {}',
    sourceName: 'k.cu',
    kernel: 'k',
    grid: [1, 1, 1],
    block: [64, 1, 1],
    sharedBytes: 0,
    args: [value('a:f32[64]=iota'), value('out:f32[64]'), value('acc:f32[64]=0'), value('n:i32=64')],
  });
  const parsed = launchPlanSchema.parse(plan);
  assert.deepEqual(
    parsed.steps.filter((s) => s.op === 'upload').map((s) => (s.op === 'upload' ? s.buffer : '')),
    ['a', 'acc'],
  );
  assert.equal(parsed.buffers.find((b) => b.name === 'out')!.init, undefined);
});
