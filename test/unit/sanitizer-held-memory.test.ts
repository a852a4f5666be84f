import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import type { HostFrame, SanitizerFinding, SanitizerTool } from '../../core/sanitizer/findings';
import { groupFindings } from '../../core/sanitizer/group';
import {
  describeHeld,
  heldBy,
  HOLDER_RULES,
  isCupyMemoryFrame,
  isCupyPoolFrame,
  isPyTorchAllocatorFrame,
  isWorkbenchRunnerFrame,
} from '../../core/sanitizer/held-memory';
import { parseSanitizerTextFindings } from '../../core/sanitizer/parse-text-findings';
import { parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { ROOT } from '../helpers/cli';

// Recorded on an H200 (CUDA 13.0, PyTorch 2.11, CuPy 14): which leaks an allocator held, and which are the user's.
const H200 = join(ROOT, 'test/fixtures/programs/h200');
const fromXml = (name: string, tool: SanitizerTool = 'memcheck') => {
  const r = parseSanitizerXml(tool, readFileSync(join(H200, name), 'utf8'));
  assert.deepEqual(r.problems, []);
  return r.findings;
};
const fromText = (name: string) => parseSanitizerTextFindings('memcheck', readFileSync(join(H200, name), 'utf8')).findings;
const leaks = (findings: SanitizerFinding[]) => findings.filter((f) => f.kind === 'leak');
const frame = (f: Partial<HostFrame>): HostFrame => ({ func: null, module: null, pc: null, file: null, line: null, ...f });

test('each rule alone: the frame that tells its holder, as the XML and as the text name it', () => {
  assert.ok(isWorkbenchRunnerFrame(frame({ func: 'MemAlloc', module: '/opt/gpu-workbench/native/build/Release/gpu_workbench_native.node' })));
  assert.ok(!isWorkbenchRunnerFrame(frame({ module: '/usr/lib/libcuda.so.1' })));

  assert.ok(isPyTorchAllocatorFrame(frame({ func: 'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc', module: 'libc10_cuda.so' })));
  assert.ok(isPyTorchAllocatorFrame(frame({ module: '/venv/lib/python3.12/site-packages/torch/lib/libc10_cuda.so' })));
  assert.ok(!isPyTorchAllocatorFrame(frame({ func: 'at::native::empty_cuda', module: 'libtorch_cuda.so' })));

  const pool = frame({ func: '__pyx_f_4cupy_4cuda_6memory_22SingleDeviceMemoryPool__malloc', module: 'memory.cpython-312-x86_64-linux-gnu.so' });
  const memory = frame({ func: '__pyx_pw_4cupy_4cuda_6memory_6Memory_1__init__', module: 'memory.cpython-312-x86_64-linux-gnu.so' });
  const runtimeMalloc = frame({ func: '__pyx_f_13cupy_backends_4cuda_3api_7runtime_malloc', module: 'runtime.cpython-312-x86_64-linux-gnu.so' });
  assert.deepEqual([isCupyPoolFrame(pool), isCupyMemoryFrame(pool)], [true, true]);
  assert.deepEqual([isCupyPoolFrame(memory), isCupyMemoryFrame(memory)], [false, true]);
  assert.deepEqual([isCupyPoolFrame(runtimeMalloc), isCupyMemoryFrame(runtimeMalloc)], [false, false], 'runtime.malloc alone is any caller’s cudaMalloc');
  assert.ok(isCupyMemoryFrame(frame({ module: '/venv/lib/python3.12/site-packages/cupy/cuda/memory.cpython-312-x86_64-linux-gnu.so' })));
  assert.deepEqual(
    HOLDER_RULES.map((r) => r.holder),
    ['workbench-runner', 'pytorch-caching-allocator', 'cupy-memory-pool', 'cupy-arrays'],
  );
});

test("PyTorch: the two 60 GB inputs join.py held when cat ran out of memory are PyTorch's caching allocator's, not leaks (the text, no XML)", () => {
  const found = fromText('pytorch-oom-too-large.memcheck.txt');
  assert.deepEqual(
    leaks(found).map((f) => [f.leak?.bytes, heldBy(f)]),
    [
      [60_045_656_064, 'pytorch-caching-allocator'],
      [60_045_656_064, 'pytorch-caching-allocator'],
    ],
  );
  assert.ok(
    found.filter((f) => f.kind !== 'leak').every((f) => heldBy(f) === null),
    'the out-of-memory errors are findings whatever their stack',
  );
});

test("CuPy: the pool's blocks (reduce.py, pool on) and live arrays' memory (oob.py, pool off) are CuPy's, from the XML and from the text", () => {
  assert.deepEqual(leaks(fromXml('cupy-race.memcheck.xml')).map(heldBy), ['cupy-memory-pool', 'cupy-memory-pool', 'cupy-memory-pool', 'cupy-memory-pool']);
  assert.deepEqual(leaks(fromText('cupy-race.memcheck.txt')).map(heldBy), ['cupy-memory-pool', 'cupy-memory-pool', 'cupy-memory-pool', 'cupy-memory-pool']);
  assert.deepEqual(leaks(fromXml('cupy-out-of-bounds.memcheck.xml')).map(heldBy), ['cupy-arrays', 'cupy-arrays']);
  assert.deepEqual(leaks(fromText('cupy-out-of-bounds.memcheck.txt')).map(heldBy), ['cupy-arrays', 'cupy-arrays']);
});

test("a ctypes cudaMalloc straight from the user's .py stays a leak; so does cupy.cuda.runtime.malloc called straight from it", () => {
  const [ctypes] = leaks(fromXml('ctypes-leak.memcheck.xml'));
  assert.equal(heldBy(ctypes!), null);
  assert.equal(heldBy(leaks(fromText('ctypes-leak.memcheck.txt'))[0]!), null);
  // The recorded pool allocation's stack without cupy.cuda.memory: runtime.malloc called by the user's line.
  const pooled = leaks(fromXml('cupy-race.memcheck.xml'))[0]!;
  const direct = {
    ...pooled,
    hostStack: pooled.hostStack.filter((f) => !isCupyMemoryFrame(f) && !/cupy\/_core|cupy\/_creation/.test(f.module ?? f.file ?? '')),
  };
  assert.ok(direct.hostStack.some((f) => f.func?.includes('runtime_malloc')));
  assert.equal(heldBy(direct), null);
});

test("the workbench's runner: its buffers left when a sticky error killed the context are the workbench's; the rule comes first", () => {
  const text = readFileSync(join(ROOT, 'test/fixtures/sanitizer/h100/gallery-null-pointer-broken.txt'), 'utf8');
  const runnerFrames = [...text.matchAll(/^=+ +Host Frame: (.*?) \[(0x[0-9a-f]+)\] in (\S+)$/gm)].map((m) => frame({ func: m[1]!, pc: m[2]!, module: m[3]! }));
  assert.ok(runnerFrames.some(isWorkbenchRunnerFrame));
  const [ctypes] = leaks(fromXml('ctypes-leak.memcheck.xml'));
  assert.equal(heldBy({ ...ctypes!, hostStack: runnerFrames }), 'workbench-runner');
  // A stack through both the runner and PyTorch (a plan cannot reach PyTorch, but the order is the table's): the first rule wins.
  const torch = frame({ func: 'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc', module: 'libc10_cuda.so' });
  assert.equal(heldBy({ ...ctypes!, hostStack: [torch, ...runnerFrames] }), 'workbench-runner');
  assert.equal(heldBy({ ...ctypes!, kind: 'api-error', hostStack: runnerFrames }), null, 'only leaks are held memory');
});

test('the sentence: who held how much, in how many blocks, asked for at which of the user’s lines', () => {
  const found = leaks(fromText('pytorch-oom-too-large.memcheck.txt'));
  const groups = groupFindings(found);
  assert.equal(
    describeHeld({ holder: 'pytorch-caching-allocator', bytes: 120_091_312_128, blocks: 2, groups }),
    "Held by PyTorch's caching allocator at exit — not a leak of yours: 120,091,312,128 bytes (111.84 GiB) in 2 blocks, asked for at join.py:13, join.py:12.",
  );
  assert.equal(
    describeHeld({ holder: 'cupy-memory-pool', bytes: 512, blocks: 1, groups: [] }),
    "Held by CuPy's memory pool at exit — not a leak of yours: 512 bytes in 1 block.",
  );
});
