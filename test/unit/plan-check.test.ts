import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { runBlockers } from '../../core/plan/run-readiness';
import { deviceLimits, type DeviceProfile } from '../../core/validate/device-limits';
import { checkPlanLaunches, launchRefusals } from '../../core/validate/plan-check';
import { ROOT, SAMPLES } from '../helpers/cli';

const h100 = deviceLimits((JSON.parse(readFileSync(join(ROOT, 'profiles/nvidia-h100.json'), 'utf8')) as DeviceProfile).device);
const plan = (path: string): unknown => JSON.parse(readFileSync(join(SAMPLES, path), 'utf8'));
const addMatrices = { numRegs: 12, sharedSizeBytes: 0, localSizeBytes: 0, maxThreadsPerBlock: 1024, maxDynamicSharedSizeBytes: 49152 };

test('Run checks every launch of the plan against the chosen profile, with the kernel’s resources where known', () => {
  const checks = checkPlanLaunches(plan('block-too-large/plan.json'), h100, (l) => (l.entry === 'addMatrices' ? addMatrices : null));
  assert.equal(checks.length, 1);
  assert.deepEqual([checks[0]!.stepIndex, checks[0]!.label, checks[0]!.checkedWith], [5, 'launch addMatrices<<<(8,16), (64,32)>>>', 'kernel']);
  const refusals = launchRefusals(checks);
  assert.equal(refusals.length, 1);
  assert.match(
    refusals[0]!,
    /^Step 6 \(launch addMatrices<<<\(8,16\), \(64,32\)>>>\): \(64,32\) is 2048 threads per block; this device allows 1024\. Fix: Use \(64,16\)/,
  );
  // The fixed plan passes.
  assert.deepEqual(launchRefusals(checkPlanLaunches(plan('block-too-large/plan.fixed.json'), h100, () => addMatrices)), []);
});

test('a kernel whose resources are unknown is still held to the device’s own limits', () => {
  const checks = checkPlanLaunches(plan('grid-too-large/plan.json'), h100, () => null);
  assert.equal(checks[0]!.checkedWith, 'device');
  assert.match(launchRefusals(checks).join('\n'), /grid/i);
  assert.ok(checks.every((c) => c.findings.every((f) => f.field !== 'kernel')));
});

test('why Run is off, in the order a person fixes it', () => {
  const blockers = runBlockers({
    compile: 'failed',
    documentName: 'kernel.cu',
    planProblem: null,
    refusals: ['Step 6 (…): too many threads.'],
    deviceLabel: 'NVIDIA H100 (profile)',
    gpu: { present: false, reason: 'No NVIDIA driver found.' },
  });
  assert.deepEqual(
    blockers.map((b) => b.reason),
    [
      'kernel.cu does not compile: fix the errors under Problems first.',
      'The launch would fail on NVIDIA H100 (profile):',
      'Run needs an NVIDIA GPU, and this machine has none: No NVIDIA driver found. Compiling, checking launches against a profile and opening recorded results still work.',
    ],
  );
  assert.deepEqual(blockers[1]!.details, ['Step 6 (…): too many threads.']);
  assert.deepEqual(runBlockers({ compile: 'ok', documentName: 'k.cu', planProblem: null, refusals: [], deviceLabel: null, gpu: { present: true } }), []);
  assert.deepEqual(
    runBlockers({ compile: 'compiling', documentName: 'k.cu', planProblem: null, refusals: [], deviceLabel: null, gpu: null }).map((b) => b.reason),
    ['Looking for a CUDA device…'],
  );
});
