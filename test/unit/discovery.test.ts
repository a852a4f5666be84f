import assert from 'node:assert/strict';
import { test } from 'node:test';

import { doctorChecks, driverMissingProblem, searched, type DiscoveryReport } from '../../core/discovery';
import { missingLibrary } from '../helpers/doctor-facts';

const missing = missingLibrary;

const report = (over: Partial<DiscoveryReport>): DiscoveryReport => ({
  addon: { loaded: true, path: '/x/addon.node', error: null },
  cuda: missing('libcuda.so.1'),
  nvrtc: missing('libnvrtc.so.13'),
  nvml: missing('libnvidia-ml.so.1'),
  nvcc: { found: false, path: null, version: null, searched: ['/usr/local/cuda/bin/nvcc'] },
  platform: 'linux-x64',
  ...over,
});

test('no driver: a problem that names every place searched and what to do', () => {
  const problem = driverMissingProblem(report({}));
  assert.equal(problem.title, 'No NVIDIA driver found');
  assert.deepEqual(problem.searched, ['libcuda.so.1 (loader path): cannot open shared object file: No such file or directory']);
  assert.match(problem.remedy, /Install the NVIDIA driver/);
  const checks = doctorChecks(report({}), null, null);
  assert.equal(checks.find((c) => c.id === 'driver')?.status, 'fail');
  assert.equal(checks.find((c) => c.id === 'nvrtc')?.status, 'fail');
  assert.equal(checks.find((c) => c.id === 'nvml')?.status, 'warn');
});

test('a driver without a required symbol is reported as too old', () => {
  const old = report({
    cuda: { ...missing('libcuda.so.1'), attempts: [{ candidate: 'libcuda.so.1', source: 'loader path', error: 'too old: lacks cuDeviceGetUuid_v2' }] },
  });
  assert.equal(driverMissingProblem(old).title, 'The NVIDIA driver is too old');
});

// The compilers against the driver (NVRTC and nvcc): test/unit/doctor-compilers.test.ts.

test('nvcc stands in for a missing NVRTC as a warning, not a failure', () => {
  const checks = doctorChecks(report({ nvcc: { found: true, path: '/usr/local/cuda/bin/nvcc', version: 'CUDA 13.0', searched: [] } }), null, null);
  assert.equal(checks.find((c) => c.id === 'nvrtc')?.status, 'warn');
  assert.match(checks.find((c) => c.id === 'nvrtc')!.remedy!, /Compiling with nvcc/);
});

test('searched() keeps dlerror text that does not repeat the path', () => {
  assert.deepEqual(searched({ ...missing('x'), attempts: [{ candidate: '/a/libcuda.so.1', source: 'setting', error: 'too old: lacks cuInit' }] }), [
    '/a/libcuda.so.1 (setting): too old: lacks cuInit',
  ]);
});

test('compute-sanitizer: found with its version, or a warning that says what it is for and how to get it', () => {
  const found = doctorChecks(
    report({ computeSanitizer: { found: true, path: '/usr/local/cuda/bin/compute-sanitizer', version: '2025.3.0.0', searched: [] } }),
    null,
    null,
  ).find((c) => c.id === 'compute-sanitizer')!;
  assert.deepEqual([found.status, found.detail], ['ok', '/usr/local/cuda/bin/compute-sanitizer — 2025.3.0.0']);
  const missing = doctorChecks(
    report({ computeSanitizer: { found: false, path: null, version: null, searched: ['/usr/local/cuda/bin/compute-sanitizer'] } }),
    null,
    null,
  ).find((c) => c.id === 'compute-sanitizer')!;
  assert.equal(missing.status, 'warn');
  assert.deepEqual(missing.searched, ['/usr/local/cuda/bin/compute-sanitizer']);
  assert.match(missing.remedy!, /names the faulting line.*cuda-sanitizer.*GPU_WORKBENCH_COMPUTE_SANITIZER/s);
});
