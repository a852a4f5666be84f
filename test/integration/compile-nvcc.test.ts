import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { cubinKernelSymbols } from '../../core/cubin';
import { CompileCache } from '../../main/compile/compile-cache';
import type { CompileRequestInput } from '../../core/compile/worker-protocol';
import { CompileService, CompileStoppedError, MAX_CONCURRENT_COMPILES } from '../../main/compile/compile-service';
import { findNvcc } from '../../main/compile/nvcc';
import { forkLauncher } from '../../main/process/launcher';
import { SAMPLES } from '../helpers/cli';

const cacheDir = mkdtempSync(join(tmpdir(), 'gpu-workbench-cache-test-'));
const compiler = new CompileService(forkLauncher, new CompileCache(cacheDir));
after(() => compiler.dispose());
const hasNvcc = (await_: Promise<{ found: boolean }>) => await_.then((r) => r.found);
const nvcc = hasNvcc(findNvcc());

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

const source = readFileSync(join(SAMPLES, 'vector-add/vector_add.cu'), 'utf8');
// 2^16 force-inlined calls that the optimiser cannot fold (the multiply keeps the terms distinct): nvcc
// runs for minutes on this (measured: over 60 s). Without the multiply it folds the sum and takes 0.2 s.
const SLOW = `template <int N> __device__ __forceinline__ float f(float x) { return f<N - 1>(x * 1.0001f) + f<N - 1>(x + 1.0f); }
template <> __device__ __forceinline__ float f<0>(float x) { return x; }
__global__ void k(float* o) { o[threadIdx.x] = f<16>(o[threadIdx.x]); }`;
let unique = 0;
/** A fresh source each call (a comment differs), so the cache never answers unless a test wants it to. */
const request = (over: Partial<CompileRequestInput> = {}): CompileRequestInput => ({
  source: `${over.source ?? source}\n// ${process.pid}-${++unique}\n`,
  sourceName: 'vector_add.cu',
  options: { arch: 'sm_90' },
  backend: 'nvcc',
  ...Object.fromEntries(Object.entries(over).filter(([k]) => k !== 'source')),
});

test('nvcc compiles for sm_90 with no GPU: cubin, PTX, kernel facts from ptxas', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const out = await compiler.compile(request());
  assert.ok(out.ok, out.log);
  assert.equal(out.backend, 'nvcc');
  assert.match(out.command, /-cubin -arch=sm_90 -lineinfo -Xptxas -v -std=c\+\+17/);
  assert.deepEqual(cubinKernelSymbols(out.image!), ['_Z6vecAddPKfS0_Pfi']);
  assert.match(out.ptx!, /\.entry _Z6vecAddPKfS0_Pfi/);
  const k = out.kernels[0]!;
  assert.equal(k.display, 'vecAdd(const float*, const float*, float*, int)');
  assert.equal(k.symbol, '_Z6vecAddPKfS0_Pfi');
  assert.ok(k.registers! > 0 && k.registers! < 64, String(k.registers));
  assert.equal(k.sharedBytes, 0);
  assert.equal(k.spillStoreBytes, 0);
  assert.equal(k.maxThreadsSource, 'registers');
  assert.deepEqual(out.diagnostics, []);
});

test('a syntax error is a result with diagnostics on the right line and column', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const broken = source.replace('c[i] = a[i] + b[i];', 'c[i] = a[i] + ;');
  const out = await compiler.compile(request({ source: broken }));
  assert.equal(out.ok, false);
  assert.equal(out.image, null);
  const error = out.diagnostics.find((d) => d.severity === 'error')!;
  const line = broken.split('\n')[error.line - 1]!;
  assert.equal(error.line, 4);
  assert.equal(error.message, 'expected an expression');
  assert.equal(line[error.column - 1], ';', `column ${error.column} of "${line}"`);
  assert.match(out.log, /vector_add\.cu\(4\): error/);
});

test('too much static shared memory is one error, on the kernel’s line, with the limits and ptxas’ own words', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const out = await compiler.compile(
    request({
      source:
        '__global__ void k(float* a) { __shared__ float s[100000]; s[threadIdx.x] = a[threadIdx.x]; __syncthreads(); a[threadIdx.x] = s[255 - threadIdx.x]; }',
    }),
  );
  assert.equal(out.ok, false);
  // Said once, the same way as for NVRTC (whose ptxas says nothing): ptxas' refusal, in hex and without a line, is quoted.
  assert.deepEqual(
    out.diagnostics.filter((x) => x.severity === 'error').map((x) => [x.code, x.line]),
    [['static-shared', 1]],
  );
  const d = out.diagnostics.find((x) => x.code === 'static-shared')!;
  assert.match(
    d.message,
    /^k uses 390\.63 KiB \(400,000 bytes\) of static shared memory, so it can never launch: static __shared__ arrays are limited to 48 KiB per block/,
  );
  assert.match(d.message, /\(ptxas: Entry function '_Z1kPf' uses too much shared data \(0x61a80 bytes, 0xc000 max\)\)$/);
});

test('the cache answers an unchanged source without the compiler, and a changed option misses', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const r = request();
  const first = await compiler.compile(r);
  assert.equal(first.cached, false);
  const second = await compiler.compile(r);
  assert.equal(second.cached, true);
  assert.equal(second.key, first.key);
  assert.deepEqual(second.image, first.image);
  assert.ok(second.ms < 50, `cache hit took ${second.ms} ms`);
  const third = await compiler.compile({ ...r, options: { arch: 'sm_90', maxRegisters: 32 } });
  assert.equal(third.cached, false);
  assert.match(third.command, /-maxrregcount=32/);
  assert.ok(!readdirSync(cacheDir).some((f) => f.startsWith('.')), 'no half-written entries');
});

test('empty, binary and huge sources and a missing header each get a clear result', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const empty = await compiler.compile(request({ source: '' }));
  assert.equal(empty.ok, true);
  assert.deepEqual(empty.kernels, []);
  const missing = await compiler.compile(request({ source: '#include "no_such_header.cuh"\n' + source }));
  assert.equal(missing.ok, false);
  const d = missing.diagnostics.find((x) => x.severity === 'error')!;
  assert.equal(d.line, 1);
  assert.match(d.message, /no_such_header\.cuh/);
  const garbage = await compiler.compile(request({ source: String.fromCharCode(...Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)) }));
  assert.equal(garbage.ok, false);
  assert.ok(garbage.diagnostics.length > 0, garbage.log);
  await assert.rejects(compiler.compile(request({ source: 'x'.repeat(17 * 1024 * 1024) })), /16777216|too_big|Too big|at most/i);
});

test('a compiler that hangs is stopped at its time limit with an explanation; the next compile works', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  await assert.rejects(compiler.compile(request({ source: SLOW }), 2000), (e: unknown) => e instanceof CompileStoppedError && /more than 2 s/.test(e.reason));
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(compilerProcesses(), [], 'the killed worker left no compiler running');
  assert.ok((await compiler.compile(request())).ok);
});

test('a compile can be cancelled; the user is told, and the next compile works', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const pending = compiler.compile(request({ source: SLOW }), 60_000);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(compiler.cancel(), true);
  await assert.rejects(pending, (e: unknown) => e instanceof CompileStoppedError && /cancelled/.test(e.reason));
  assert.ok((await compiler.compile(request())).ok);
});

test('a compiler crash is reported as one, the worker is replaced, and the next compile works', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const pending = compiler.compile(request({ source: SLOW }), 60_000);
  let pid: number | undefined;
  for (let i = 0; i < 100 && !pid; i++) {
    await new Promise((r) => setTimeout(r, 50));
    pid = compiler.workerPid;
  }
  await new Promise((r) => setTimeout(r, 300));
  process.kill(pid!, 'SIGSEGV');
  await assert.rejects(pending, (e: unknown) => e instanceof CompileStoppedError && /crashed .*segmentation fault.*replaced/s.test(e.reason));
  assert.ok((await compiler.compile(request())).ok);
  assert.notEqual(compiler.workerPid, pid);
});

test('a 10 MB source compiles (mostly comments: sizes up to the 16 MiB limit are accepted)', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const big = `${'// padding padding padding padding padding padding padding padding padding padding\n'.repeat(125_000)}${source}`;
  assert.ok(big.length > 10_000_000);
  const out = await compiler.compile(request({ source: big }));
  assert.ok(out.ok, out.log.slice(0, 500));
  assert.equal(out.kernels[0]?.line, 125_002);
});

test('malformed compile requests are refused by the worker', async () => {
  await assert.rejects(compiler.compile(request({ options: { arch: 'banana' } })), /must look like sm_90/);
});

/** cicc processes under one of the compile workers' folders: one per compiler running. */
const compilersRunning = () => compilerProcesses().filter((p) => / \/[^ ]*cicc /.test(p) || /nvvm\/bin\/cicc/.test(p)).length;

test('a newer compile of the same document supersedes a hung one: the edit gets its result at once, the old is stopped and says why', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const hung = compiler.compile(request({ source: SLOW }), 120_000, 'doc-a').then(
    () => null,
    (error: unknown) => error,
  );
  await new Promise((r) => setTimeout(r, 700));
  const started = performance.now();
  const next = await compiler.compile(request(), 120_000, 'doc-a');
  const ms = performance.now() - started;
  assert.ok(next.ok, next.log);
  const stopped = await hung;
  assert.ok(stopped instanceof CompileStoppedError && /newer edit of this document/.test(stopped.reason), String(stopped));
  console.log(`# the edit after a hung compile answered in ${ms.toFixed(0)} ms`);
  assert.ok(ms < 10_000, `${ms} ms`);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(compilerProcesses(), [], 'the superseded compiler was killed');
});

test('a burst of 30 edits of one document runs a bounded number of compilers, and only the last compiles to the end', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  let most = 0;
  const sampler = setInterval(() => (most = Math.max(most, compilersRunning())), 20);
  const edits: Promise<PromiseSettledResult<unknown>>[] = [];
  for (let i = 0; i < 30; i++) {
    // Settled as each is made: the superseded ones reject while the later edits are still being typed.
    edits.push(
      compiler.compile(request({ source: i < 29 ? SLOW : source }), 120_000, 'doc-burst').then(
        (value) => ({ status: 'fulfilled' as const, value }),
        (reason: unknown) => ({ status: 'rejected' as const, reason }),
      ),
    );
    await new Promise((r) => setTimeout(r, 15));
  }
  const outcomes = await Promise.all(edits);
  clearInterval(sampler);
  const superseded = outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof CompileStoppedError && /newer edit/.test(o.reason.reason)).length;
  console.log(`# 30 edits: ${superseded} superseded, at most ${most} compilers at once (bound ${MAX_CONCURRENT_COMPILES})`);
  assert.equal(superseded, 29);
  assert.equal(outcomes[29]!.status, 'fulfilled');
  assert.ok(most <= MAX_CONCURRENT_COMPILES, `${most} compilers at once`);
});

test('a hung compile of one document does not hold up another document, and a spare worker stands ready', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const hung = compiler.compile(request({ source: SLOW }), 120_000, 'doc-slow');
  hung.catch(() => undefined);
  await new Promise((r) => setTimeout(r, 500));
  const started = performance.now();
  const other = await compiler.compile(request(), 120_000, 'doc-other');
  assert.ok(other.ok);
  assert.ok(performance.now() - started < 10_000);
  assert.ok(compiler.workers.idle >= 1, `a warm spare: ${JSON.stringify(compiler.workers)}`);
  compiler.cancel();
  await assert.rejects(hung, CompileStoppedError);
});

test('compiles of many documents at once: never more than the bound compile, the rest wait their turn and finish', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  let most = 0;
  const sampler = setInterval(() => (most = Math.max(most, compiler.workers.busy)), 10);
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => compiler.compile(request(), 120_000, `doc-many-${i}`)));
  clearInterval(sampler);
  assert.ok(results.every((r) => r.ok));
  console.log(`# 6 documents at once: at most ${most} compiling (bound ${MAX_CONCURRENT_COMPILES}), ${JSON.stringify(compiler.workers)} after`);
  assert.ok(most <= MAX_CONCURRENT_COMPILES, `${most} compiling at once`);
  assert.ok(compiler.workers.busy + compiler.workers.idle <= MAX_CONCURRENT_COMPILES + 1, JSON.stringify(compiler.workers));
});

test('a compile waiting in line is served as soon as a running one is superseded and its worker killed', async (t) => {
  if (!(await nvcc)) return t.skip('nvcc is not installed here');
  const hung = Array.from({ length: MAX_CONCURRENT_COMPILES }, (_, i) =>
    compiler.compile(request({ source: SLOW }), 120_000, `doc-hung-${i}`).then(
      () => null,
      (e: unknown) => e,
    ),
  );
  await new Promise((r) => setTimeout(r, 500));
  const waiting = compiler.compile(request(), 120_000, 'doc-waiting');
  await new Promise((r) => setTimeout(r, 200));
  // A new edit of the first hung document: its old compile's worker is killed, which frees a place.
  const edit = compiler.compile(request(), 120_000, 'doc-hung-0');
  const started = performance.now();
  assert.ok((await waiting).ok);
  assert.ok((await edit).ok);
  assert.ok(performance.now() - started < 20_000);
  compiler.cancel();
  const stopped = await Promise.all(hung);
  assert.ok(stopped.every((e) => e instanceof CompileStoppedError));
});
