import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { restoreDraft } from '../../core/api/drafts';
import { editPlan, stepIndexAfter, type PlanEdit } from '../../core/plan/plan-edit';
import { runBlockers } from '../../core/plan/run-readiness';
import { launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import { stepLabel } from '../../core/plan/step-label';
import { checkStepOrder, orderRefusals } from '../../core/validate/plan-order';
import { SAMPLES } from '../helpers/cli';

// Issue 26: a plan's steps are edited in the Run section — added, removed and moved — and the validator checks the
// whole plan again after each edit, the steps' order included (a buffer used before a step allocates it).

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

const labels = (plan: unknown): string[] => {
  const parsed = launchPlanSchema.parse(plan);
  return parsed.steps.map((s) => stepLabel(s, parsed));
};

/** Each edit in turn, asserting each was made. */
function edits(plan: unknown, ...changes: PlanEdit[]): unknown {
  return changes.reduce((p, change) => {
    const next = editPlan(p, change);
    assert.ok(next.ok, `${JSON.stringify(change)}: ${next.ok ? '' : next.error}`);
    return next.value;
  }, plan);
}

test('steps are added where asked, removed and moved; the plan they came from is left alone', () => {
  const plan = samplePlan('allocation-too-large/plan.json');
  const before = JSON.stringify(plan);
  const added = edits(plan, { kind: 'step-add', at: 2, step: { op: 'download', buffer: 'x' } });
  assert.deepEqual(labels(added), ['alloc x', 'launch fill<<<1024, 256>>>', 'download x', 'free x']);
  assert.equal(JSON.stringify(plan), before);

  // A launch added copies the plan's last launch of that kernel: its grid, block and arguments.
  const twice = edits(added, { kind: 'step-add', at: 2, step: { op: 'launch', kernel: 'fill' } });
  assert.deepEqual(labels(twice), ['alloc x', 'launch fill<<<1024, 256>>>', 'launch fill<<<1024, 256>>>', 'download x', 'free x']);
  const steps = launchPlanSchema.parse(twice).steps;
  assert.deepEqual(steps[2], steps[1]);

  const moved = edits(twice, { kind: 'step-move', step: 4, to: 0 }, { kind: 'step-remove', step: 2 });
  assert.deepEqual(labels(moved), ['free x', 'alloc x', 'launch fill<<<1024, 256>>>', 'download x']);
  const back = edits(moved, { kind: 'step-move', step: 0, to: 3 });
  assert.deepEqual(labels(back), ['alloc x', 'launch fill<<<1024, 256>>>', 'download x', 'free x']);
});

test('an edit that would leave no valid plan is refused, in words', () => {
  const plan = samplePlan('allocation-too-large/plan.json');
  const one = edits(plan, { kind: 'step-remove', step: 2 }, { kind: 'step-remove', step: 1 });
  assert.deepEqual(labels(one), ['alloc x']);
  assert.deepEqual(editPlan(one, { kind: 'step-remove', step: 0 }), {
    ok: false,
    error: 'A plan needs at least one step: add another before removing this one.',
  });
  // x has no initializer: an upload of it is not a plan (the schema's own words say what to do).
  const upload = editPlan(plan, { kind: 'step-add', at: 1, step: { op: 'upload', buffer: 'x' } });
  assert.equal(upload.ok, false);
  assert.match(upload.ok ? '' : upload.error, /^That would make the plan invalid: steps\.1: step 2 uploads buffer "x", which has no initializer/);
  // A comparison moved above the read-back it compares with.
  const race = samplePlan('shared-memory-race/plan.json');
  const compare = editPlan(race, { kind: 'step-move', step: 7, to: 6 });
  assert.match(compare.ok ? '' : compare.error, /compares "out" with "expected", which is not read back by an earlier step/);
  for (const [edit, said] of [
    [{ kind: 'step-add', at: 1, step: { op: 'free', buffer: 'ghost' } }, 'The plan has no buffer ghost.'],
    [{ kind: 'step-add', at: 1, step: { op: 'launch', kernel: 'ghost' } }, 'The plan has no kernel ghost.'],
    [{ kind: 'step-add', at: 9, step: { op: 'free', buffer: 'x' } }, 'There is no place 10 among 3 steps.'],
    [{ kind: 'step-remove', step: 3 }, 'The plan has no step 4.'],
    [{ kind: 'step-move', step: 0, to: 3 }, 'There is no step 4 to move it to.'],
  ] as const)
    assert.deepEqual(editPlan(plan, edit), { ok: false, error: said });
});

test('the step the launch panel shows is followed through every edit (null once removed)', () => {
  const cases: [PlanEdit, number, number | null][] = [
    [{ kind: 'step-add', at: 1, step: { op: 'alloc', buffer: 'x' } }, 1, 2],
    [{ kind: 'step-add', at: 2, step: { op: 'alloc', buffer: 'x' } }, 1, 1],
    [{ kind: 'step-remove', step: 1 }, 1, null],
    [{ kind: 'step-remove', step: 0 }, 1, 0],
    [{ kind: 'step-remove', step: 2 }, 1, 1],
    [{ kind: 'step-move', step: 1, to: 3 }, 1, 3],
    [{ kind: 'step-move', step: 0, to: 2 }, 1, 0],
    [{ kind: 'step-move', step: 3, to: 0 }, 1, 2],
    [{ kind: 'step-move', step: 3, to: 2 }, 1, 1],
    [{ kind: 'buffer-count', buffer: 'x', count: 1 }, 1, 1],
  ];
  for (const [edit, index, after] of cases) assert.equal(stepIndexAfter(edit, index), after, JSON.stringify(edit));
});

test('the steps’ order is checked: a buffer used before a step allocates it, or after one frees it, is refused before the run', () => {
  const plan = samplePlan('allocation-too-large/plan.json');
  const launchFirst = launchPlanSchema.parse(edits(plan, { kind: 'step-move', step: 1, to: 0 }));
  const found = checkStepOrder(launchFirst);
  assert.deepEqual(
    found.map((f) => [f.rule, f.severity, f.stepIndex, f.buffer]),
    [['used-before-alloc', 'error', 0, 'x']],
  );
  assert.equal(found[0]!.message, 'Step 1 (launch fill<<<1024, 256>>>) passes `x` before any step allocates it.');
  assert.equal(found[0]!.fix, 'Move an alloc step for `x` before step 1.');
  assert.deepEqual(orderRefusals(found), [
    'Step 1 (launch fill<<<1024, 256>>>) passes `x` before any step allocates it. Fix: Move an alloc step for `x` before step 1.',
  ]);
  const blockers = runBlockers({
    compile: 'ok',
    documentName: 'kernel.cu',
    planProblem: null,
    refusals: [],
    orderRefusals: orderRefusals(found),
    deviceLabel: 'H100',
    gpu: { present: true },
  });
  assert.deepEqual(
    blockers.map((b) => b.reason),
    ['The plan uses a buffer where no step has allocated it:'],
  );

  const block = samplePlan('block-too-large/plan.json');
  const messy = launchPlanSchema.parse(
    edits(block, { kind: 'step-move', step: 9, to: 6 }, { kind: 'step-add', at: 0, step: { op: 'alloc', buffer: 'a' } }, { kind: 'step-move', step: 5, to: 0 }),
  );
  assert.deepEqual(
    checkStepOrder(messy).map((f) => [f.rule, f.stepIndex, f.buffer]),
    [
      ['used-before-alloc', 0, 'b'],
      ['allocated-twice', 2, 'a'],
      ['used-after-free', 8, 'c'],
    ],
  );
  // A launch given a freed buffer is a warning: the runner passes the dangling pointer, as the use-after-free sample means it to.
  const uaf = checkStepOrder(launchPlanSchema.parse(samplePlan('use-after-free/plan.json')));
  assert.deepEqual(
    uaf.map((f) => [f.rule, f.severity, f.stepIndex]),
    [['launch-after-free', 'warning', 4]],
  );
  assert.deepEqual(orderRefusals(uaf), []);
});

test('no gallery sample’s plan, broken or fixed, has a step out of order that would stop it', () => {
  for (const sample of readdirSync(SAMPLES, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const file of readdirSync(join(SAMPLES, sample.name)).filter((f) => /^plan(\.fixed)?\.json$/.test(f))) {
      const plan = launchPlanSchema.parse(samplePlan(join(sample.name, file))) as LaunchPlan;
      assert.deepEqual(orderRefusals(checkStepOrder(plan)), [], `${sample.name}/${file}`);
    }
  }
});

test('the step the launch panel shows is kept with the plan, so a reload shows the same launch of a plan that has two', () => {
  const plan = edits(samplePlan('allocation-too-large/plan.json'), { kind: 'step-add', at: 1, step: { op: 'launch', kernel: 'fill' } });
  const draft = (launchStep: unknown) => ({
    id: 'abc',
    path: '/s/allocation-too-large/kernel.cu',
    name: 'kernel.cu',
    text: '__global__ void k() {}',
    savedText: null,
    savedMtimeMs: null,
    order: 1,
    plan: {
      label: 'allocation-too-large (broken)',
      planPath: null,
      sourcePaths: [],
      plan,
      launchStep,
      launch: { kernel: 'fill', grid: '1024', block: '256', smem: '0' },
    },
  });
  assert.equal(restoreDraft(draft(2))?.plan?.launchStep, 2);
  assert.equal(restoreDraft(draft(null))?.plan?.launchStep, null);
  const { launchStep: _absent, ...older } = draft(0).plan;
  assert.ok(restoreDraft({ ...draft(0), plan: older })?.plan, 'a draft kept before steps could move still comes back');
  for (const bad of [-1, 1.5, 'two', 1e9]) {
    const back = restoreDraft(draft(bad));
    assert.equal(back?.plan, null, String(bad));
    assert.equal(back?.text, '__global__ void k() {}');
  }
});
