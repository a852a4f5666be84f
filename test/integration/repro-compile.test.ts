import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { generateRepro } from '../../core/bundle/repro';
import { launchPlanSchema } from '../../core/plan/plan-schema';
import { findNvcc } from '../../main/compile/nvcc';
import { listGallery, loadSample } from '../../main/services/sample-service';

// Every gallery sample, broken and fixed, gives a repro.cu that nvcc compiles for sm_90 with no GPU here
// (running it is the GPU suite's job: test/gpu/repro.test.ts).
const run = promisify(execFile);
const nvccFound = findNvcc();
const dir = mkdtempSync(join(tmpdir(), 'wb-repro-'));

test('repro.cu of every gallery sample, broken and fixed, compiles with nvcc', async (t) => {
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
        try {
          await run(nvcc.path!, ['-arch=sm_90', '-lineinfo', '-o', source.replace(/\.cu$/, ''), source], { timeout: 120_000 });
        } catch (error) {
          const e = error as { stderr?: string; message: string };
          assert.fail(`nvcc refused ${source}:\n${(e.stderr ?? e.message).slice(0, 4000)}`);
        }
      }),
    ),
  );
});
