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
const gib = (n: number) => Math.round(n * GiB);
const mib = (n: number) => Math.round(n * MiB);

/** What PyTorch 2.11 and CuPy 14 printed on an H100 (CUDA 13, driver 580): the whole stderr, as a user would paste it. */
const recorded = new Map<string, string>(
  readFileSync(join(ROOT, 'test/fixtures/pasted/python-errors.h100.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as { scenario: string; stderr: string })
    .map((r) => [r.scenario, r.stderr]),
);
const explainRecorded = (scenario: string) => {
  const stderr = recorded.get(scenario);
  assert.ok(stderr, `the fixture has no ${scenario}`);
  return explainPaste(stderr);
};
const said = (e: ReturnType<typeof explainPaste>) => e.specifics.join(' ');

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
  assert.match(e.specifics.join(' '), /It asked for 19\.68 GiB on GPU 0, but only 11\.88 GiB was free of 23\.68 GiB/);
  assert.match(e.specifics.join(' '), /This process uses 11\.79 GiB in all/);
});

test('PyTorch OOM naming another process, and one where the cache is fragmented', () => {
  const other = explainPaste(
    `VllmWorker rank=1 pid=254) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.25 GiB. GPU 1 has a total capacity of 93.02 GiB of which 1.18 GiB is free. Process 2752205 has 91.82 GiB memory in use. Of the allocated memory 90.63 GiB is allocated by PyTorch, and 120.54 MiB is reserved by PyTorch but unallocated.`,
  );
  assert.equal(other.oom!.gpu, 1);
  assert.deepEqual(other.oom!.processes, [{ pid: 2752205, bytes: Math.round(91.82 * GiB) }]);
  assert.match(other.specifics.join(' '), /Process 2752205 has 91\.82 GiB in use/);
  const fragmented = explainPaste(
    `CUDA out of memory. Tried to allocate 320.00 MiB. GPU 0 has a total capacity of 23.56 GiB of which 287.00 MiB is free. Of the allocated memory 20.10 GiB is allocated by PyTorch, and 627.40 MiB is reserved by PyTorch but unallocated.`,
  );
  assert.equal(fragmented.oom!.cause, 'fragmentation');
  assert.match(
    fragmented.specifics.join(' '),
    /come to 914\.4 MiB, enough for the 320 MiB asked for: the memory is there, but fragmented.*expandable_segments:True/,
  );
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

test('recorded PyTorch OOM, request larger than the GPU: no setting helps, shrink the data', () => {
  const e = explainRecorded('torch-oom-too-large');
  const o = e.oom!;
  assert.deepEqual(
    [o.requestedBytes, o.totalBytes, o.freeBytes, o.thisProcessBytes, o.allocatedByFrameworkBytes, o.reservedUnallocatedBytes],
    [gib(200), gib(79.18), gib(78.66), mib(518), 0, 0],
  );
  assert.deepEqual([o.cause, o.hit, o.bigHolder, o.allowedBytes], ['request-larger-than-gpu', 'free-memory', null, null]);
  assert.match(said(e), /It asked for 200 GiB on GPU 0, but only 78\.66 GiB was free of 79\.18 GiB/);
  assert.match(
    said(e),
    /larger than the whole GPU \(2\.5× its 79\.18 GiB\): no allocator setting and no amount of freeing helps\. Shrink .*batch.*dtype.*chunks/,
  );
});

test('recorded PyTorch OOM under a memory fraction: the limit, not free memory, was hit, and the cache is fragmented', () => {
  const e = explainRecorded('torch-oom-fragmented');
  const o = e.oom!;
  assert.deepEqual(
    [o.requestedBytes, o.freeBytes, o.allowedBytes, o.allocatedByFrameworkBytes, o.reservedUnallocatedBytes, o.reservedByFrameworkBytes, o.thisProcessBytes],
    [mib(64), gib(77.08), gib(1.58), mib(492), gib(1.1), mib(492) + gib(1.1), gib(2.09)],
  );
  assert.deepEqual([o.hit, o.cause], ['allowed-limit', 'fragmentation']);
  assert.deepEqual(o.bigHolder, { who: 'this-process', pid: null, bytes: gib(2.09) });
  assert.match(said(e), /It asked for 64 MiB on GPU 0, and 77\.08 GiB of 79\.18 GiB was free: the GPU had room/);
  assert.match(
    said(e),
    /1\.64 GiB \(1\.58 GiB that PyTorch holds \+ 64 MiB asked for\) is over the 1\.58 GiB allowed \(set with torch\.cuda\.set_per_process_memory_fraction\): the limit, not the GPU's free memory/,
  );
  assert.match(
    said(e),
    /Within the 1\.58 GiB allowed, PyTorch's cache holds 1\.1 GiB reserved but unused, enough for the 64 MiB asked for: the memory is there, but fragmented/,
  );
  assert.match(said(e), /expandable_segments:True fixes this: .*never merged.*grows as needed/);
});

test('recorded PyTorch OOM with another process holding the GPU: it names the process, and nothing here can fix it', () => {
  const e = explainRecorded('torch-oom-other-process');
  const o = e.oom!;
  assert.deepEqual(o.processes, [{ pid: 516, bytes: gib(67.37) }]);
  assert.deepEqual([o.requestedBytes, o.freeBytes, o.thisProcessBytes], [gib(23.75), gib(11.29), mib(518)]);
  assert.equal(o.otherProcessesBytes, gib(79.18) - gib(11.29) - mib(518));
  assert.deepEqual([o.cause, o.bigHolder], ['other-process', { who: 'other-process', pid: 516, bytes: gib(67.37) }]);
  assert.match(said(e), /The big holder is another process: process 516 with 67\.37 GiB, while this process has only 518 MiB/);
  assert.match(said(e), /at most 11\.8 GiB \(79\.18 GiB total − 67\.38 GiB held by other processes\) could be had — less than the 23\.75 GiB asked for/);
  assert.match(said(e), /stop or shrink process 516/);
});

test("recorded PyTorch OOM from the process's own tensors: the big holder is this process", () => {
  const e = explainRecorded('torch-oom-own-tensors');
  const o = e.oom!;
  assert.deepEqual(
    [o.requestedBytes, o.freeBytes, o.thisProcessBytes, o.allocatedByFrameworkBytes, o.reservedUnallocatedBytes],
    [gib(15.84), gib(7.86), gib(71.31), gib(70.8), mib(3.03)],
  );
  assert.deepEqual([o.cause, o.bigHolder], ['this-process', { who: 'this-process', pid: null, bytes: gib(71.31) }]);
  assert.match(said(e), /The big holder is this process itself: 71\.31 GiB, 70\.8 GiB of it in tensors/);
  assert.match(said(e), /\(7\.86 GiB \+ 3\.03 MiB\) fall 7\.98 GiB short of the 15\.84 GiB asked for: this process must hold less\. Reduce the batch size/);
  assert.doesNotMatch(said(e), /expandable_segments/);
});

test("recorded CuPy OOMs: the request against the pool, CuPy's own retries, and what the message cannot tell", () => {
  const alone = explainRecorded('cupy-oom');
  assert.equal(alone.source, 'cupy');
  assert.equal(alone.error?.code, 2);
  assert.deepEqual(
    [alone.oom!.requestedBytes, alone.oom!.reservedByFrameworkBytes, alone.oom!.cause, alone.oom!.bigHolder],
    [gib(200), 0, 'request-alone', null],
  );
  assert.match(said(alone), /The pool held nothing, so this single 200 GiB request did not fit, on its own/);
  assert.match(said(alone), /neither the GPU's total nor its free memory.*cupy\.cuda\.runtime\.memGetInfo\(\).*nvidia-smi/);

  const pool = explainRecorded('cupy-oom-after-pool');
  const o = pool.oom!;
  assert.deepEqual([o.framework, o.requestedBytes, o.reservedByFrameworkBytes, o.cause], ['cupy', 42_508_746_752, 59_125_563_392, 'this-process']);
  assert.deepEqual(o.bigHolder, { who: 'this-process', pid: null, bytes: 59_125_563_392 });
  assert.match(said(pool), /It asked for 39\.59 GiB; CuPy's memory pool already held 55\.06 GiB/);
  assert.match(said(pool), /already returned its pool's cached free blocks \(free_all_blocks\(\)\), run gc\.collect\(\) and retried/);
  assert.match(said(pool), /the big holder is this process's own CuPy arrays/);
  assert.match(said(pool), /If the total is below 94\.65 GiB \(the request plus what the pool held\)/);
});

test('CuPy OOM against its pool limit: the limit is what it hit', () => {
  const e = explainPaste(
    'cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 2,147,483,648 bytes, limit set to: 2,500,000,000 bytes).',
  );
  assert.deepEqual([e.oom!.allowedBytes, e.oom!.hit, e.oom!.cause], [2_500_000_000, 'allowed-limit', 'memory-fraction']);
  assert.match(said(e), /3 GiB \(2 GiB that CuPy holds \+ 1 GiB asked for\) is over the 2\.33 GiB allowed/);
});

test('cudaMalloc out of memory from ctypes: no numbers, so what to measure; not sticky', () => {
  const recordedForm = recorded.get('ctypes-cudamalloc-oom')!;
  const e = explainPaste(recordedForm);
  assert.deepEqual([e.source, e.error?.code, e.error?.sticky], ['runtime-api', 2, false]);
  // A script that could not even import what it needed is a Python error, not a CUDA one.
  const missing = explainPaste(
    'Traceback (most recent call last):\n  File "<string>", line 3, in <module>\nModuleNotFoundError: No module named \'nvidia.cuda_runtime\'\n',
  );
  assert.equal(missing.recognized, false);
  assert.match(missing.specifics[0]!, /ends in ModuleNotFoundError: .* a Python error, not a CUDA one/);
  const typed = explainPaste(
    'Traceback (most recent call last):\n  File "alloc.py", line 9, in <module>\n    ptr = malloc(n)\nRuntimeError: cudaMalloc failed: cudaErrorMemoryAllocation (2): out of memory\n',
  );
  assert.deepEqual([typed.source, typed.error?.code, typed.error?.sticky, typed.oom, typed.fault], ['runtime-api', 2, false, null, null]);
  assert.match(said(typed), /cudaMalloc returned out of memory, and the message gives no sizes.*cudaMemGetInfo\(\).*nvidia-smi/);
  assert.match(said(typed), /not sticky.*torch\.cuda\.empty_cache\(\).*free_all_blocks\(\)/);
});

test('PyTorch OOM inside a container: the listed process holding the cache is this one', () => {
  const e = explainPaste(
    'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.25 GiB. GPU 1 has a total capacity of 93.02 GiB of which 1.18 GiB is free. Process 2752205 has 91.82 GiB memory in use. Of the allocated memory 90.63 GiB is allocated by PyTorch, and 120.54 MiB is reserved by PyTorch but unallocated.',
  );
  assert.deepEqual(e.oom!.bigHolder, { who: 'this-process', pid: 2752205, bytes: gib(91.82) });
  assert.equal(e.oom!.cause, 'fragmentation');
  assert.match(said(e), /most likely this process, listed under its host PID/);
  assert.match(said(e), /only just fit \(48\.86 MiB to spare\): Reduce the batch size/);
  const old = explainPaste(
    'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity; 75.21 GiB already allocated; 1.56 GiB free; 76.30 GiB reserved in total by PyTorch)',
  );
  assert.equal(old.oom!.cause, 'fragmentation');
  assert.match(said(old), /Free memory \(1\.56 GiB\) plus what the cache holds unused \(1\.09 GiB\) come to 2\.65 GiB, enough for the 2 GiB asked for/);
  const most = explainPaste('CUDA out of memory. Tried to allocate 19.68 GiB. GPU 0 has a total capacity of 23.68 GiB of which 11.88 GiB is free.');
  assert.equal(most.oom!.cause, 'request-most-of-gpu');
  assert.match(said(most), /The request alone is 83% of the whole GPU \(23\.68 GiB\): no allocator setting helps/);
});

const ASYNC = /The error is asynchronous: .* the stack trace points at a later call.* Re-run with CUDA_LAUNCH_BLOCKING=1/;
const STICKY = /sticky: this process's CUDA context is unusable from now on, and every later CUDA call fails the same way.*restart the process/;
const SANITIZER = /compute-sanitizer --tool memcheck python your_script\.py/;

test('recorded kernel faults from PyTorch and CuPy: asynchronous, sticky, and how to find the kernel', () => {
  for (const [scenario, source, code] of [
    ['torch-illegal-address', 'pytorch', 700],
    ['cupy-illegal-address', 'cupy', 700],
    ['torch-launch-failure', 'pytorch', 719],
    ['cupy-launch-failure', 'cupy', 719],
    ['torch-assert-embedding', 'pytorch', 710],
    ['torch-assert-cross-entropy', 'pytorch', 710],
    ['torch-assert-gather', 'pytorch', 710],
  ] as const) {
    const e = explainRecorded(scenario);
    assert.deepEqual([e.source, e.error?.code, e.fault?.framework], [source, code, source], scenario);
    assert.match(e.title, source === 'pytorch' ? /^PyTorch: / : /^CuPy: /, scenario);
    for (const advice of [ASYNC, STICKY, SANITIZER]) assert.match(said(e), advice, scenario);
    assert.equal(e.fault!.launchBlocking, source === 'pytorch' ? false : null, scenario);
  }
});

test('recorded faults: where they surfaced, and a fault reported by PyTorch that CuPy saw too', () => {
  const cupy = explainRecorded('cupy-illegal-address');
  assert.deepEqual(cupy.fault!.reportedAt, { file: '<string>', line: 6, function: '<module>', code: null });
  assert.equal(cupy.fault!.innermost!.function, 'cupy_backends.cuda.api.runtime.deviceSynchronize');
  assert.match(said(cupy), /here: cupy_backends\.cuda\.api\.runtime\.deviceSynchronize, called from File "<string>", line 6/);
  assert.match(said(cupy), /Module\.__dealloc__ are the same failure again/);

  const torch = explainRecorded('torch-illegal-address');
  assert.equal(torch.error?.name, 'CUDA_ERROR_ILLEGAL_ADDRESS');
  assert.deepEqual(torch.fault!.alsoReportedBy, ['cupy']);
  assert.match(
    said(torch),
    /CuPy reported the same error too, while unloading its kernels at exit.*share this process's CUDA context, so the faulting kernel may have come from a different library/,
  );
  assert.match(said(explainRecorded('torch-launch-failure')), /may have come from a different library/);
});

test('recorded device-side asserts: each assertion parsed and mapped to its likely cause', () => {
  const cases = [
    [
      'torch-assert-embedding',
      'Indexing.cu',
      1515,
      'indexSelectSmallIndex',
      'srcIndex < srcSelectDimSize',
      64,
      '0,0,0',
      'embedding / index_select',
      /token id ≥ num_embeddings/,
    ],
    [
      'torch-assert-cross-entropy',
      'Loss.cu',
      245,
      'nll_loss_forward_reduce_cuda_kernel_2d',
      't >= 0 && t < n_classes',
      1,
      '7,0,0',
      'cross_entropy / nll_loss',
      /class label .* ≥ the number of classes.*ignore_index/,
    ],
    [
      'torch-assert-gather',
      'ScatterGatherKernel.cu',
      163,
      'operator()',
      'idx_dim >= 0 && idx_dim < index_size && "scatter gather kernel index out of bounds"',
      1,
      '2,0,0',
      'gather / scatter',
      /index given to gather, scatter/,
    ],
  ] as const;
  for (const [scenario, file, line, kernel, condition, threads, firstThread, operation, cause] of cases) {
    const e = explainRecorded(scenario);
    assert.equal(e.fault!.asserts.length, 1, scenario);
    const a = e.fault!.asserts[0]!;
    assert.ok(a.file.endsWith(`/pytorch/aten/src/ATen/native/cuda/${file}`), scenario);
    assert.deepEqual(
      [a.line, a.kernel, a.condition, a.failedThreads, a.blocks, a.firstBlock, a.firstThread, a.operation],
      [line, kernel, condition, threads, 1, '0,0,0', firstThread, operation],
      scenario,
    );
    assert.match(a.likelyCause!, cause, scenario);
    assert.match(e.specifics[0]!, new RegExp(`^${file.replace('.', '\\.')}:${line}, kernel ${kernel.replace(/[()]/g, '\\$&')} \\(${operation}\\): `), scenario);
    assert.match(said(e), /TORCH_USE_CUDA_DSA helps only with a PyTorch built from source/, scenario);
  }
});

test('recorded assert under CUDA_LAUNCH_BLOCKING=1: the trace is trusted and names the operation', () => {
  const e = explainRecorded('torch-launch-blocking-assert');
  assert.equal(e.error?.code, 710);
  assert.equal(e.fault!.launchBlocking, true);
  assert.deepEqual([e.fault!.asserts[0]!.kernel, e.fault!.asserts[0]!.failedThreads], ['indexSelectSmallIndex', 64]);
  assert.equal(e.fault!.innermost!.function, 'embedding');
  assert.match(said(e), /CUDA_LAUNCH_BLOCKING=1 was in effect.*the traceback points at the operation that failed: return torch\.embedding\(weight, input/);
  assert.doesNotMatch(said(e), /asynchronous/);
  assert.match(said(e), STICKY);
});

test('older and partial forms: RuntimeError, misaligned address, an assert with no assertion lines, a 1.x signature', () => {
  const misaligned = explainPaste('RuntimeError: CUDA error: misaligned address\nCUDA kernel errors might be asynchronously reported at some other API call');
  assert.deepEqual([misaligned.source, misaligned.error?.code], ['pytorch', 716]);
  assert.match(said(misaligned), ASYNC);
  assert.match(said(misaligned), STICKY);
  const bare = explainPaste('RuntimeError: CUDA error: device-side assert triggered');
  assert.equal(bare.error?.code, 710);
  assert.match(said(bare), /No assertion lines are in the paste.*embedding indices ≥ num_embeddings.*class labels.*gather \/ scatter \/ index_select/);
  const v1 = explainPaste(
    '/pytorch/aten/src/ATen/native/cuda/Indexing.cu:699: void indexSelectLargeIndex(cuda::detail::TensorInfo<T, IndexType>, cuda::detail::TensorInfo<T, IndexType>, cuda::detail::TensorInfo<long, IndexType>, int, int, IndexType, IndexType, long) [with T = float, IndexType = unsigned int, DstDim = 2, SrcDim = 2, IdxDim = -2, IndexIsMajor = true]: block: [212,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.',
  );
  assert.deepEqual(
    [v1.source, v1.error?.code, v1.fault!.asserts[0]!.kernel, v1.fault!.asserts[0]!.firstBlock],
    ['pytorch', 710, 'indexSelectLargeIndex', '212,0,0'],
  );
});

test('every explained code exists in the catalog and says what to do', () => {
  for (const [code, e] of Object.entries(EXPLANATIONS)) {
    assert.ok(e.summary.length > 20 && e.causes.length > 0 && e.next.length > 0, code);
  }
});
