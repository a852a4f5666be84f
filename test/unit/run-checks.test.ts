import assert from 'node:assert/strict';
import { test } from 'node:test';

import { findKernels } from '../../core/compile/kernel-signature';
import { checkHostMemory, checkLaunchArgs } from '../../core/plan/check-args';
import { compareBuffer } from '../../core/plan/compare';
import { findGuardDamage, GUARD_PATTERN } from '../../core/plan/guards';
import { launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';

const f32 = (values: number[]) => new Uint8Array(new Float32Array(values).buffer);
const i32 = (values: number[]) => new Uint8Array(new Int32Array(values).buffer);

test('compare: names the first mismatching index, counts all of them, and honours tolerance', () => {
  const c = compareBuffer('out', 'f32', f32([0, 2, 4, 7, 8, 11]), { kind: 'iota', start: 0, step: 2 }, null);
  assert.equal(c.mismatches, 2);
  assert.deepEqual(c.first[0], { index: 3, expected: 6, actual: 7 });
  assert.equal(c.first[1]!.index, 5);
  assert.equal(c.against, 'iota(start 0, step 2)');
  assert.equal(compareBuffer('x', 'f32', f32([0.1, 0.1]), { kind: 'constant', value: 0.1 }, null).mismatches, 0, '0.1 as an f32 equals 0.1f');
  assert.equal(compareBuffer('x', 'f32', f32([1.001]), { kind: 'constant', value: 1 }, null, { rel: 0.01 }).mismatches, 0);
  assert.equal(compareBuffer('x', 'f32', f32([1.001]), { kind: 'constant', value: 1 }, null).mismatches, 1);
});

test('compare: NaN matches only NaN; integers compare exactly; a reference buffer is read element by element', () => {
  assert.equal(compareBuffer('x', 'f32', f32([NaN, 1]), { kind: 'constant', value: 1 }, null).first[0]!.index, 0);
  assert.equal(compareBuffer('x', 'f32', f32([NaN]), { kind: 'buffer', buffer: 'r' }, f32([NaN])).mismatches, 0);
  assert.equal(compareBuffer('x', 'i32', i32([5, -1]), { kind: 'constant', value: 5 }, null).first[0]!.actual, -1);
  const r = compareBuffer('out', 'i32', i32([3, 2, 1, 0]), { kind: 'buffer', buffer: 'expected' }, i32([3, 2, 9, 0]));
  assert.deepEqual(r.first, [{ index: 2, expected: 9, actual: 1 }]);
});

test('guards: writes past the end and before the start are found, in elements relative to the buffer', () => {
  const clean = () => new Uint8Array(256).fill(GUARD_PATTERN);
  assert.deepEqual(findGuardDamage(clean(), clean(), 4, 1000), []);
  const after = clean();
  after.fill(0, 0, 4); // element 1000 written: an off-by-one
  assert.deepEqual(findGuardDamage(clean(), after, 4, 1000), [{ side: 'after', bytesChanged: 4, nearestElement: 1000, farthestElement: 1000 }]);
  after.fill(0, 0, 96); // elements 1000..1023: a missing bounds check on a rounded-up grid
  assert.equal(findGuardDamage(clean(), after, 4, 1000)[0]!.farthestElement, 1023);
  const before = clean();
  before.fill(1, 252, 256); // element -1
  assert.deepEqual(findGuardDamage(before, clean(), 4, 1000), [{ side: 'before', bytesChanged: 4, nearestElement: -1, farthestElement: -1 }]);
});

const VEC_ADD = '__global__ void vecAdd(const float* a, const float* b, float* c, int n) {}';
function vecAddPlan(args: unknown[], bufferType = 'f32'): LaunchPlan {
  return launchPlanSchema.parse({
    version: 1,
    kernels: [{ id: 'k', entry: 'vecAdd', source: VEC_ADD }],
    buffers: ['a', 'b', 'c'].map((name) => ({ name, type: bufferType, count: 4 })),
    steps: [{ op: 'launch', kernel: 'k', grid: [1, 1, 1], block: [4, 1, 1], args }],
  });
}
const params = new Map([['k', findKernels(VEC_ADD)[0]!.params]]);
const n = (type: string, value: number | string) => ({ scalar: { type, value } });

test('launch arguments are checked against the kernel parameters: count, pointer or value, element type', () => {
  assert.deepEqual(checkLaunchArgs(vecAddPlan([{ buffer: 'a' }, { buffer: 'b' }, { buffer: 'c' }, n('i32', 4)]), params), []);
  assert.deepEqual(checkLaunchArgs(vecAddPlan([{ buffer: 'a' }, { buffer: 'b' }, { buffer: 'c' }, n('u32', 4)]), params), [], 'signedness alone is fine');
  assert.match(checkLaunchArgs(vecAddPlan([{ buffer: 'a' }, { buffer: 'b' }, { buffer: 'c' }]), params)[0]!, /passes 3 arguments, but vecAdd\(.*\) takes 4/);
  assert.match(
    checkLaunchArgs(vecAddPlan([{ buffer: 'a' }, { buffer: 'b' }, { buffer: 'c' }, { buffer: 'a' }]), params)[0]!,
    /argument 4 \(int n\) is a value/,
  );
  assert.match(
    checkLaunchArgs(vecAddPlan([{ buffer: 'a' }, { buffer: 'b' }, { buffer: 'c' }, n('i64', 4)]), params)[0]!,
    /takes i32, but the plan gives a i64/,
  );
  assert.match(checkLaunchArgs(vecAddPlan([n('f32', 0), { buffer: 'b' }, { buffer: 'c' }, n('i32', 4)]), params)[0]!, /is a pointer/);
  assert.deepEqual(checkLaunchArgs(vecAddPlan([n('u64', '0'), { buffer: 'b' }, { buffer: 'c' }, n('i32', 4)]), params), [], 'a raw address is allowed');
  assert.equal(checkLaunchArgs(vecAddPlan([{ buffer: 'a' }, { buffer: 'b' }, { buffer: 'c' }, n('i32', 4)], 'f64'), params).length, 3);
  assert.deepEqual(checkLaunchArgs(vecAddPlan([{ buffer: 'a' }]), new Map([['k', null]])), [], 'unknown parameters: the driver decides');
});

test('host memory: staged buffers larger than free memory are refused, unstaged ones are not', () => {
  const plan = launchPlanSchema.parse({
    version: 1,
    kernels: [{ id: 'k', entry: 'k', source: '' }],
    buffers: [
      { name: 'big', type: 'f32', count: 2 ** 30, init: { kind: 'zeros' } },
      { name: 'device', type: 'f32', count: 2 ** 34 },
    ],
    steps: [
      { op: 'alloc', buffer: 'big' },
      { op: 'upload', buffer: 'big' },
      { op: 'alloc', buffer: 'device' },
    ],
  });
  assert.deepEqual(checkHostMemory(plan, 64 * 2 ** 30), []);
  assert.match(checkHostMemory(plan, 2 ** 30)[0]!, /Buffer big \(f32\[1073741824\]\) needs 4 GiB of host memory, but this machine has 1 GiB free/);
});

test('the run form builds a valid plan from the kernel parameters: buffers for pointers, values for scalars', async () => {
  const { defaultArgRows, planFromForm } = await import('../../core/plan/form-plan');
  const rows = defaultArgRows(findKernels(VEC_ADD)[0]!.params, 1000);
  assert.deepEqual(
    rows.map((r) => [r.kind, r.name, r.type, r.kind === 'buffer' ? r.init : r.value]),
    [
      ['buffer', 'a', 'f32', 'iota'],
      ['buffer', 'b', 'f32', 'iota'],
      ['buffer', 'c', 'f32', 'none'],
      ['scalar', 'n', 'i32', '1000'],
    ],
  );
  const c = rows[2]!;
  if (c.kind === 'buffer') Object.assign(c, { expect: 'iota', expectValue: 0, expectStep: 2 });
  const plan = launchPlanSchema.parse(
    planFromForm({ source: VEC_ADD, sourceName: 'v.cu', kernel: 'vecAdd', grid: [4, 1, 1], block: [256, 1, 1], sharedBytes: 0, rows }),
  );
  assert.deepEqual(
    plan.steps.map((s) => s.op),
    ['alloc', 'alloc', 'alloc', 'upload', 'upload', 'launch', 'sync', 'download', 'download', 'download', 'free', 'free', 'free'],
  );
  assert.deepEqual(plan.steps[9], { op: 'download', buffer: 'c', expect: { kind: 'iota', start: 0, step: 2 } });
  assert.deepEqual(checkLaunchArgs(plan, params), []);
});
