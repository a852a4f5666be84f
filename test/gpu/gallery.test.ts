import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { compareWithExpected } from '../../core/samples/sample-manifest';
import { forkLauncher } from '../../main/process/launcher';
import { listGallery, loadSample } from '../../main/services/sample-service';
import { createWorkbench } from '../../main/workbench';

// Every failure-gallery sample, both variants, through the same path the CLI and the UI take: the
// broken one must produce the diagnosis its sample.json expects, the fixed one must run clean with
// every comparison matching — and after each sticky failure or watchdog kill, the very next run
// (the fixed variant) must succeed on a replacement runner.
const workbench = createWorkbench(forkLauncher);
after(() => workbench.dispose());
const fixturesOut = process.env['GPU_WORKBENCH_FIXTURES_OUT'];

test('failure gallery: every broken sample gets its expected diagnosis, every fixed one runs clean', async () => {
  const gallery = await listGallery();
  assert.ok(gallery.length >= 16, `expected the 16 failure classes and more, found ${gallery.length}`);
  const failures: string[] = [];
  for (const sample of gallery) {
    for (const variant of ['broken', 'fixed'] as const) {
      const loaded = await loadSample(sample.name, variant);
      const started = performance.now();
      const outcome = await workbench.runPlan(loaded.plan, { timeoutMs: sample.manifest.timeoutMs ?? 30_000, planPath: loaded.planPath });
      const ms = performance.now() - started;
      const d = outcome.diagnosis;
      const determinism = outcome.result?.checks.determinism ?? null;
      const differences = compareWithExpected(d, sample.manifest.expect[variant], determinism);
      if (variant === 'fixed') {
        for (const c of outcome.result?.checks.comparisons ?? []) if (c.mismatches) differences.push(`comparison of ${c.buffer} failed`);
        // A fixed variant that completes must survive the determinism check too: no false alarms.
        if (determinism?.differences.length) differences.push(`determinism: ${determinism.differences.map((x) => x.buffer).join(', ')} differ on a second run`);
      }
      console.log(
        `# ${sample.name} ${variant}: ${d.kind}${d.error ? ` ${d.error.name}` : ''}${d.step ? ` at step ${d.step.index}` : ''}${d.kernel ? ` in ${d.kernel.entry}` : ''} (${ms.toFixed(0)} ms)${differences.length ? '  ✗ ' + differences.join('; ') : ''}`,
      );
      console.log(`#   ${d.headline}`);
      if (determinism)
        console.log(
          `#   determinism: ${determinism.status}${determinism.reason ? ` (${determinism.reason})` : ''}, ${determinism.differences.length} differing, ${determinism.ms.toFixed(2)} ms`,
        );
      if (differences.length) failures.push(`${sample.name} ${variant}: ${differences.join('; ')}`);
      if (fixturesOut && variant === 'broken') {
        mkdirSync(join(fixturesOut, 'runs'), { recursive: true });
        writeFileSync(join(fixturesOut, 'runs', `${sample.name}.json`), JSON.stringify(outcome, null, 2));
      }
    }
  }
  assert.deepEqual(failures, []);
});
