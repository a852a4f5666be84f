import assert from 'node:assert/strict';
import { test } from 'node:test';

import { nvccCudaVersion } from '../../core/doctor/compiler-rules';
import { answered, checksById, cudaDevice, discovery, facts, missingLibrary } from '../helpers/doctor-facts';

const nvrtcAt = (version: number, archs?: number[]) => ({
  loaded: true,
  path: '/opt/cuda/lib64/libnvrtc.so',
  source: 'CUDA_HOME',
  version,
  attempts: [],
  missingRequired: [],
  missingOptional: [],
  ...(archs ? { supportedArchs: archs } : {}),
});
const driverAt = (version: number) => ({ ...discovery().cuda, version });

test('a driver older than NVRTC across a major version (12.2 driver, NVRTC 13.0): a failure naming 222 and the driver it needs', () => {
  const c = checksById(facts({ discovery: discovery({ cuda: driverAt(12020), nvrtc: nvrtcAt(13000) }) }))['nvrtc-vs-driver']!;
  assert.equal(c.status, 'fail');
  assert.equal(c.area, 'compilers');
  assert.match(c.detail, /NVRTC is CUDA 13\.0 but the driver supports only CUDA 12\.2/);
  assert.match(c.detail, /CUDA_ERROR_UNSUPPORTED_PTX_VERSION \(222\)/);
  assert.match(c.detail, /580 series or newer/);
  assert.match(c.remedy!, /580 series or newer.*GPU_WORKBENCH_NVRTC_LIB/);
});

test('NVRTC newer within the major version: machine code loads, PTX does not — a warning', () => {
  const c = checksById(facts({ discovery: discovery({ cuda: driverAt(13000), nvrtc: nvrtcAt(13010) }) }))['nvrtc-vs-driver']!;
  assert.equal(c.status, 'warn');
  assert.match(c.detail, /still loads .*PTX it writes cannot be JIT-compiled .*222/);
  assert.match(c.remedy!, /supports CUDA 13\.1|-arch=sm_XX/);
});

test('a compiler no newer than the driver passes, and says both versions', () => {
  const c = checksById(facts({ discovery: discovery({ cuda: driverAt(13000), nvrtc: nvrtcAt(12080) }) }))['nvrtc-vs-driver']!;
  assert.equal(c.status, 'ok');
  assert.match(c.detail, /CUDA 12\.8; the driver supports CUDA 13\.0/);
});

test('nvcc is judged the same way from its --version text', () => {
  assert.equal(nvccCudaVersion('CUDA 13.0 (V13.0.88)'), 13000);
  assert.equal(nvccCudaVersion('Cuda compilation tools, release 12.4, V12.4.131'), 12040);
  assert.equal(nvccCudaVersion(null), null);
  const newer = discovery({
    cuda: driverAt(12040),
    nvcc: { found: true, path: '/usr/local/cuda-13.0/bin/nvcc', version: 'CUDA 13.0 (V13.0.88)', searched: [] },
  });
  const c = checksById(facts({ discovery: newer }))['nvcc-vs-driver']!;
  assert.equal(c.status, 'fail');
  assert.match(c.remedy!, /GPU_WORKBENCH_NVCC/);
  const unknown = discovery({ nvcc: { found: true, path: '/usr/bin/nvcc', version: null, searched: [] } });
  assert.equal(checksById(facts({ discovery: unknown }))['nvcc-vs-driver']!.status, 'not-run');
});

test('without a driver the comparison is not run, never passed', () => {
  const f = facts({
    discovery: discovery({ cuda: missingLibrary('libcuda.so.1'), nvml: missingLibrary('libnvidia-ml.so.1') }),
    nvml: { status: 'skipped', detail: 'NVML was not found.' },
  });
  for (const id of ['nvrtc-vs-driver', 'nvcc-vs-driver']) {
    const c = checksById(f)[id]!;
    assert.equal(c.status, 'not-run', id);
    assert.match(c.detail, /no NVIDIA driver was found/);
  }
});

test("NVRTC that cannot build for the GPU's architecture fails with 'no kernel image' (209), older or newer", () => {
  const volta = facts({ cudaDevices: answered([cudaDevice(0, { name: 'Tesla V100-SXM2-32GB', computeCapability: { major: 7, minor: 0 } })]) });
  const old = checksById(volta)['nvrtc-arch']!;
  assert.equal(old.status, 'fail');
  assert.match(old.detail, /sm_70 .*older than its oldest target, sm_75/);
  assert.match(old.detail, /no kernel image is available .*209/);
  const blackwell = facts({
    discovery: discovery({ nvrtc: nvrtcAt(12040, [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90]) }),
    cudaDevices: answered([cudaDevice(0, { name: 'NVIDIA RTX PRO 6000', computeCapability: { major: 12, minor: 0 } })]),
  });
  assert.match(checksById(blackwell)['nvrtc-arch']!.detail, /sm_120 .*newer than its newest target, sm_90/);
  assert.equal(checksById(facts())['nvrtc-arch']!.status, 'ok');
  const unlisted = facts({ discovery: discovery({ nvrtc: nvrtcAt(11010) }) });
  assert.equal(checksById(unlisted)['nvrtc-arch']!.status, 'not-run');
});
