import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  DEFAULT_LAUNCH_FORM,
  dimInput,
  formFromLaunch,
  launchForDocument,
  launchFromStepLabel,
  parseLaunchForm,
  parseSharedBytes,
  planLaunches,
  planWithDocumentSource,
  planWithLaunch,
} from '../../core/plan/plan-launch';
import { stepLabel } from '../../core/plan/step-label';
import { launchPlanSchema } from '../../core/plan/plan-schema';
import { recordedLaunch } from '../../core/runner/recorded-launch';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { ROOT, SAMPLES } from '../helpers/cli';

const sample = (path: string): unknown => JSON.parse(readFileSync(join(SAMPLES, path), 'utf8'));
const recorded = (name: string) => JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs', name), 'utf8')) as RunOutcome;

test('a sample plan fills the launch panel: its launch step, not the form default', () => {
  const plan = sample('block-too-large/plan.json');
  const launch = launchForDocument(plan, 'kernel.cu');
  assert.ok(launch);
  assert.equal(launch.stepIndex, 5);
  assert.equal(launch.entry, 'addMatrices');
  assert.deepEqual(formFromLaunch(launch), { kernel: 'addMatrices', grid: '8,16', block: '64,32', smem: '0' });
  assert.notDeepEqual(formFromLaunch(launch), DEFAULT_LAUNCH_FORM);
});

test('with two kernels, the panel shows the launch of the document’s own kernel', () => {
  const plan = {
    version: 1,
    kernels: [
      { id: 'ref', entry: 'reference', source: '', sourceName: 'reference.cu' },
      { id: 'k', entry: 'reduce', source: '', sourceName: 'broken.cu' },
    ],
    buffers: [],
    steps: [
      { op: 'launch', kernel: 'ref', grid: [1, 1, 1], block: [32, 1, 1], args: [] },
      { op: 'launch', kernel: 'k', grid: [4], block: [16, 16], sharedBytes: 4096, args: [] },
    ],
  };
  assert.equal(launchForDocument(plan, 'broken.cu')?.stepIndex, 1);
  assert.deepEqual(formFromLaunch(launchForDocument(plan, 'broken.cu')!), { kernel: 'reduce', grid: '4', block: '16,16', smem: '4096' });
  assert.equal(launchForDocument(plan, 'reference.cu')?.stepIndex, 0);
  assert.equal(launchForDocument(plan, 'other.cu')?.stepIndex, 0, 'no kernel from that file: the first launch');
  assert.equal(planLaunches(plan).length, 2);
});

test('planLaunches reads a plan as it came from a file: malformed steps are skipped, never thrown on', () => {
  assert.deepEqual(planLaunches(null), []);
  assert.deepEqual(planLaunches({ steps: 'x' }), []);
  assert.deepEqual(
    planLaunches({
      steps: [
        { op: 'launch', kernel: 'k', grid: [0], block: [1] },
        { op: 'launch', kernel: 'k', grid: [1, 2, 3, 4], block: [1] },
      ],
    }),
    [],
  );
  const [l] = planLaunches({ steps: [{ op: 'launch', kernel: 'k', grid: [2], block: [3], sharedBytes: -5 }] });
  assert.deepEqual(l, { stepIndex: 0, kernelId: 'k', entry: 'k', sourceName: null, grid: [2, 1, 1], block: [3, 1, 1], sharedBytes: 0 });
});

test('editing the panel edits the plan’s launch step, and only it', () => {
  const plan = sample('block-too-large/plan.json') as { steps: Record<string, unknown>[] };
  const edited = planWithLaunch(plan, 5, { kernel: 'addMatrices', grid: '8, 16', block: '32x32', smem: '1024' });
  assert.ok(edited.ok);
  const steps = (edited.value as typeof plan).steps;
  assert.deepEqual([steps[5]!['grid'], steps[5]!['block'], steps[5]!['sharedBytes']], [[8, 16, 1], [32, 32, 1], 1024]);
  assert.deepEqual(steps.slice(0, 5), plan.steps.slice(0, 5));
  assert.deepEqual(plan.steps[5]!['block'], [64, 32, 1], 'the original is not changed');
  // What it gives is a plan the schema takes (once the kernel's source is read in).
  const withSource = planWithDocumentSource(
    { ...(edited.value as object), kernels: [{ id: 'add', entry: 'addMatrices', sourceName: 'kernel.cu', source: '' }] },
    'kernel.cu',
    '__global__ void addMatrices() {}',
  );
  const parsed = launchPlanSchema.safeParse(withSource);
  assert.ok(parsed.success);
  assert.equal(parsed.data.kernels[0]!.source, '__global__ void addMatrices() {}');
  assert.equal(stepLabel(parsed.data.steps[5]!, parsed.data), 'launch addMatrices<<<(8,16), (32,32), 1024>>>');

  const bad = planWithLaunch(plan, 5, { kernel: '', grid: '0', block: '1', smem: '0' });
  assert.deepEqual(bad, { ok: false, error: 'Grid "0": every dimension must be at least 1' });
  assert.equal(planWithLaunch(plan, 0, DEFAULT_LAUNCH_FORM).ok, false, 'step 1 is an alloc, not a launch');
});

test('shared memory and the whole form parse as the driver’s fields take them', () => {
  assert.deepEqual(parseSharedBytes(' 49152 '), { ok: true, value: 49152 });
  for (const bad of ['', '-1', '1.5', '4294967296', '48K']) assert.equal(parseSharedBytes(bad).ok, false, bad);
  assert.deepEqual(parseLaunchForm({ kernel: 'k', grid: '4', block: '16,16', smem: '0' }), {
    ok: true,
    value: { grid: [4, 1, 1], block: [16, 16, 1], sharedBytes: 0 },
  });
  assert.equal(dimInput([64, 32, 1]), '64,32');
  assert.equal(dimInput([8, 1, 2]), '8,1,2');
  assert.equal(dimInput([256, 1, 1]), '256');
});

test('a recorded step label reads back into its launch', () => {
  assert.deepEqual(launchFromStepLabel('launch addMatrices<<<(8,16), (64,32)>>>'), {
    entry: 'addMatrices',
    grid: [8, 16, 1],
    block: [64, 32, 1],
    sharedBytes: 0,
  });
  assert.deepEqual(launchFromStepLabel('launch fill<<<4, 256, 1024>>>'), { entry: 'fill', grid: [4, 1, 1], block: [256, 1, 1], sharedBytes: 1024 });
  assert.deepEqual(launchFromStepLabel('launch reduce<256><<<(2,2,2), 128>>>'), { entry: 'reduce<256>', grid: [2, 2, 2], block: [128, 1, 1], sharedBytes: 0 });
  assert.equal(launchFromStepLabel('alloc a'), null);
  assert.equal(launchFromStepLabel('launch k<<<>>>'), null);
});

test('a recorded result’s launch: the failing one, from its record or its label, with the device that ran it', () => {
  // The driver refused it: no launch record, only the label.
  assert.deepEqual(recordedLaunch(recorded('block-too-large.json')), {
    stepIndex: 5,
    entry: 'addMatrices',
    grid: [8, 16, 1],
    block: [64, 32, 1],
    sharedBytes: 0,
    deviceName: 'NVIDIA H100 80GB HBM3',
  });
  const assertRun = recordedLaunch(recorded('device-assert.json'));
  assert.deepEqual([assertRun?.entry, assertRun?.grid, assertRun?.block], ['fill', [4, 1, 1], [256, 1, 1]]);
  assert.equal(recordedLaunch(recorded('static-shared-too-large.json')), null, 'a compile failure launched nothing');
});

test("a wrong result's recorded launch is the kernel that wrote the buffer, not the reference that ran first (issue 26, item 12)", () => {
  // The race: the reference kernel (step 5) fills `expected`, reverseBlocks (step 6) writes `out`, and the result is found
  // wrong where `out` is read back and compared (step 8).
  const race = recorded('shared-memory-race.json');
  assert.equal(race.diagnosis.step?.index, 7);
  assert.equal(race.diagnosis.kernel, null);
  const launch = recordedLaunch(race);
  assert.deepEqual([launch?.stepIndex, launch?.entry], [5, 'reverseBlocks']);
  // Without its diagnosis: the last launch the run made.
  assert.equal(recordedLaunch({ result: race.result })?.entry, 'reverseBlocks');
});
