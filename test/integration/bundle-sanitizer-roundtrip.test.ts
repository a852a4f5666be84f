import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { exportBundle } from '../../main/bundle/bundle-service';
import { openBundleView, readBundle } from '../../main/bundle/read-bundle';
import { loadSample } from '../../main/services/sample-service';
import { placeCupyKernels } from '../../main/tools/cupy-kernel-sources';
import { importSanitizerReport } from '../../main/tools/sanitize-import';
import { ROOT } from '../helpers/cli';
import type { RunOutcome } from '../../core/runner/run-outcome';

// A sanitizer report with everything arranging and placing give it — the API error folded under the fault
// (followedBy), CuPy's kernel line in the user's .py (sourceMapped, raceSourceMapped), the memory CuPy held at exit
// (heldAtExit, heldBy) — exported into a bundle from the UI's request and opened again: nothing is dropped.
// Reports recorded on an H200 (test/fixtures/programs/h200), with CuPy's saved kernel sources.
const H200 = join(ROOT, 'test/fixtures/programs/h200');
const dir = mkdtempSync(join(tmpdir(), 'wb-bundle-sanitizer-'));
after(() => rmSync(dir, { recursive: true, force: true }));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
process.env['GPU_WORKBENCH_CACHE_DIR'] = join(dir, 'cache');
const doctorFacts = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/env/h100/doctor-facts.json'), 'utf8'));

async function placedReport(): Promise<SanitizeReport> {
  const oob = await importSanitizerReport(join(H200, 'cupy-out-of-bounds.memcheck.xml'), null, 'memcheck');
  const placed = await placeCupyKernels(oob.groups, {
    cache: { dir: join(H200, 'cupy-cache'), private: true },
    command: ['python3', 'oob.py'],
    cwd: join(ROOT, 'samples/programs/cupy-out-of-bounds'),
  });
  const race = await importSanitizerReport(join(H200, 'cupy-race.racecheck.xml'), null, 'racecheck');
  const racePlaced = await placeCupyKernels(race.groups, {
    cache: { dir: join(H200, 'cupy-cache2'), private: true },
    command: ['python3', join(ROOT, 'samples/programs/cupy-race/reduce.py')],
    cwd: dir,
  });
  // One report holding every new field: the out-of-bounds read's, with the race's group beside it.
  return { ...oob, groups: [...placed.groups, ...racePlaced.groups] };
}

test('export → open keeps followedBy, sourceMapped, raceSourceMapped, heldBy and heldAtExit as they were', async () => {
  const report = await placedReport();
  const [read, hazard] = report.groups;
  // What goes in has every field (else the test would prove nothing).
  assert.equal(read!.followedBy?.length, 1);
  assert.equal(read!.sourceMapped?.line, 21);
  assert.deepEqual([hazard!.raceSourceMapped?.first?.line, hazard!.raceSourceMapped?.second?.line], [15, 13]);
  assert.deepEqual(
    report.heldAtExit?.map((h) => [h.holder, h.bytes, h.groups[0]?.heldBy]),
    [['cupy-arrays', 8000, 'cupy-arrays']],
  );

  const { plan } = await loadSample('oob-off-by-one', 'broken');
  const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/oob-off-by-one.json'), 'utf8')) as RunOutcome;
  const path = join(dir, 'cupy.zip');
  await exportBundle(path, { plan, outcome, origin: 'test', sanitizer: report, includeSources: true, redact: false, doctorFacts }, { compiler: null });

  // sanitizer.json as written, and the report as the views read it back: the same, less the XML (it goes in sanitizer/).
  const { rawXml: _xml, ...expected } = JSON.parse(JSON.stringify(report)) as SanitizeReport;
  const written = JSON.parse(Buffer.from((await readBundle(path)).entries.get('sanitizer.json')!).toString('utf8')) as unknown;
  assert.deepEqual(written, expected);
  const view = await openBundleView(path);
  assert.deepEqual(view.sanitizer, expected);
  assert.equal(view.sanitizer?.groups[0]?.followedBy?.[0]?.example.api?.error, 'CUDA_ERROR_LAUNCH_FAILED');
  assert.equal(view.sanitizer?.groups[0]?.sourceMapped?.cachePath, '/tmp/tmp9kuab6ub/856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu');
  assert.equal(view.sanitizer?.heldAtExit?.[0]?.blocks, 2);
});
