import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { diagnoseRun } from '../../core/runner/diagnose';
import { compareWithExpected } from '../../core/samples/sample-manifest';
import type { RunOutcome } from '../../main/services/run-service';
import { listGallery, loadSample } from '../../main/services/sample-service';
import { launchPlanSchema } from '../../core/plan/plan-schema';
import { ROOT } from '../helpers/cli';

// What each broken gallery sample produced on an H100 (recorded by the GPU suite, determinism check included), diagnosed again
// here: the diagnosis is pure logic over the run's data, so it must come out the same without a GPU.
const FIXTURES = join(ROOT, 'test/fixtures/runs');

test('recorded GPU runs of the failure gallery diagnose the same here, and as each sample expects', async () => {
  const gallery = await listGallery();
  const recorded = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
  assert.equal(recorded.length, gallery.length, 'one recorded run per sample');
  for (const sample of gallery) {
    const outcome = JSON.parse(readFileSync(join(FIXTURES, `${sample.name}.json`), 'utf8')) as RunOutcome;
    const { plan, planPath } = await loadSample(sample.name, 'broken');
    const again = diagnoseRun({
      status: outcome.status,
      problem: outcome.problem,
      result: outcome.result,
      exit: outcome.exit,
      plan: launchPlanSchema.parse(plan),
      launchFindings: outcome.diagnosis.launchFindings,
      processes: outcome.diagnosis.memory?.processes ?? null,
      planPath,
    });
    const determinism = outcome.result?.checks.determinism ?? null;
    assert.deepEqual(compareWithExpected(again, sample.manifest.expect.broken, determinism), [], sample.name);
    // Counts are now written with thousands separators; the recording kept the words of its day.
    const digits = (text: string) => text.replace(/(\d),(?=\d{3})/g, '$1');
    assert.equal(digits(again.headline), digits(outcome.diagnosis.headline), sample.name);
    assert.deepEqual(again.error, outcome.diagnosis.error, sample.name);
  }
});
