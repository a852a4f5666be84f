import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { draftSchema, restoreDraft } from '../../core/api/drafts';
import { MAX_SOURCE_BYTES } from '../../core/limits';
import { editPlan, parseCount, parseScalar, planTable } from '../../core/plan/plan-edit';
import { launchPlanSchema } from '../../core/plan/plan-schema';
import { SAMPLES } from '../helpers/cli';

// Issue 26: a plan is part of the workspace — kept beside its document, checked with the plan schema when it comes
// back (the state folder is data from outside too), and edited in the Run section as the plan that will run.

/** A sample's plan as the host's plan reader gives it: the kernel's source inline. */
function samplePlan(path: string): Record<string, unknown> {
  const raw = JSON.parse(readFileSync(join(SAMPLES, path), 'utf8')) as { kernels: Record<string, unknown>[] };
  for (const k of raw.kernels) {
    k['source'] = '__global__ void k() {}';
    k['sourceName'] = 'kernel.cu';
    delete k['sourceFile'];
  }
  return raw;
}

const draft = (plan: unknown) => ({
  id: 'abc',
  path: '/s/block-too-large/kernel.cu',
  name: 'kernel.cu',
  text: '__global__ void k() {}',
  savedText: '__global__ void k() {}',
  savedMtimeMs: 1,
  order: 1,
  plan: {
    label: 'block-too-large (broken)',
    planPath: '/s/block-too-large/plan.json',
    sourcePaths: ['/s/block-too-large/kernel.cu'],
    plan,
    launch: { kernel: 'addMatrices', grid: '8,16', block: '64,32', smem: '0' },
  },
});

test('a kept plan comes back as the plan schema reads it, with the launch panel as it was typed', () => {
  const back = restoreDraft(JSON.parse(JSON.stringify(draft(samplePlan('block-too-large/plan.json')))));
  assert.ok(back?.plan);
  assert.equal(back.planProblem, undefined);
  assert.deepEqual(back.plan.launch, { kernel: 'addMatrices', grid: '8,16', block: '64,32', smem: '0' });
  assert.equal(back.plan.label, 'block-too-large (broken)');
  const launch = back.plan.plan.steps[5]!;
  assert.deepEqual(launch.op === 'launch' && [launch.grid, launch.block], [
    [8, 16, 1],
    [64, 32, 1],
  ]);
  // Defaults filled in by the schema, as for a plan that runs.
  assert.equal(back.plan.plan.checks.guardBytes, 256);
  // A draft from before plans were kept, or of a file without one: as it was.
  const { plan: _plan, ...bare } = draft(null);
  assert.deepEqual(restoreDraft(bare), bare);
});

test('a hostile or damaged plan in the state folder is dropped with its reason; the file’s text is never lost for it', () => {
  const hostile: [string, (p: Record<string, unknown>) => unknown, RegExp][] = [
    ['a buffer of 2^60 elements', (p) => ((p['buffers'] as Record<string, unknown>[])[0]!['count'] = 2 ** 60), /more than 1 TiB|more elements than any device/],
    ['a step naming a buffer never declared', (p) => ((p['steps'] as Record<string, unknown>[])[0]!['buffer'] = 'ghost'), /names buffer "ghost"/],
    ['a compile flag outside the allow-list', (p) => ((p['kernels'] as Record<string, unknown>[])[0]!['options'] = { extra: ['-o', '/etc/x'] }), /./],
    ['no steps', (p) => (p['steps'] = []), /steps/],
    ['a launch of a kernel never declared', (p) => ((p['steps'] as Record<string, unknown>[])[5]!['kernel'] = 'other'), /launches kernel "other"/],
  ];
  for (const [what, spoil, reason] of hostile) {
    const plan = samplePlan('block-too-large/plan.json');
    spoil(plan);
    const back = restoreDraft(JSON.parse(JSON.stringify(draft(plan))));
    assert.ok(back, what);
    assert.equal(back.plan, null, what);
    assert.match(back.planProblem ?? '', reason, what);
    assert.equal(back.text, '__global__ void k() {}', what);
  }
  // Not a plan at all, or a kept plan of the wrong shape: the file still comes back.
  for (const [what, kept] of [
    ['a string', 'rm -rf /'],
    ['an array', [1, 2, 3]],
    ['a prototype key', JSON.parse('{"__proto__": {"polluted": true}}')],
  ] as const) {
    const back = restoreDraft(JSON.parse(JSON.stringify(draft(kept))));
    assert.equal(back?.plan, null, what);
    assert.ok(back?.planProblem, what);
  }
  assert.equal(({} as { polluted?: boolean }).polluted, undefined);
  const shapeless = { ...draft(samplePlan('block-too-large/plan.json')), plan: { label: 'x', launch: 'not an object' } };
  const back = restoreDraft(shapeless);
  assert.equal(back?.plan, null);
  assert.match(back?.planProblem ?? '', /plan/);
  assert.equal(back?.text, '__global__ void k() {}');
  // A draft that is not one at all is skipped.
  assert.equal(restoreDraft({ ...draft(null), id: '../../etc/passwd' }), null);
  assert.equal(restoreDraft('draft'), null);
});

test('a plan larger than a plan file may be is not kept (the host refuses the draft that carries it)', () => {
  const plan = samplePlan('block-too-large/plan.json');
  (plan['kernels'] as Record<string, unknown>[])[0]!['source'] = 'x'.repeat(MAX_SOURCE_BYTES);
  assert.equal(draftSchema.safeParse(draft(plan)).success, false);
  assert.equal(draftSchema.safeParse(draft(samplePlan('block-too-large/plan.json'))).success, true);
});

test('the Run section’s table of a plan: its buffers with their bytes, the scalars its launches pass, its steps in order', () => {
  const plan = launchPlanSchema.parse(samplePlan('allocation-too-large/plan.json'));
  const table = planTable(plan, () => [
    { name: 'x', type: 'float*', pointer: true, elementType: 'f32' },
    { name: 'value', type: 'float', pointer: false, elementType: 'f32' },
    { name: 'n', type: 'unsigned long long', pointer: false, elementType: 'u64' },
  ]);
  assert.deepEqual(table.buffers, [{ name: 'x', type: 'f32', count: 2 ** 36, bytes: 2 ** 38, init: null, uploaded: false }]);
  assert.deepEqual(table.scalars, [
    { step: 1, arg: 1, kernel: 'fill', param: 'value', type: 'f32', value: '1' },
    { step: 1, arg: 2, kernel: 'fill', param: 'n', type: 'u64', value: '68719476736' },
  ]);
  assert.deepEqual(table.steps, ['alloc x', 'launch fill<<<1024, 256>>>', 'free x']);
  assert.equal(planTable(plan).scalars[0]!.param, null, 'without the compile, no parameter names');
  const block = planTable(launchPlanSchema.parse(samplePlan('block-too-large/plan.json')));
  assert.deepEqual(
    block.buffers.map((b) => [b.name, b.uploaded]),
    [
      ['a', true],
      ['b', true],
      ['c', false],
    ],
  );
});

test('an edit in the table is an edit of the plan that runs; the plan it came from is left alone', () => {
  const plan = samplePlan('allocation-too-large/plan.json');
  const before = JSON.stringify(plan);
  const edited = editPlan(plan, { kind: 'buffer-count', buffer: 'x', count: 268435456 });
  assert.ok(edited.ok);
  assert.equal(JSON.stringify(plan), before);
  const parsed = launchPlanSchema.parse(edited.value);
  assert.equal(parsed.buffers[0]!.count, 268435456);
  const typed = editPlan(edited.value, { kind: 'buffer-type', buffer: 'x', type: 'f64' });
  assert.ok(typed.ok);
  const initialised = editPlan(typed.value, { kind: 'buffer-init', buffer: 'x', init: { kind: 'constant', value: 2 } });
  assert.ok(initialised.ok);
  const scalar = editPlan(initialised.value, { kind: 'scalar', step: 1, arg: 2, value: '268435456' });
  assert.ok(scalar.ok);
  const final = launchPlanSchema.parse(scalar.value);
  assert.deepEqual(final.buffers[0], { name: 'x', type: 'f64', count: 268435456, init: { kind: 'constant', value: 2 } });
  const launch = final.steps[1]!;
  assert.deepEqual(launch.op === 'launch' && launch.args[2], { scalar: { type: 'u64', value: '268435456' } });
  const cleared = editPlan(scalar.value, { kind: 'buffer-init', buffer: 'x', init: null });
  assert.ok(cleared.ok);
  assert.equal(launchPlanSchema.parse(cleared.value).buffers[0]!.init, undefined);
  assert.deepEqual(editPlan(plan, { kind: 'buffer-count', buffer: 'ghost', count: 1 }), { ok: false, error: 'The plan has no buffer ghost.' });
  assert.equal(editPlan(plan, { kind: 'scalar', step: 1, arg: 0, value: 1 }).ok, false, 'argument 1 is a buffer');
});

test('counts and scalars as typed: only what parses reaches the plan', () => {
  assert.deepEqual(parseCount('268435456'), { ok: true, value: 268435456 });
  assert.deepEqual(parseCount('68,719,476,736'), { ok: true, value: 68719476736 });
  for (const bad of ['', '12x', '-1', '0', '1.5', '1e9', '99999999999999999999']) assert.equal(parseCount(bad).ok, false, bad);
  assert.deepEqual(parseScalar('u64', '18446744073709551615'), { ok: true, value: '18446744073709551615' });
  assert.deepEqual(parseScalar('i32', '-7'), { ok: true, value: -7 });
  assert.deepEqual(parseScalar('f32', '0.5'), { ok: true, value: 0.5 });
  for (const [type, bad] of [
    ['i32', '1.5'],
    ['f32', 'ten'],
    ['f32', ''],
    ['u64', '0x10'],
  ] as const)
    assert.equal(parseScalar(type, bad).ok, false, `${type} ${bad}`);
});
