import assert from 'node:assert/strict';
import { test } from 'node:test';

import { environmentChecks, type EnvironmentFacts } from '../../core/doctor/environment-rules';

const facts = (over: Partial<EnvironmentFacts>): EnvironmentFacts => ({
  env: {},
  libcudaPath: '/usr/lib/x86_64-linux-gnu/libcuda.so.1',
  ...over,
});
const byId = (f: EnvironmentFacts) => Object.fromEntries(environmentChecks(f).map((c) => [c.id, c]));

test('a clean environment says nothing', () => {
  assert.deepEqual(environmentChecks(facts({})), []);
});

test('CUDA_VISIBLE_DEVICES: hiding every GPU fails, a subset warns with the renumbering', () => {
  for (const hidden of ['', '-1', 'NoDevFiles']) {
    const c = byId(facts({ env: { CUDA_VISIBLE_DEVICES: hidden } }))['cuda-visible-devices']!;
    assert.equal(c.status, 'fail', JSON.stringify(hidden));
    assert.match(c.detail, /hides every GPU.*cudaErrorNoDevice, 100/);
  }
  const subset = byId(facts({ env: { CUDA_VISIBLE_DEVICES: '3,1' } }))['cuda-visible-devices']!;
  assert.equal(subset.status, 'warn');
  assert.match(subset.detail, /device 0 in your program is "3" in nvidia-smi/);
});

// CUDA_DEVICE_ORDER is judged against the devices themselves: test/unit/doctor-device-order.test.ts.

test('CUDA_LAUNCH_BLOCKING left on, eager module loading, and PyTorch allocator settings with a typo', () => {
  assert.equal(byId(facts({ env: { CUDA_LAUNCH_BLOCKING: '1' } }))['cuda-launch-blocking']!.status, 'warn');
  assert.equal(byId(facts({ env: { CUDA_LAUNCH_BLOCKING: '0' } }))['cuda-launch-blocking'], undefined);
  assert.equal(byId(facts({ env: { CUDA_MODULE_LOADING: 'EAGER' } }))['cuda-module-loading']!.status, 'warn');
  assert.equal(byId(facts({ env: { CUDA_MODULE_LOADING: 'LAZY' } }))['cuda-module-loading'], undefined);
  const good = byId(facts({ env: { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' } }))['pytorch-cuda-alloc-conf']!;
  assert.equal(good.status, 'ok');
  const typo = byId(facts({ env: { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segment:True,max_split_size_mb:128' } }))['pytorch-cuda-alloc-conf']!;
  assert.equal(typo.status, 'warn');
  assert.match(typo.detail, /does not know expandable_segment:True/);
});

test('a stub libcuda first on LD_LIBRARY_PATH fails with CUDA_ERROR_STUB_LIBRARY; a compat one warns', () => {
  const stub = byId(
    facts({
      libcudaPath: '/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs/libcuda.so.1',
      env: { LD_LIBRARY_PATH: '/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs:/usr/lib' },
    }),
  )['libcuda-stub']!;
  assert.equal(stub.status, 'fail');
  // The doctor speaks of its own process, which loaded it (a diagnosis says what the program will load).
  assert.equal(stub.title, 'The driver library loaded is a build stub');
  assert.match(stub.detail, /^libcuda was loaded from \/usr\/local\/cuda-13\.0\/targets/);
  assert.match(stub.detail, /CUDA_ERROR_STUB_LIBRARY \(34\).*LD_LIBRARY_PATH puts a stubs folder/);
  const compat = byId(facts({ libcudaPath: '/usr/local/cuda-13.0/compat/libcuda.so.1' }))['libcuda-compat']!;
  assert.equal(compat.status, 'warn');
  // conda-forge's forward-compatibility package is one too; the driver's own folder is not.
  assert.equal(byId(facts({ libcudaPath: '/opt/conda/envs/x/cuda-compat/libcuda.so.1' }))['libcuda-compat']?.status, 'warn');
  assert.equal(byId(facts({ libcudaPath: '/usr/lib/x86_64-linux-gnu/libcuda.so.1' }))['libcuda-compat'], undefined);
  const named = byId(facts({ env: { LD_LIBRARY_PATH: '/opt/cuda/lib64/stubs' } }))['ld-library-path']!;
  assert.equal(named.status, 'warn');
});
