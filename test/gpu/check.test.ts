import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { startedByThisTest } from '../helpers/own-processes-tag';

import { reportLines } from '../../core/check/check-text';
import { junitXml } from '../../core/check/junit';
import { forkLauncher } from '../../main/process/launcher';
import { listProcesses } from '../../main/process/process-state';
import { checkPlans } from '../../main/services/check-service';
import { galleryTargets } from '../../main/services/check-targets';
import { createWorkbench } from '../../main/workbench';

// Issue 28, "Check everything": `check` over the whole failure gallery through the service the CLI and the app use —
// the validator, a run with the determinism check, memcheck (leak check on), racecheck, initcheck, synccheck, and
// Nsight Compute's coalescing and occupancy on every variant. Every fixed variant passes every check; every broken
// one fails the check its sample.json names (expect.broken.check) with its finding; and the whole gallery finishes
// well inside 10 minutes on an H100 (the tools on a plan run at once, several plans at a time).
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
after(() => workbench.dispose());
const out = process.env['GPU_WORKBENCH_FIXTURES_OUT'];
const TEN_MINUTES_MS = 600_000;

test('check --gallery: every fixed variant passes every check, every broken one fails with its own finding', async () => {
  const targets = await galleryTargets(null);
  assert.ok(targets.length >= 36, `both variants of the 18 samples and more, found ${targets.length}`);
  const report = await checkPlans(targets, workbench, {
    onEvent: (event) => {
      if (event.kind === 'plan')
        console.log(`# [${event.done}/${event.total}] ${event.report.label}: ${event.report.expectation?.met ?? event.report.verdict}`);
    },
  });
  for (const line of reportLines(report, { details: true })) console.log(`# ${line}`);
  if (out) {
    mkdirSync(join(out, 'check'), { recursive: true });
    writeFileSync(join(out, 'check', 'gallery.json'), JSON.stringify(report, null, 2));
    writeFileSync(join(out, 'check', 'gallery-junit.xml'), junitXml(report));
  }

  const failures: string[] = [];
  for (const plan of report.plans) {
    const e = plan.expectation;
    if (!e) failures.push(`${plan.label}: no expectation`);
    else if (e.met !== 'yes') failures.push(`${plan.label}: ${e.met}: ${e.words}`);
    // Nothing in the gallery may leave a check without a verdict: the GPU, compute-sanitizer and ncu are all here.
    if (e?.variant === 'fixed') {
      const unchecked = plan.checks.filter((c) => c.status !== 'passed');
      if (unchecked.length) failures.push(`${plan.label}: ${unchecked.map((c) => `${c.check} ${c.status}: ${c.summary}`).join(' | ')}`);
    }
  }
  // The naive transpose: its store line, 32 sectors per request where 4 would do.
  const uncoalesced = report.plans.find((p) => p.label === 'uncoalesced-access (broken)')!;
  const coalescing = uncoalesced.checks.find((c) => c.check === 'coalescing')!;
  assert.match(coalescing.summary, /each store request moves 32\.0 sectors where 4\.0 would do/, coalescing.summary);
  assert.deepEqual(failures, []);
  assert.equal(report.verdict, 'passed', report.headline);
  console.log(`# the gallery in ${(report.durationMs / 1000).toFixed(1)} s (${report.plans.length} plans)`);
  assert.ok(report.durationMs < TEN_MINUTES_MS, `${(report.durationMs / 60_000).toFixed(1)} min`);
});

test('after the check: no tool, runner or ncu left behind', async () => {
  await workbench.dispose();
  // By what each process runs (its program, or node's script), not by words anywhere in its command line: a shell
  // whose script merely mentions ncu (the command that started this suite) is not one of ours.
  const ours = (cmdline: string) => {
    const [program = '', script = ''] = cmdline.split(' ');
    const name = program.split('/').pop() ?? '';
    return name === 'compute-sanitizer' || name === 'ncu' || (name.startsWith('node') && script.endsWith('dist/main/runner.js'));
  };
  const left = listProcesses().filter((p) => ours(p.cmdline) && p.pid !== process.pid && startedByThisTest(p.pid));
  assert.deepEqual(left, []);
});
