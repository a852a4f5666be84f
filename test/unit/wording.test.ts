import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { ptxOrigin } from '../../core/bundle/bundle-compile';
import { diagnoseRun } from '../../core/runner/diagnose';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { byTitle } from '../../core/samples/gallery-order';
import { listGallery } from '../../main/services/sample-service';
import { ROOT } from '../helpers/cli';

// Issue 26, item 12: wording and numbers as a person reads them.

test('the gallery in the order of the titles it shows, not of its folders', async () => {
  const titles = (await listGallery()).map((s) => s.manifest.title);
  assert.ok(titles.length >= 17);
  assert.deepEqual(titles.slice(0, 4), [
    '64 × 32 threads per block',
    '100000 floats of static shared memory',
    'A plan that never frees',
    'An allocation larger than the device',
  ]);
  assert.ok(titles.indexOf('__trap()') > titles.indexOf('Shared-memory race (missing __syncthreads)'), '__trap() under T, its underscores aside');
  assert.ok(titles.indexOf('__trap()') < titles.indexOf('Uninitialised read'));
  const sample = (name: string, title: string) => ({ name, manifest: { title } });
  assert.deepEqual(
    byTitle([sample('b', 'Null pointer'), sample('a', 'grid too large'), sample('c', 'Device-side assert')]).map((s) => s.name),
    ['c', 'a', 'b'],
    'case aside',
  );
});

test('a bundle\'s PTX says where it came from as one clause: never "from taken from …"', () => {
  const cached = "taken from the compile cache (the run's own compile with nvrtc 13.0 for sm_90)";
  assert.equal(`PTX (1.2 KiB), ${ptxOrigin(cached)}`, "PTX (1.2 KiB), taken from the compile cache (the run's own compile with nvrtc 13.0 for sm_90)");
  // Bundles written before said "the compile cache: …" (test/fixtures/bundles/oob-off-by-one.zip).
  assert.equal(
    ptxOrigin('the compile cache: an earlier compile with nvcc CUDA 13.0 (V13.0.88) for sm_90 (the run used nvrtc)'),
    'taken from the compile cache (an earlier compile with nvcc CUDA 13.0 (V13.0.88) for sm_90 (the run used nvrtc))',
  );
  assert.equal(
    ptxOrigin('compiled again at export with nvcc CUDA 13.0 (V13.0.88) for sm_90'),
    'compiled again at export with nvcc CUDA 13.0 (V13.0.88) for sm_90',
  );
  assert.equal(ptxOrigin(null), 'as the bundle holds it');
});

test('the race recorded on an H100: counts with thousands separators, real plurals', () => {
  const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/shared-memory-race.json'), 'utf8')) as RunOutcome;
  // Judged again by this version (the file keeps the words it was recorded with).
  const d = diagnoseRun({ status: outcome.status, problem: null, result: outcome.result, exit: null, plan: null, launchFindings: [], processes: null });
  const said = [d.headline, ...d.specifics].join(' ');
  assert.match(d.headline, /^Wrong result in out: 496,831 of 1,048,576 elements differ from buffer expected/);
  assert.doesNotMatch(said, /\(s\)|\b\d{5,}\b of/);
});
