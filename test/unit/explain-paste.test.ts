import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { EXPLANATIONS } from '../../core/cuda/explanations';
import { explainPaste } from '../../core/explain/explain-paste';
import { ROOT } from '../helpers/cli';

const fixture = (name: string) => readFileSync(join(ROOT, 'test/fixtures/sanitizer', name), 'utf8');
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

test('PyTorch 2.x out of memory: every number broken down, and what it means', () => {
  const paste = `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 19.68 GiB. GPU 0 has a total capacity of 23.68 GiB of which 11.88 GiB is free. Including non-PyTorch memory, this process has 11.79 GiB memory in use. Of the allocated memory 11.44 GiB is allocated by PyTorch, and 43.59 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)`;
  const e = explainPaste(paste);
  assert.equal(e.source, 'pytorch-oom');
  assert.equal(e.error?.code, 2);
  const o = e.oom!;
  assert.equal(o.gpu, 0);
  assert.equal(o.requestedBytes, Math.round(19.68 * GiB));
  assert.equal(o.totalBytes, Math.round(23.68 * GiB));
  assert.equal(o.freeBytes, Math.round(11.88 * GiB));
  assert.equal(o.allocatedByFrameworkBytes, Math.round(11.44 * GiB));
  assert.equal(o.reservedUnallocatedBytes, Math.round(43.59 * MiB));
  assert.equal(o.thisProcessBytes, Math.round(11.79 * GiB));
  assert.match(e.specifics.join(' '), /It asked for 19\.7 GiB on GPU 0, but only 11\.9 GiB was free of 23\.7 GiB/);
  assert.match(e.specifics.join(' '), /This process uses 11\.8 GiB in all/);
});

test('PyTorch OOM naming another process, and one where the cache is fragmented', () => {
  const other = explainPaste(
    `VllmWorker rank=1 pid=254) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.25 GiB. GPU 1 has a total capacity of 93.02 GiB of which 1.18 GiB is free. Process 2752205 has 91.82 GiB memory in use. Of the allocated memory 90.63 GiB is allocated by PyTorch, and 120.54 MiB is reserved by PyTorch but unallocated.`,
  );
  assert.equal(other.oom!.gpu, 1);
  assert.deepEqual(other.oom!.processes, [{ pid: 2752205, bytes: Math.round(91.82 * GiB) }]);
  assert.match(other.specifics.join(' '), /Process 2752205 has 91\.8 GiB in use/);
  const fragmented = explainPaste(
    `CUDA out of memory. Tried to allocate 320.00 MiB. GPU 0 has a total capacity of 23.56 GiB of which 287.00 MiB is free. Of the allocated memory 20.10 GiB is allocated by PyTorch, and 627.40 MiB is reserved by PyTorch but unallocated.`,
  );
  assert.match(fragmented.specifics.join(' '), /more than the request: the free space is there but fragmented.*expandable_segments:True/);
});

test('older PyTorch formats: 1.x, and 2.1 with its "capacty" typo and 0 bytes', () => {
  const old = explainPaste(
    'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity; 75.21 GiB already allocated; 1.56 GiB free; 76.30 GiB reserved in total by PyTorch)',
  );
  assert.equal(old.oom!.totalBytes, Math.round(79.15 * GiB));
  assert.equal(old.oom!.reservedByFrameworkBytes, Math.round(76.3 * GiB));
  assert.equal(old.oom!.reservedUnallocatedBytes, Math.round(76.3 * GiB) - Math.round(75.21 * GiB));
  const typo = explainPaste(
    'OutOfMemoryError: CUDA out of memory. Tried to allocate 5.96 GiB. GPU 0 has a total capacty of 23.69 GiB of which 5.25 GiB is free. Process 2006998 has 256.00 MiB memory in use. Including non-PyTorch memory, this process has 18.17 GiB memory in use. Of the allocated memory 17.88 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.',
  );
  assert.equal(typo.oom!.totalBytes, Math.round(23.69 * GiB));
  assert.equal(typo.oom!.reservedUnallocatedBytes, 0);
  const huge = explainPaste('CUDA out of memory. Tried to allocate 130206.04 GiB. GPU 0 has a total capacity of 23.56 GiB of which 16.57 GiB is free.');
  assert.match(huge.specifics.join(' '), /larger than the whole GPU/);
});

test('compute-sanitizer memcheck (recorded on an H200): the line, the thread, the address and how far out', () => {
  const e = explainPaste(fixture('memcheck-oob.txt'));
  assert.equal(e.source, 'compute-sanitizer');
  assert.deepEqual([e.error?.code, e.error?.runtimeName], [719, 'cudaErrorLaunchFailure']);
  const [f] = e.sanitizer;
  assert.deepEqual(
    [f!.tool, f!.accessSize, f!.kernel, f!.file, f!.line, f!.thread, f!.block],
    ['memcheck', 4, 'offByOne', 'sanitizer_cases.cu', 11, '232,0,0', '3,0,0'],
  );
  assert.match(f!.detail!, /is 1 bytes after the nearest allocation at 0x[0-9a-f]+ of size 4,000 bytes/);
  assert.match(e.specifics[0]!, /Invalid __global__ write of size 4 bytes in offByOne at sanitizer_cases\.cu:11 by thread \(232,0,0\) of block \(3,0,0\)/);
  const nul = explainPaste(fixture('memcheck-null.txt'));
  assert.equal(nul.sanitizer[0]!.address, '0x0');
  assert.equal(nul.sanitizer.length, 32);
});

test('compute-sanitizer racecheck and initcheck (recorded on an H200)', () => {
  const race = explainPaste(fixture('racecheck.txt'));
  assert.equal(race.sanitizer[0]!.tool, 'racecheck');
  assert.equal(race.sanitizer[0]!.kernel, 'reduceWithoutSync');
  assert.equal(race.sanitizer[0]!.line, 18);
  assert.equal(race.sanitizer[0]!.detail, '[512 hazards]');
  const init = explainPaste(fixture('initcheck.txt'));
  assert.equal(init.sanitizer[0]!.tool, 'initcheck');
  assert.equal(init.sanitizer[0]!.line, 22);
});

test('driver and runtime names, the libraries own messages, CuPy', () => {
  assert.equal(explainPaste('RuntimeError: CUDA error: an illegal memory access was encountered').error?.code, 700);
  assert.equal(explainPaste('CUDA error: too many resources requested for launch').error?.code, 701);
  assert.equal(explainPaste('cudaErrorInvalidConfiguration').error?.name, 'cudaErrorInvalidConfiguration');
  assert.equal(explainPaste('got invalid configuration argument from <<<>>>').error?.code, 9);
  assert.equal(explainPaste('CUDA driver version is insufficient for CUDA runtime version').error?.code, 35);
  assert.equal(explainPaste('cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE').error?.code, 1);
  const cupy = explainPaste('cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered');
  assert.equal(cupy.source, 'cupy');
  assert.equal(cupy.error?.code, 700);
  assert.ok(cupy.explanation!.causes.some((c) => /bounds check/.test(c)));
  const cupyOom = explainPaste('cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 2,147,483,648 bytes).');
  assert.match(cupyOom.specifics[0]!, /It asked for 1 GiB; CuPy's memory pool already held 2 GiB/);
  const unknown = explainPaste('segmentation fault (core dumped)');
  assert.equal(unknown.recognized, false);
  assert.match(unknown.specifics[0]!, /does not look like a CUDA error/);
});

test('every explained code exists in the catalog and says what to do', () => {
  for (const [code, e] of Object.entries(EXPLANATIONS)) {
    assert.ok(e.summary.length > 20 && e.causes.length > 0 && e.next.length > 0, code);
  }
});
