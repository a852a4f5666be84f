import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

import { generateRepro } from '../../core/bundle/repro';
import { launchPlanSchema } from '../../core/plan/plan-schema';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { findNvcc } from '../../main/compile/nvcc';
import { listGallery, loadSample } from '../../main/services/sample-service';
import { ROOT } from '../helpers/cli';

// The standalone repro.cu of every gallery sample, built with nvcc and run on the GPU: a broken sample's
// repro stops on the same CUDA error its recorded run has (test/fixtures/runs/<name>.json), a fixed one
// prints "repro: OK". The repro uses the runtime API, the recorded run the driver API: the error code is
// the same number (cudaErrorIllegalAddress = CUDA_ERROR_ILLEGAL_ADDRESS = 700), except that the runtime
// refuses a launch configuration as cudaErrorInvalidConfiguration (9) where cuLaunchKernel says
// CUDA_ERROR_INVALID_VALUE (1).
const run = promisify(execFile);
const SAME_ERROR: Record<number, number[]> = { 1: [1, 9] };

test('repro.cu of every gallery sample reproduces its run with nvcc alone', async (t) => {
  const nvcc = await findNvcc();
  assert.ok(nvcc.found && nvcc.path, 'the GPU machine has nvcc');
  const dir = mkdtempSync(join(tmpdir(), 'wb-repro-gpu-'));
  const failures: string[] = [];
  for (const sample of await listGallery()) {
    const recorded = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs', `${sample.name}.json`), 'utf8')) as RunOutcome;
    for (const variant of ['broken', 'fixed'] as const) {
      const plan = launchPlanSchema.parse((await loadSample(sample.name, variant)).plan);
      const source = join(dir, `${sample.name}-${variant}.cu`);
      const binary = source.replace(/\.cu$/, '');
      writeFileSync(source, generateRepro(plan).get('repro/repro.cu')!);
      const label = `${sample.name} (${variant})`;
      const built = await run(nvcc.path!, ['-arch=native', '-lineinfo', '-o', binary, source], { timeout: 180_000 }).then(
        () => null,
        (e: { stderr?: string }) => e.stderr ?? 'nvcc failed',
      );
      if (variant === 'broken' && recorded.status === 'compile-error') {
        if (built === null) failures.push(`${label}: the recorded run did not compile, but the repro did`);
        continue;
      }
      if (built !== null) {
        failures.push(`${label}: nvcc refused it: ${built.slice(0, 400)}`);
        continue;
      }
      const timeoutMs = (sample.manifest.timeoutMs ?? 30_000) + 10_000;
      const result = await run(binary, [], { timeout: timeoutMs }).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr, killed: false }),
        (e: { code?: number; stdout?: string; stderr?: string; killed?: boolean }) => ({
          code: typeof e.code === 'number' ? e.code : -1,
          stdout: e.stdout ?? '',
          stderr: e.stderr ?? '',
          killed: !!e.killed,
        }),
      );
      t.diagnostic(`${label}: exit ${result.code}${result.killed ? ' (killed)' : ''} ${result.stderr.trim().split('\n').pop() ?? ''}`);
      if (variant === 'fixed') {
        if (result.code !== 0 || !/^repro: OK$/m.test(result.stdout))
          failures.push(`${label}: expected "repro: OK", got exit ${result.code}: ${result.stderr.slice(0, 300)}`);
        continue;
      }
      const error = recorded.diagnosis.error;
      if (error) {
        const printed = /: (cuda\w+) \((\d+)\): /.exec(result.stderr);
        const accepted = SAME_ERROR[error.code] ?? [error.code];
        if (!printed || !accepted.includes(Number(printed[2])))
          failures.push(`${label}: expected ${error.name} (${error.code}), the repro said: ${result.stderr.slice(0, 300) || `exit ${result.code}`}`);
      } else if (recorded.status === 'runner-died') {
        // The watchdog stopped a kernel that never ends: the repro is stopped by our timeout in the same way.
        if (!result.killed) failures.push(`${label}: expected a kernel that never ends, it exited ${result.code}`);
      }
      // Broken samples with no CUDA error (out-of-bounds into guard bytes, a race, a leak) run: the workbench's
      // own checks find them, which a bare host program does not have; compute-sanitizer on the repro does.
    }
  }
  assert.deepEqual(failures, []);
});
