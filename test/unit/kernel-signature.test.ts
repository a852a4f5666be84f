import assert from 'node:assert/strict';
import { test } from 'node:test';

import { compileOptionsSchema, definesHeader, nvccArguments, nvrtcArguments, registerLimitedThreads } from '../../core/compile/compile-options';
import { findKernels, maskCode } from '../../core/compile/kernel-signature';

test('kernels, parameters and their element types are read from the source', () => {
  const src = `// __global__ void commented(int x)
#include <cuda_fp16.h>
template <typename T> __global__ void tmpl(T* x) {}
extern "C" __global__ void __launch_bounds__(256, 2) reduce(const float* __restrict__ in, float *out, unsigned int n) {
  const char* s = "__global__ void fake(int)";
}
__global__ void halves(__half* h, const __nv_bfloat16* b, size_t count, long long big, double scale, int64_t i64, unsigned char flags) {}
__device__ void helper(int) {}
__global__ void noargs() {}
__global__
void
split_lines(
  float* a,   // the input
  int n
);`;
  const kernels = findKernels(src);
  assert.deepEqual(
    kernels.map((k) => k.name),
    ['tmpl', 'reduce', 'halves', 'noargs', 'split_lines'],
  );
  const reduce = kernels[1]!;
  assert.equal(reduce.externC, true);
  assert.deepEqual(reduce.launchBounds, { maxThreads: 256, minBlocks: 2 });
  assert.equal(reduce.display, 'reduce(const float* __restrict__, float*, unsigned int)');
  assert.deepEqual(
    reduce.params.map((p) => [p.name, p.pointer, p.elementType]),
    [
      ['in', true, 'f32'],
      ['out', true, 'f32'],
      ['n', false, 'u32'],
    ],
  );
  assert.deepEqual([reduce.line, reduce.column], [4, 54]);
  assert.equal(kernels[0]!.template, true);
  assert.deepEqual(
    kernels[2]!.params.map((p) => p.elementType),
    ['f16', 'bf16', 'u64', 'i64', 'f64', 'i64', 'u8'],
  );
  assert.deepEqual(kernels[3]!.params, []);
  assert.deepEqual(
    kernels[4]!.params.map((p) => p.name),
    ['a', 'n'],
  );
  assert.equal(kernels[4]!.line, 12);
});

test('maskCode blanks comments and strings but keeps offsets', () => {
  const src = 'a /* x */ "s" // c\nb';
  const masked = maskCode(src);
  assert.equal(masked.length, src.length);
  assert.equal(masked.indexOf('b'), src.indexOf('\nb') + 1);
  assert.doesNotMatch(masked, /[xsc]/);
});

test('compile options become the same flags for NVRTC and nvcc, -lineinfo always on', () => {
  const o = compileOptionsSchema.parse({ arch: 'sm_90', debug: true, maxRegisters: 64, defines: ['N=4', 'DEBUG'], includePaths: ['/inc'], fastMath: true });
  assert.deepEqual(nvrtcArguments(o), [
    '--gpu-architecture=sm_90',
    '-lineinfo',
    '--ptxas-options=-v',
    '--std=c++17',
    '-G',
    '--maxrregcount=64',
    '--use_fast_math',
    '-DN=4',
    '-DDEBUG',
    '-I/inc',
  ]);
  assert.deepEqual(nvccArguments(o), [
    '-arch=sm_90',
    '-lineinfo',
    '-Xptxas',
    '-v',
    '-std=c++17',
    '-G',
    '-maxrregcount=64',
    '--use_fast_math',
    '-include',
    'workbench-defines.h',
    '-I/inc',
  ]);
  assert.equal(definesHeader(o.defines), '#define N 4\n#define DEBUG 1\n', 'nvcc gets its defines from a header: no shell reads them');
  for (const bad of [
    { arch: 'sm90' },
    { arch: 'sm_90', maxRegisters: 8 },
    { arch: 'sm_90', defines: ['A B'] },
    { arch: 'sm_90', defines: ['A=1\nB'] },
    { arch: 'sm_90', defines: ['A=1\\'] },
    { arch: 'sm_90', std: 'c++98' },
    { arch: 'sm_90', includePaths: ['/tmp/$(touch x)'] },
    { arch: 'sm_90', includePaths: ['/tmp/`id`'] },
    { arch: 'sm_90', includePaths: ['/my headers'] },
    { arch: 'sm_90', includePaths: ['/a;b'] },
    { arch: 'sm_90', extra: '-Xcompiler' },
  ]) {
    assert.equal(compileOptionsSchema.safeParse(bad).success, false, JSON.stringify(bad));
  }
});

test('register-limited threads per block match the driver (cuFuncGetAttribute on an H200)', () => {
  // Measured by the GPU suite's validator sweep: registers -> CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK.
  for (const [registers, threads] of [
    [8, 1024],
    [10, 1024],
    [40, 1024],
    [80, 768],
    [127, 512],
    [128, 512],
  ] as const) {
    assert.equal(registerLimitedThreads(registers), threads, `${registers} registers`);
  }
  assert.equal(registerLimitedThreads(64), 1024);
  assert.equal(registerLimitedThreads(255), 256);
});
