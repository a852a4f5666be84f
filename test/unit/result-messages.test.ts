import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Diagnostic } from '../../core/compile/diagnostics';
import { noGpuSummary } from '../../core/no-gpu';
import { compileFailureDetail } from '../../core/runner/compile-failure';
import { describeNotAResult } from '../../core/runner/result-file';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { PLAN_PLACEHOLDER, sanitizerCommand } from '../../core/runner/sanitizer-command';
import { ROOT, SAMPLES } from '../helpers/cli';

test('a JSON file that is not a result: what it is instead and what to do, never a schema dump', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as unknown;
  const said = describeNotAResult(pkg, '/w/package.json', ['status: Invalid option: expected one of "ok"|…', 'diagnosis: Invalid input']);
  assert.equal(
    said,
    '/w/package.json is not a GPU Workbench run result: it has neither a "status" nor a "diagnosis". Open a file written by Save result (or by `gpu-workbench run --json`).',
  );
  const plan = JSON.parse(readFileSync(join(SAMPLES, 'vector-add/plan.json'), 'utf8')) as unknown;
  assert.match(describeNotAResult(plan, '/w/plan.json', []), /^\/w\/plan\.json is a launch plan, not a run result\. Load it with Load plan/);
  assert.match(describeNotAResult([1, 2], '/w/a.json', []), /it holds a list/);
  assert.match(describeNotAResult({ device: {}, driverVersion: '580' }, '/w/p.json', []), /is a device profile/);
  assert.match(
    describeNotAResult({ status: 'ok', diagnosis: 3 }, '/w/r.json', ['a', 'b', 'c', 'd']),
    /that this version can read: a; b; c; and 1 more\. It may be damaged/,
  );
});

test('a failed compile’s detail leads with its errors, which a log alone would lose', () => {
  const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/static-shared-too-large.json'), 'utf8')) as RunOutcome;
  const record = outcome.compile[0]!;
  const detail = compileFailureDetail(record.diagnostics, record.log).split('\n');
  assert.match(detail[0]!, /^broken\.cu:3:17: error: blockSum uses 391 KiB \(400000 bytes\) of static shared memory/);
  assert.match(detail[1]!, /^ptxas info {4}: 0 bytes gmem/);
  const nvcc: Diagnostic = { file: 'k.cu', line: 4, column: 3, severity: 'error', message: 'expected a ";"', code: '65-D', source: 'frontend' };
  assert.equal(compileFailureDetail([nvcc], 'k.cu(4): error #65-D: expected a ";"\n'), 'k.cu:4:3: error: expected a ";"');
  assert.equal(compileFailureDetail([], ''), 'The compiler failed without a message.');
});

test('the sanitizer command names this machine’s plan, or a placeholder', () => {
  assert.equal(sanitizerCommand('memcheck', '/home/me/plan.json'), 'gpu-workbench sanitize --tool memcheck --plan /home/me/plan.json');
  assert.equal(sanitizerCommand('racecheck', null), `gpu-workbench sanitize --tool racecheck --plan ${PLAN_PLACEHOLDER}`);
  assert.doesNotMatch(PLAN_PLACEHOLDER, /[<>|;&$`]/, 'pasted into a shell, the placeholder redirects nothing');
});

test('without a GPU: what still works, and how', () => {
  const s = noGpuSummary({ problem: 'No NVIDIA driver found', compiler: 'nvcc', shippedProfiles: ['NVIDIA H100 80GB HBM3', 'NVIDIA H200'] });
  assert.equal(s.title, 'No GPU to run on: No NVIDIA driver found.');
  assert.deepEqual(s.stillWorks, [
    'compile as you type (nvcc)',
    'check launches against the shipped NVIDIA H100 80GB HBM3 and NVIDIA H200 profiles (Device, in the Launch panel)',
    'open results recorded on a GPU (Run tab, Open result)',
  ]);
  assert.match(noGpuSummary({ problem: 'x', compiler: null, shippedProfiles: [] }).stillWorks[0]!, /neither was found/);
});
