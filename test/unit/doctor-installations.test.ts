import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { InstallationFacts, ToolkitFact } from '../../core/doctor/facts';
import { toolkitHolding } from '../../core/doctor/installation-rules';
import { answered, checksById, discovery, facts } from '../helpers/doctor-facts';

const toolkit = (root: string, version: string, foundAs: ToolkitFact['foundAs'] = '/usr/local', realRoot: string | null = root): ToolkitFact => ({
  root,
  realRoot,
  version,
  foundAs,
});

function withInstallations(over: Partial<InstallationFacts>, d = discovery()) {
  return facts({
    discovery: d,
    installations: answered({
      toolkits: [
        toolkit('/usr/local/cuda', '13.0.88', '/usr/local', '/usr/local/cuda-13.0'),
        toolkit('/usr/local/cuda-12.4', '12.4.131'),
        toolkit('/usr/local/cuda-13.0', '13.0.88'),
      ],
      cudaHome: null,
      cudaPath: null,
      nvccRealPath: '/usr/local/cuda-13.0/bin/nvcc',
      nvrtcRealPath: '/usr/local/cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13.0.88',
      libcudaRealPath: null,
      ...over,
    }),
  });
}

test('the toolkit a file lies in is the longest root that holds it', () => {
  const kits = [toolkit('/opt/cuda', '12.4'), toolkit('/opt/cuda/nested', '13.0'), toolkit('/opt/cuda-x', '11.8')];
  assert.equal(toolkitHolding(kits, '/opt/cuda/nested/bin/nvcc')?.version, '13.0');
  assert.equal(toolkitHolding(kits, '/opt/cuda-x/bin/nvcc')?.version, '11.8');
  assert.equal(toolkitHolding(kits, '/usr/bin/nvcc'), null);
});

test('several installations used consistently pass, and are listed once each', () => {
  const c = checksById(withInstallations({}))['cuda-installations']!;
  assert.equal(c.status, 'ok');
  assert.match(c.detail, /^2 CUDA toolkits: \/usr\/local\/cuda \(→ \/usr\/local\/cuda-13\.0\) 13\.0\.88; \/usr\/local\/cuda-12\.4 12\.4\.131/);
  assert.match(c.detail, /In use: nvcc from \/usr\/local\/cuda, NVRTC from \/usr\/local\/cuda\./);
});

test('nvcc from one toolkit and NVRTC from another, of different versions, warns', () => {
  const d = discovery({ nvcc: { found: true, path: '/usr/local/cuda-12.4/bin/nvcc', version: 'CUDA 12.4 (V12.4.131)', searched: [] } });
  const c = checksById(withInstallations({ nvccRealPath: '/usr/local/cuda-12.4/bin/nvcc' }, d))['cuda-installations']!;
  assert.equal(c.status, 'warn');
  assert.match(c.detail, /nvcc is CUDA 12\.4 .* but NVRTC is CUDA 13\.0/);
  assert.match(c.remedy!, /CUDA_HOME/);
});

test('CUDA_HOME naming a missing folder, or a toolkit other than the nvcc in use, warns', () => {
  const missing = withInstallations({
    cudaHome: '/opt/cuda-11.8',
    toolkits: [toolkit('/usr/local/cuda-13.0', '13.0.88'), toolkit('/opt/cuda-11.8', '', 'CUDA_HOME', null)],
  });
  const a = checksById(missing)['cuda-installations']!;
  assert.equal(a.status, 'warn');
  assert.match(a.detail, /CUDA_HOME=\/opt\/cuda-11\.8 names a folder that does not exist/);
  const other = withInstallations({
    cudaHome: '/usr/local/cuda-12.4',
    toolkits: [toolkit('/usr/local/cuda-13.0', '13.0.88'), toolkit('/usr/local/cuda-12.4', '12.4.131', 'CUDA_HOME')],
  });
  const b = checksById(other)['cuda-installations']!;
  assert.equal(b.status, 'warn');
  assert.match(b.detail, /CUDA_HOME=\/usr\/local\/cuda-12\.4 is one toolkit, but the nvcc in use is \/usr\/local\/cuda-13\.0\/bin\/nvcc/);
  assert.match(b.remedy!, /put \/usr\/local\/cuda-12\.4\/bin first on PATH, or set CUDA_HOME to \/usr\/local\/cuda-13\.0/);
});

test('no toolkit at all is said, with where it was looked for', () => {
  const c = checksById(withInstallations({ toolkits: [], nvccRealPath: null, nvrtcRealPath: null }))['cuda-installations']!;
  assert.equal(c.status, 'ok');
  assert.match(c.detail, /^No CUDA toolkit found \(looked in \/usr\/local\/cuda\*, CUDA_HOME, CUDA_PATH/);
});
