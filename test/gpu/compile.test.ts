import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { CompileCache } from '../../main/compile/compile-cache';
import { CompileService } from '../../main/compile/compile-service';
import { forkLauncher } from '../../main/process/launcher';
import { RunnerPool } from '../../main/runner/runner-pool';
import { smArch } from '../../core/devices';
import { listDevices } from '../../main/services/device-service';
import { ROOT, SAMPLES } from '../helpers/cli';

const compiler = new CompileService(forkLauncher, new CompileCache(mkdtempSync(join(tmpdir(), 'gpu-workbench-cache-'))));
const pool = new RunnerPool({ launcher: forkLauncher, warmSpare: false });
after(async () => {
  await compiler.dispose();
  await pool.dispose();
});
const arch = async () => {
  const d = await listDevices();
  assert.ok(d.ok);
  return smArch(d.devices[0]!);
};
const samples = readdirSync(SAMPLES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    readdirSync(join(SAMPLES, d.name))
      .filter((f) => f.endsWith('.cu'))
      .map((f) => `${d.name}/${f}`),
  );

test('NVRTC compiles every sample for the device, and ptxas resources equal what the driver reports', async () => {
  const target = await arch();
  for (const sample of samples) {
    const source = readFileSync(join(SAMPLES, sample), 'utf8');
    const result = await compiler.compile({ source, sourceName: sample.split('/')[1]!, options: { arch: target }, backend: 'nvrtc' });
    assert.equal(result.backend, 'nvrtc');
    if (sample.startsWith('syntax-error/')) {
      assert.equal(result.ok, false);
      const e = result.diagnostics.find((d) => d.severity === 'error')!;
      assert.deepEqual([e.line, e.column, e.message], [4, 3, 'expected a ";"']);
      continue;
    }
    if (sample === 'static-shared-too-large/broken.cu') {
      // A gallery sample that must not compile: NVRTC accepts it, the workbench's own diagnostic refuses it.
      assert.equal(result.ok, false);
      assert.ok(result.diagnostics.some((d) => d.code === 'static-shared' && d.message.includes('400,000 bytes')));
      continue;
    }
    assert.ok(result.ok, `${sample}: ${result.log}`);
    const compiled = result.kernels.filter((k) => k.symbol && k.registers !== null);
    assert.ok(compiled.length > 0, sample);
    const driver = await pool.inspect(
      0,
      compiled.map((k) => ({ kernel: k.name, symbol: k.symbol!, image: result.image! })),
    );
    for (const k of compiled) {
      const a = driver.find((d) => d.kernel === k.name)!.attributes;
      console.log(
        `# ${sample} ${k.name}: ptxas ${k.registers} regs, ${k.sharedBytes} B shared, ${k.localBytes} B local; driver ${a.numRegs} regs, ${a.sharedSizeBytes} B, ${a.localSizeBytes} B, max ${a.maxThreadsPerBlock} threads (ours ${k.maxThreadsPerBlock})`,
      );
      assert.equal(k.registers, a.numRegs, `${sample} ${k.name} registers`);
      assert.equal(k.sharedBytes, a.sharedSizeBytes, `${sample} ${k.name} shared`);
      assert.equal(k.localBytes, a.localSizeBytes, `${sample} ${k.name} local`);
      assert.equal(k.maxThreadsPerBlock, a.maxThreadsPerBlock, `${sample} ${k.name} max threads`);
    }
  }
});

test('NVRTC logs parse like nvcc logs: same lines and columns (real logs recorded as fixtures)', async () => {
  const target = await arch();
  const logs = join(ROOT, 'test/fixtures/logs');
  const expected: Record<string, [number, number] | 'ptxas'> = { 'syntax.cu': [4, 3], 'multi.cu': [1, 0], 'bigshared.cu': 'ptxas' };
  for (const name of ['syntax.cu', 'multi.cu', 'warn.cu', 'bigshared.cu']) {
    const result = await compiler.compile({ source: readFileSync(join(logs, name), 'utf8'), sourceName: name, options: { arch: target }, backend: 'nvrtc' });
    if (process.env['GPU_WORKBENCH_FIXTURES_OUT'])
      writeFileSync(join(process.env['GPU_WORKBENCH_FIXTURES_OUT'], `nvrtc-${name.replace('.cu', '')}.log`), result.log);
    const e = result.diagnostics.find((d) => d.severity === 'error');
    const want = expected[name];
    console.log(`# ${name}: ${JSON.stringify(result.diagnostics.map((d) => [d.line, d.column, d.severity, d.message]))}`);
    if (!want) assert.equal(e, undefined);
    else if (want === 'ptxas') assert.match(e?.message ?? '', /static shared memory|too much shared data/);
    else {
      assert.equal(e?.line, want[0]);
      if (want[1]) assert.equal(e?.column, want[1]);
    }
  }
});

test('a cache hit skips the compiler', async () => {
  const source = readFileSync(join(SAMPLES, 'vector-add/vector_add.cu'), 'utf8') + `\n// ${Date.now()}\n`;
  const request = { source, sourceName: 'vector_add.cu', options: { arch: await arch() }, backend: 'nvrtc' as const };
  const miss = await compiler.compile(request);
  const hit = await compiler.compile(request);
  assert.equal(miss.cached, false);
  assert.equal(hit.cached, true);
  assert.deepEqual(Buffer.from(hit.image!), Buffer.from(miss.image!));
  console.log(`# compile ${miss.ms.toFixed(1)} ms, cache hit ${hit.ms.toFixed(2)} ms`);
  assert.ok(hit.ms < miss.ms / 4);
});

test('compile --json through the CLI reports every kernel with its resources (NVRTC)', async () => {
  const { runCli, parseJson } = await import('../helpers/cli');
  const r = await runCli(['compile', join(ROOT, 'test/fixtures/logs/warn.cu'), '--json', '--no-cache']);
  if (process.env['GPU_WORKBENCH_FIXTURES_OUT']) writeFileSync(join(process.env['GPU_WORKBENCH_FIXTURES_OUT'], 'compile-warn.json'), r.stdout);
  const out = parseJson<{ ok: boolean; backend: string; kernels: { name: string; registers: number | null; symbol: string | null }[]; log: string }>(r);
  assert.equal(out.backend, 'nvrtc');
  assert.deepEqual(
    out.kernels.map((k) => [k.name, k.symbol, k.registers]),
    [
      ['k', '_Z1kPfi', 32],
      ['reduce', '_Z6reducePKfPfj', 10],
    ],
    out.log,
  );
});

test('a comment-only edit keeps its kernel facts, though NVRTC answers it from the driver’s compute cache without ptxas', async () => {
  const target = await arch();
  // A program no cache has seen: a kernel with a name of its own.
  const base = `${readFileSync(join(SAMPLES, 'vector-add/vector_add.cu'), 'utf8')}\n__global__ void unseen_${Date.now()}(int* p) { if (p) *p = 1; }\n`;
  const facts = (r: Awaited<ReturnType<CompileService['compile']>>) => r.kernels.filter((k) => k.name === 'vecAdd').map((k) => [k.registers, k.localBytes]);
  const first = new CompileService(forkLauncher, null);
  const second = new CompileService(forkLauncher, null);
  try {
    const fresh = await first.compile({ source: base, sourceName: 'v.cu', options: { arch: target }, backend: 'nvrtc' });
    assert.equal(fresh.factsFrom, 'compiler');
    assert.ok(fresh.kernels.find((k) => k.name === 'vecAdd')?.registers, 'ptxas facts from a real compile');
    const edited = await first.compile({ source: `${base}// a comment\n`, sourceName: 'v.cu', options: { arch: target }, backend: 'nvrtc' });
    // Another process (another session's worker) has not seen the program compiled.
    const elsewhere = await second.compile({ source: `${base}// another comment\n`, sourceName: 'v.cu', options: { arch: target }, backend: 'nvrtc' });
    console.log(`# facts from: ${fresh.factsFrom}, then ${edited.factsFrom}, then in a new worker ${elsewhere.factsFrom}`);
    assert.deepEqual(facts(edited), facts(fresh));
    assert.deepEqual(facts(elsewhere), facts(fresh));
    // 'compiler' where the compute cache is off (CUDA_CACHE_DISABLE=1): then ptxas runs every time.
    assert.ok(['earlier-compile', 'compiler'].includes(edited.factsFrom!), edited.factsFrom);
    assert.ok(['recompiled', 'compiler'].includes(elsewhere.factsFrom!), elsewhere.factsFrom);
  } finally {
    await first.dispose();
    await second.dispose();
  }
});

test('NVRTC: #include <cassert> is explained — NVRTC ships no such header, and assert() needs none', async () => {
  const source = '#include <cassert>\n__global__ void k(int n) { assert(n > 0); }\n';
  const result = await compiler.compile({ source, sourceName: 'k.cu', options: { arch: await arch() }, backend: 'nvrtc' });
  assert.equal(result.ok, false);
  const note = result.diagnostics.find((d) => d.code === 'nvrtc-std-header');
  assert.ok(note, JSON.stringify(result.diagnostics));
  assert.equal(note.line, 1);
  assert.match(note.message, /assert\(\) needs no include/);
});
