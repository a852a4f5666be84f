import assert from 'node:assert/strict';
import { test } from 'node:test';

import { libcudaRelease } from '../../core/doctor/driver-rules';
import { answered, checksById, discovery, facts, missingLibrary } from '../helpers/doctor-facts';

const withLibcudaFile = (libcudaRealPath: string) => {
  const f = facts();
  if (f.installations.status !== 'ok') throw new Error('unreachable');
  return { ...f, installations: answered({ ...f.installations.value, libcudaRealPath }) };
};

test("the driver's release, from NVML and from libcuda's file name", () => {
  assert.equal(libcudaRelease('/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04'), '580.159.04');
  assert.equal(libcudaRelease('/usr/local/cuda-13.0/compat/libcuda.so.590.48'), '590.48');
  assert.equal(libcudaRelease('/usr/lib/libcuda.so.1'), null);
  assert.equal(libcudaRelease('/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1.1'), null, 'Jetson’s names no driver release');
  const c = checksById(facts())['driver-version']!;
  assert.equal(c.status, 'ok');
  assert.match(c.detail, /^Driver 580\.159\.04; libcuda .* supports CUDA 13\.0/);
});

test('a forward-compatibility libcuda newer than the installed driver, or an older stray copy, warns', () => {
  const compat = checksById(withLibcudaFile('/usr/local/cuda-13.1/compat/libcuda.so.590.44.01'))['driver-version']!;
  assert.equal(compat.status, 'warn');
  assert.match(compat.detail, /installed driver is 580\.159\.04, but the libcuda in use is from 590\.44\.01: a forward-compatibility libcuda/);
  assert.match(compat.detail, /804.*803/);
  const stray = checksById(withLibcudaFile('/opt/old/libcuda.so.535.104.05'))['driver-version']!;
  assert.equal(stray.status, 'warn');
  assert.match(stray.detail, /older copy found first on the loader path.*803/);
});

test('NVML sees a driver but libcuda is not there (a container without the compute capability): a failure', () => {
  const c = checksById(facts({ discovery: discovery({ cuda: missingLibrary('libcuda.so.1') }) }))['driver-version']!;
  assert.equal(c.status, 'fail');
  assert.match(c.detail, /NVML reports driver 580\.159\.04 installed, but .*libcuda\.so\.1\) could not be loaded/);
  assert.match(c.remedy!, /NVIDIA_DRIVER_CAPABILITIES=compute/);
});

test('NVML that does not answer in time is a finding (a wedged GPU), with what to do', () => {
  const c = checksById(facts({ nvml: { status: 'timed-out', limitMs: 5000, detail: "NVML (nvmlInit and each GPU's queries) did not answer within 5 s." } }));
  assert.equal(c['nvml-answer']!.status, 'fail');
  assert.match(c['nvml-answer']!.detail, /did not answer within 5 s\. .*wedged/);
  assert.match(c['nvml-answer']!.remedy!, /dmesg \| grep -i xid/);
  assert.equal(c['gpu-state']!.status, 'not-run');
  assert.match(c['gpu-state']!.detail, /did not answer within 5 s/);
  assert.equal(c['driver-version']!.status, 'not-run');
});

test('NVML refusing after a driver update without a reboot says to reboot', () => {
  const c = checksById(
    facts({
      nvml: {
        status: 'failed',
        ms: 3,
        detail: "NVML (nvmlInit and each GPU's queries) failed: nvmlInit_v2 failed: Driver/library version mismatch",
        error: { api: 'nvmlInit_v2', code: 18, name: 'NVML_ERROR_18' },
      },
    }),
  )['nvml-answer']!;
  assert.equal(c.status, 'fail');
  assert.match(c.detail, /NVML_ERROR_LIB_RM_VERSION_MISMATCH/);
  assert.match(c.remedy!, /reboot/);
});

test('the CUDA driver not answering in time fails the devices check with the limit in it', () => {
  const c = checksById(
    facts({ cudaDevices: { status: 'timed-out', limitMs: 5000, detail: 'The CUDA driver (cuInit and the device queries) did not answer within 5 s.' } }),
  );
  assert.equal(c['devices']!.status, 'fail');
  assert.match(c['devices']!.detail, /did not answer within 5 s/);
  assert.equal(c['device-order']!.status, 'not-run');
});
