import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { generateRepro } from '../../core/bundle/repro';
import { initialBytes } from '../../core/plan/buffer-data';
import { launchPlanSchema, type BufferSpec } from '../../core/plan/plan-schema';
import { findNvcc } from '../../main/compile/nvcc';
import { listGallery, loadSample } from '../../main/services/sample-service';
import { ROOT } from '../helpers/cli';

// Every gallery sample, broken and fixed, gives a repro.cu that nvcc compiles for sm_90 with no GPU here
// (running it is the GPU suite's job: test/gpu/repro.test.ts).
const run = promisify(execFile);
const nvccFound = findNvcc();
const dir = mkdtempSync(join(tmpdir(), 'wb-repro-'));

test('repro.cu of every gallery sample, broken and fixed, compiles with nvcc (or not, where the recorded run did not)', async (t) => {
  const nvcc = await nvccFound;
  if (!nvcc.found || !nvcc.path) return t.skip('nvcc is not installed here');
  const gallery = await listGallery();
  assert.ok(gallery.length >= 10, 'the gallery has its samples');
  const jobs = gallery.flatMap((sample) => (['broken', 'fixed'] as const).map((variant) => ({ sample, variant })));
  await Promise.all(
    jobs.map(({ sample, variant }) =>
      t.test(`${sample.name} (${variant})`, async () => {
        const loaded = await loadSample(sample.name, variant);
        const plan = launchPlanSchema.parse(loaded.plan);
        const files = generateRepro(plan, { arch: 'sm_90', origin: `sample ${sample.name} (${variant})` });
        const source = join(dir, `${sample.name}-${variant}.cu`);
        writeFileSync(source, files.get('repro/repro.cu')!);
        const refused = await run(nvcc.path!, ['-arch=sm_90', '-lineinfo', '-o', source.replace(/\.cu$/, ''), source], { timeout: 120_000 }).then(
          () => null,
          (error: { stderr?: string; message: string }) => error.stderr ?? error.message,
        );
        // A sample whose recorded run did not compile (static-shared-too-large) must not compile as a repro either.
        const recorded = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs', `${sample.name}.json`), 'utf8')) as { status: string };
        if (variant === 'broken' && recorded.status === 'compile-error') assert.ok(refused !== null, `${source} compiled, but its recorded run did not`);
        else assert.equal(refused, null, `nvcc refused ${source}:\n${(refused ?? '').slice(0, 4000)}`);
      }),
    ),
  );
});

test('the repro fills host buffers with exactly the bytes the workbench uploads (every type, every generated initializer)', async (t) => {
  const nvcc = await nvccFound;
  if (!nvcc.found || !nvcc.path) return t.skip('nvcc is not installed here');
  const types = ['i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'i64', 'u64', 'f16', 'bf16', 'f32', 'f64'] as const;
  const inits = [
    { kind: 'zeros' },
    { kind: 'constant', value: -2.75 },
    { kind: 'constant', value: 70000.3 },
    { kind: 'iota', start: -3.5, step: 0.37 },
    { kind: 'random', seed: 7, min: -100, max: 100 },
    { kind: 'random', seed: 0xdeadbeef, min: 0, max: 1 },
  ] as const;
  const buffers: BufferSpec[] = types.flatMap((type) => inits.map((init, i) => ({ name: `${type}_${i}`, type, count: 257, init })));
  const plan = launchPlanSchema.parse({
    version: 1,
    kernels: [{ id: 'k', entry: 'k', source: '__global__ void k() {}' }],
    buffers,
    steps: [{ op: 'sync' }],
  });
  // The program's main renamed away; a host-only main prints each buffer's bytes in hex (no CUDA call: no GPU needed).
  const dump = buffers.map(
    (b) => `  { auto h = init_${b.name}(); std::printf("${b.name} "); for (unsigned char c : h) std::printf("%02x", c); std::printf("\\n"); }`,
  );
  const text =
    generateRepro(plan).get('repro/repro.cu')!.replace('int main() {', 'int repro_main() {') + `\nint main() {\n${dump.join('\n')}\n  return 0;\n}\n`;
  const source = join(dir, 'host-bytes.cu');
  writeFileSync(source, text);
  await run(nvcc.path, ['-o', source.replace(/\.cu$/, ''), source], { timeout: 120_000 });
  const { stdout } = await run(source.replace(/\.cu$/, ''), [], { maxBuffer: 64 * 1024 * 1024 });
  const got = new Map(
    stdout
      .trim()
      .split('\n')
      .map((line) => line.split(' ') as [string, string]),
  );
  for (const b of buffers)
    assert.equal(got.get(b.name), Buffer.from(initialBytes(b)).toString('hex'), `buffer ${b.name} (${b.type}, ${JSON.stringify(b.init)})`);
});
