import assert from 'node:assert/strict';
import { test } from 'node:test';

import { describeIssues, launchPlanSchema, type LaunchPlanInput } from '../../core/plan/plan-schema';

const base = (): LaunchPlanInput => ({
  version: 1,
  kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(float*){}' }],
  buffers: [{ name: 'a', type: 'f32', count: 16 }],
  steps: [
    { op: 'alloc', buffer: 'a' },
    { op: 'launch', kernel: 'k', grid: [1, 1, 1], block: [16, 1, 1], args: [{ buffer: 'a' }] },
    { op: 'free', buffer: 'a' },
  ],
});

const problems = (plan: unknown): string => {
  const r = launchPlanSchema.safeParse(plan);
  assert.equal(r.success, false);
  return r.success ? '' : describeIssues(r.error);
};

test('a well-formed plan parses, with defaults filled in', () => {
  const r = launchPlanSchema.safeParse(base());
  assert.ok(r.success);
  assert.equal(r.data.device, 0);
  assert.equal(r.data.buffers[0]!.init, undefined, 'no initializer: allocated, never uploaded, poisoned');
  const launch = r.data.steps[1]!;
  assert.ok(launch.op === 'launch' && launch.repeats === 1 && launch.sharedBytes === 0);
});

test('uploading a buffer that has no initializer is refused, with what to write instead', () => {
  const plan = base();
  plan.steps.splice(1, 0, { op: 'upload', buffer: 'a' });
  assert.match(problems(plan), /step 2 uploads buffer "a", which has no initializer: give it one \(\{"kind": "zeros"\} for zeros\)/);
  plan.buffers[0]!.init = { kind: 'zeros' };
  assert.ok(launchPlanSchema.safeParse(plan).success);
});

test('element counts of 0, -1, 1.5 and 2^63 are refused', () => {
  for (const count of [0, -1, 1.5, 2 ** 63]) {
    const plan = base();
    plan.buffers[0]!.count = count;
    assert.match(problems(plan), /buffers\.0\.count/, String(count));
  }
});

test('a buffer over 1 TiB is refused as a typo before anything is allocated', () => {
  const plan = base();
  plan.buffers[0] = { name: 'a', type: 'f64', count: 2 ** 38 };
  assert.match(problems(plan), /more than 1 TiB/);
});

test('a step naming an undeclared buffer or kernel names it', () => {
  const plan = base();
  plan.steps.push({ op: 'download', buffer: 'missing' });
  plan.steps.push({ op: 'launch', kernel: 'nope', grid: [1, 1, 1], block: [1, 1, 1], args: [] });
  const text = problems(plan);
  assert.match(text, /names buffer "missing", which the plan does not declare/);
  assert.match(text, /launches kernel "nope"/);
});

test('duplicate names, non-numeric scalars, bad dims and unknown ops are refused', () => {
  const dup = base();
  dup.buffers.push({ name: 'a', type: 'i32', count: 1 });
  assert.match(problems(dup), /buffer names must be unique/);
  const scalar = base();
  scalar.steps[1] = { op: 'launch', kernel: 'k', grid: [1, 1, 1], block: [1, 1, 1], args: [{ scalar: { type: 'i32', value: 'twelve' } }] };
  assert.match(problems(scalar), /steps\.1/);
  const dims = base();
  dims.steps[1] = { op: 'launch', kernel: 'k', grid: [0, 1, 1], block: [1, 1, 1], args: [] };
  assert.match(problems(dims), /grid/);
  assert.match(problems({ ...base(), steps: [{ op: 'explode' }] }), /steps\.0/);
  assert.match(problems({ ...base(), version: 2 }), /version/);
  assert.match(problems({ ...base(), buffers: [{ name: '1bad', type: 'f32', count: 1 }] }), /C identifier/);
});
