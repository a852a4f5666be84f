import assert from 'node:assert/strict';
import { test } from 'node:test';

import { allocStepsUploadedBeforeUse } from '../../core/plan/poison';
import { launchPlanSchema, type LaunchPlanInput } from '../../core/plan/plan-schema';
import { chooseChecks, determinismNotRun, HOST_PROGRAM_CHECKS, poisonSuspected, replaysSkipped } from '../../core/runner/run-choice';
import type { RunResult } from '../../core/runner/run-result';

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

test('a plan with the default checks chooses guards, poison, one determinism replay and the probe, replaying up to its trailing frees', () => {
  const choice = chooseChecks(plan());
  assert.equal(choice.guardBytes, 256);
  assert.equal(choice.poison, true);
  assert.equal(choice.determinism.runs, 1);
  assert.equal(choice.replayEnd, 6);
  assert.equal(choice.probe, true);
});

test('the host program’s checks (a run under compute-sanitizer) choose none of the runner’s own: no guards, no poison, no replay', () => {
  const choice = chooseChecks(plan({ checks: HOST_PROGRAM_CHECKS }));
  assert.deepEqual(
    { guardBytes: choice.guardBytes, poison: choice.poison, runs: choice.determinism.runs, replayEnd: choice.replayEnd, probe: choice.probe },
    { guardBytes: 0, poison: false, runs: 0, replayEnd: null, probe: false },
  );
  assert.deepEqual(determinismNotRun(choice.determinism), { status: 'off', reason: 'turned off', runs: 0, ms: 0, differences: [] });
});

test('a replay is chosen when either replaying check is: the probe alone keeps one; neither, or an early free, keeps none', () => {
  const probeOnly = chooseChecks(plan({ checks: { guardBytes: 0, poison: true, determinismRuns: 0 } }));
  assert.equal(probeOnly.replayEnd, 6);
  assert.equal(probeOnly.probe, true);
  assert.equal(probeOnly.determinism.runs, 0);

  const early = plan();
  early.steps.splice(4, 0, { op: 'free', buffer: 'a' });
  const none = chooseChecks(early);
  assert.equal(none.replayEnd, null);
  assert.equal(none.probe, false);
  assert.match(none.determinism.skipped!, /step 5 frees a buffer/);
  assert.match(determinismNotRun(none.determinism).reason!, /step 5 frees a buffer/);
  assert.equal(determinismNotRun(chooseChecks(plan()).determinism).reason, 'the run failed before the check', 'chosen but never reached');
});

test('the replays are skipped when the first run times the runs they add past three quarters of the time limit', () => {
  assert.equal(replaysSkipped(10_000, 1, null), null, 'no limit: they always run');
  assert.equal(replaysSkipped(3000, 1, 8000), null, '6 s of a 6 s budget');
  const skipped = replaysSkipped(3001, 1, 8000)!;
  assert.equal(skipped.status, 'skipped');
  assert.equal(skipped.reason, 'the first run took 3.0 s of the 8 s time limit, so a second would not fit; raise the limit (--timeout) to check');
  assert.match(replaysSkipped(2000, 3, 8000)!.reason!, /so 3 more would not fit/);
});

test('the poison is suspected when a read-back holds NaN beyond the pattern and a launch received unwritten memory', () => {
  const summary = (nanCount: number, poisonCount: number) =>
    ({
      name: 'b',
      type: 'f32',
      count: 4,
      poison: { poisonCount, firstPoisonIndex: null, nanCount, firstNanIndex: 0 },
    }) as unknown as RunResult['buffers'][number];
  const uninitialised = [{ stepIndex: 3, kernel: 'k', buffer: 'b' }];
  assert.equal(poisonSuspected({ uninitialised }, [summary(4, 2)]), true);
  assert.equal(poisonSuspected({ uninitialised }, [summary(2, 2)]), false, 'NaN that is all pattern: the scan said so already');
  assert.equal(poisonSuspected({ uninitialised: [] }, [summary(4, 2)]), false, 'nothing unwritten reached a launch');
});

test('an alloc whose buffer is uploaded before anything touches it is not poisoned; one a launch or read-back touches first is', () => {
  assert.deepEqual([...allocStepsUploadedBeforeUse(plan())], [0], 'a is uploaded first; b is given to the launch unwritten');
  const readFirst = plan();
  readFirst.steps.splice(2, 0, { op: 'download', buffer: 'a' });
  assert.deepEqual([...allocStepsUploadedBeforeUse(readFirst)], []);
});
