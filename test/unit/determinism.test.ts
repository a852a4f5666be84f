import assert from 'node:assert/strict';
import { test } from 'node:test';

import { diffBitwise, floatAtomicLines, planDeterminism } from '../../core/plan/determinism';
import { launchPlanSchema, type LaunchPlanInput } from '../../core/plan/plan-schema';
import { scanPoison } from '../../core/plan/poison';

const plan = (over: Partial<LaunchPlanInput> = {}) =>
  launchPlanSchema.parse({
    version: 1,
    kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(float* a, float* b) {}' }],
    buffers: [
      { name: 'a', type: 'f32', count: 1024, init: { kind: 'iota' } },
      { name: 'b', type: 'f32', count: 1024 },
    ],
    steps: [
      { op: 'alloc', buffer: 'a' },
      { op: 'alloc', buffer: 'b' },
      { op: 'upload', buffer: 'a' },
      { op: 'launch', kernel: 'k', grid: [4, 1, 1], block: [256, 1, 1], args: [{ buffer: 'a' }, { buffer: 'b' }] },
      { op: 'sync' },
      { op: 'download', buffer: 'b' },
      { op: 'free', buffer: 'a' },
      { op: 'free', buffer: 'b' },
    ],
    ...over,
  });

test('determinism: one extra run by default, replaying everything before the trailing frees', () => {
  assert.deepEqual(planDeterminism(plan()), { runs: 1, replayEnd: 6, skipped: null, off: false });
  const more = plan();
  more.checks.determinismRuns = 3;
  assert.equal(planDeterminism(more).runs, 3);
});

test('determinism: off when asked, and skipped with the reason when it cannot run', () => {
  const off = plan();
  off.checks.determinismRuns = 0;
  assert.deepEqual(planDeterminism(off), { runs: 0, replayEnd: 0, skipped: 'turned off', off: true });

  const big = plan({
    buffers: [
      { name: 'a', type: 'f32', count: 2 ** 26, init: { kind: 'iota' } },
      { name: 'b', type: 'f32', count: 2 ** 26 },
    ],
  });
  assert.match(planDeterminism(big).skipped!, /total 512 MiB, over the 256 MiB up to which it runs by default \(--determinism-runs 1 runs it anyway\)/);
  big.checks.determinismRuns = 1;
  assert.equal(planDeterminism(big).runs, 1, 'asked for explicitly, it runs whatever the size');

  const early = plan();
  early.steps.splice(5, 0, { op: 'free', buffer: 'a' });
  assert.match(planDeterminism(early).skipped!, /step 6 frees a buffer before the plan's last launch or read-back/);

  const unread = plan();
  unread.steps = unread.steps.filter((s) => s.op !== 'download');
  assert.equal(planDeterminism(unread).skipped, 'the plan reads nothing back to compare');

  const noPoison = plan();
  noPoison.checks.poison = false;
  assert.match(planDeterminism(noPoison).skipped!, /poison is off/);
});

test('diffBitwise counts differing elements bit for bit, and names the first with both values', () => {
  const a = new Float32Array([1, 2, 3, NaN, 0]);
  const b = new Float32Array([1, 2.5, 3, NaN, -0]);
  const d = diffBitwise('f32', new Uint8Array(a.buffer), new Uint8Array(b.buffer))!;
  assert.deepEqual(d, { differing: 2, firstIndex: 1, first: 2, second: 2.5 }, '-0 differs from 0 in its bits; NaN equals the same NaN');
  assert.equal(diffBitwise('f32', new Uint8Array(a.buffer), new Uint8Array(a.buffer.slice(0))), null);
  const i64a = new BigInt64Array([1n, 2n ** 40n]);
  const i64b = new BigInt64Array([1n, 2n ** 40n + 1n]);
  assert.equal(diffBitwise('i64', new Uint8Array(i64a.buffer), new Uint8Array(i64b.buffer))!.firstIndex, 1);
});

test('floatAtomicLines finds atomic additions, not ones in comments', () => {
  const source = [
    '__global__ void k(float* s, const float* x) {',
    '  atomicAdd(s, x[threadIdx.x]); // sum',
    '  // atomicAdd(s, 1.0f);',
    '  atomicAdd_block(s + 1, 2.0f);',
    '}',
  ].join('\n');
  assert.deepEqual(floatAtomicLines(source), [2, 4]);
});

test('scanPoison: whole-0xFF elements counted with the first index; NaN that is not poison counted apart', () => {
  const f = new Float32Array([1, NaN, 3, 4]);
  const bytes = new Uint8Array(f.buffer);
  bytes.fill(0xff, 8, 16); // elements 2 and 3 hold the poison pattern
  const scan = scanPoison('f32', bytes, 3, false)!;
  assert.deepEqual(scan, { poisonCount: 2, firstPoisonIndex: 2, nanCount: 3, firstNanIndex: 1 });
  assert.equal(scanPoison('f32', new Uint8Array(new Float32Array([1, 2]).buffer), 0, true), null, 'no NaN: no poison possible in floats');
  const ints = new Int32Array([5, -1, 7]);
  assert.equal(scanPoison('i32', new Uint8Array(ints.buffer), 0, false), null, 'an integer buffer that was uploaded is not scanned: -1 is a value');
  assert.deepEqual(scanPoison('i32', new Uint8Array(ints.buffer), 0, true), { poisonCount: 1, firstPoisonIndex: 1, nanCount: 0, firstNanIndex: null });
  const odd = new Uint8Array(13).fill(0xff).subarray(1); // unaligned, three 4-byte elements
  assert.equal(scanPoison('u32', odd, 0, true)!.poisonCount, 3);
});
