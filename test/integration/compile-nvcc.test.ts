import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { cubinKernelSymbols } from '../../core/cubin';
import { CompileService } from '../../main/compile/compile-service';
import { findNvcc } from '../../main/compile/nvcc';
import { forkLauncher } from '../../main/process/launcher';
import { ProcessExitError } from '../../main/process/supervised-process';
import { SAMPLES } from '../helpers/cli';

const compiler = new CompileService(forkLauncher);

/** Processes still compiling in one of the worker's temporary folders. */
const compilerProcesses = (): string[] =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
        return cmd.includes('gpu-workbench-nvcc-') ? [`${pid}: ${cmd.slice(0, 120)}`] : [];
      } catch {
        return [];
      }
    });
after(() => compiler.dispose());
const source = readFileSync(join(SAMPLES, 'vector-add/vector_add.cu'), 'utf8');
const request = (over: Record<string, unknown> = {}) => ({
  type: 'compile' as const,
  source,
  sourceName: 'vector_add.cu',
  arch: 'sm_90',
  options: [],
  kernels: ['vecAdd'],
  backend: 'nvcc' as const,
  ...over,
});

test('nvcc compiles for sm_90 with no GPU, and the kernel symbol is found in the cubin', async (t) => {
  if (!(await findNvcc()).found) return t.skip('nvcc is not installed here');
  const out = await compiler.compile(request());
  assert.ok(out.ok, out.log);
  assert.equal(out.backend, 'nvcc');
  assert.match(out.command, /-cubin -arch=sm_90 -lineinfo/);
  assert.deepEqual(cubinKernelSymbols(out.image!), ['_Z6vecAddPKfS0_Pfi']);
  assert.equal(out.symbols['vecAdd'], '_Z6vecAddPKfS0_Pfi');
});

test('a syntax error is a result with the compiler log, not an exception', async (t) => {
  if (!(await findNvcc()).found) return t.skip('nvcc is not installed here');
  const out = await compiler.compile(request({ source: source.replace('c[i] = a[i] + b[i];', 'c[i] = a[i] + ;') }));
  assert.equal(out.ok, false);
  assert.equal(out.image, null);
  assert.match(out.log, /vector_add\.cu\(4\): error: expected an expression/);
});

test('a compiler that hangs is killed at its time limit, and the next compile works', async (t) => {
  if (!(await findNvcc()).found) return t.skip('nvcc is not installed here');
  // 2^16 force-inlined calls: nvcc runs for minutes (measured: over 60 s) on this.
  const slow = `template <int N> __device__ __forceinline__ float f(float x) { return f<N - 1>(x * 1.0001f) + f<N - 1>(x + 1.0f); }
template <> __device__ __forceinline__ float f<0>(float x) { return x; }
__global__ void k(float* o) { o[threadIdx.x] = f<16>(o[threadIdx.x]); }`;
  await assert.rejects(
    compiler.compile(request({ source: slow, kernels: ['k'] }), 2000),
    (e: unknown) => e instanceof ProcessExitError && e.exit.kind === 'watchdog',
  );
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(compilerProcesses(), [], 'the killed worker left no compiler running');
  const out = await compiler.compile(request());
  assert.ok(out.ok);
});

test('malformed compile requests are refused by the worker', async () => {
  await assert.rejects(compiler.compile(request({ arch: 'banana' })), /must look like sm_90/);
});
