import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { monitorUnavailable, sanitizerRerunUnavailable, sanitizerUnavailable } from '../../core/availability';
import { doctorChecks, type DiscoveryReport } from '../../core/discovery';
import { ROOT } from '../helpers/cli';
import { missingLibrary } from '../helpers/doctor-facts';

// Issue 26, item 7: an action that cannot work on this machine is off, and says why, from the same discovery the
// doctor judges. The H100's discovery is the one recorded there (test/fixtures/env/h100); the machine without a GPU
// is that report with the driver's, NVML's and compute-sanitizer's look-ups failed as they fail here.
const h100: DiscoveryReport = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/env/h100/doctor-facts.json'), 'utf8')).discovery;
const failed = missingLibrary;
const noGpu: DiscoveryReport = {
  ...h100,
  cuda: failed('libcuda.so.1'),
  nvml: failed('libnvidia-ml.so.1'),
  computeSanitizer: { found: false, path: null, version: null, searched: ['/usr/local/cuda/bin/compute-sanitizer', '/usr/bin/compute-sanitizer'] },
};
const gpu = { present: true } as const;
const none = { present: false, reason: 'No NVIDIA driver found.' } as const;
const check = (d: DiscoveryReport, id: string) => doctorChecks(d, null, null).find((c) => c.id === id)!;

test('the H100 with its tool and NVML: the re-run and the monitor can work', () => {
  assert.equal(sanitizerRerunUnavailable(h100, gpu), null);
  assert.equal(monitorUnavailable(h100), null);
});

test('no compute-sanitizer: the re-run is off, and says where it comes from and how to point at it', () => {
  const why = sanitizerRerunUnavailable(noGpu, none);
  assert.match(why!, /^compute-sanitizer was not found on this machine \(Devices shows where it was looked for\)\. It ships with the CUDA toolkit/);
  assert.match(why!, /GPU_WORKBENCH_COMPUTE_SANITIZER/);
  assert.doesNotMatch(why!, /\/usr\/bin/, 'no wall of searched paths: the doctor lists them');
});

test('no compute-sanitizer: Sanitize a program and a diagnosis’s sanitizer passes are off for the same reason; with the tool they are on, GPU or not', () => {
  assert.equal(sanitizerUnavailable(noGpu), sanitizerRerunUnavailable(noGpu, none));
  assert.equal(sanitizerUnavailable({ ...noGpu, computeSanitizer: h100.computeSanitizer }), null, 'the program says for itself whether it needs a GPU');
  assert.equal(sanitizerUnavailable(h100), null);
  assert.match(sanitizerUnavailable(null)!, /^Looking for compute-sanitizer/);
});

test('the tool without a GPU: the re-run is off because the plan runs on a GPU, with the same reason Run gives', () => {
  const tool = { ...noGpu, computeSanitizer: h100.computeSanitizer };
  assert.equal(
    sanitizerRerunUnavailable(tool, none),
    'compute-sanitizer runs the plan on a GPU, and this machine has none: No NVIDIA driver found. Open sanitizer report… opens a report saved on a GPU machine.',
  );
});

test('no NVML: monitoring is off and says what it needs', () => {
  assert.equal(
    monitorUnavailable(noGpu),
    'Monitoring needs NVML (libnvidia-ml.so.1, installed with the NVIDIA driver), and it was not found on this machine (Devices shows where it was looked for).',
  );
});

test('while the host has not answered yet, both wait rather than guess', () => {
  assert.match(sanitizerRerunUnavailable(null, null)!, /^Looking for/);
  assert.match(sanitizerRerunUnavailable(h100, null)!, /^Looking for/);
  assert.match(monitorUnavailable(null)!, /^Looking for/);
});

test('one truth: an action is off for a missing library exactly when the doctor flags that library', () => {
  for (const d of [h100, noGpu, { ...h100, nvml: noGpu.nvml }, { ...noGpu, computeSanitizer: h100.computeSanitizer }]) {
    assert.equal(monitorUnavailable(d) !== null, check(d, 'nvml').status !== 'ok');
    assert.equal(/not found/.test(sanitizerRerunUnavailable(d, gpu) ?? ''), check(d, 'compute-sanitizer').status !== 'ok');
    assert.equal(sanitizerUnavailable(d) !== null, check(d, 'compute-sanitizer').status !== 'ok');
  }
});
