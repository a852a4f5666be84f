import assert from 'node:assert/strict';
import { test } from 'node:test';

import { driverCandidates, nvrtcCandidates, type CandidateEnv } from '../../main/native/library-candidates';

const fakeFs = (env: Record<string, string>, dirs: Record<string, string[]>): CandidateEnv => ({
  env,
  exists: (p) => Object.keys(dirs).some((d) => d === p || d.startsWith(`${p}/`)),
  list: (d) => dirs[d] ?? [],
});

test('NVRTC search order: setting, CUDA_PATH, loader path, /usr/local/cuda*, Python wheels', () => {
  const e = fakeFs(
    { GPU_WORKBENCH_NVRTC_LIB: '/opt/mine/libnvrtc.so', CUDA_PATH: '/opt/cuda', HOME: '/home/u' },
    {
      '/usr/local': ['cuda-12.8', 'cuda-13.0', 'bin'],
      '/home/u/.local/lib': ['python3.12'],
      '/home/u/.local/lib/python3.12/site-packages/nvidia': ['cu13', 'cublas'],
      '/home/u/.local/lib/python3.12/site-packages/nvidia/cu13/lib': ['libnvrtc.so.13', 'libnvrtc-builtins.so.13.0'],
    },
  );
  const sources = nvrtcCandidates(undefined, e).map((c) => c.source);
  const order = ['setting', 'CUDA_PATH', 'loader path', '/usr/local/cuda', '/usr/local/cuda-13.0', '/usr/local/cuda-12.8', 'python wheel'];
  assert.deepEqual([...new Set(sources)], order);
  const paths = nvrtcCandidates(undefined, e).map((c) => c.path);
  assert.equal(paths[0], '/opt/mine/libnvrtc.so');
  assert.ok(paths.includes('/home/u/.local/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13'));
  assert.ok(!paths.some((p) => p.includes('builtins')));
});

test('driver search starts with the setting, then the loader', () => {
  const paths = driverCandidates(fakeFs({ GPU_WORKBENCH_CUDA_LIB: '/x/libcuda.so.1' }, {})).map((c) => c.path);
  assert.deepEqual(paths.slice(0, 2), ['/x/libcuda.so.1', 'libcuda.so.1']);
});
