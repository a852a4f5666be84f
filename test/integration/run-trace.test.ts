import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { RunOutcome } from '../../core/runner/run-outcome';
import { renderRunTrace, writeRunTrace } from '../../main/cli/run-trace';
import { discoverLibraries } from '../../main/services/discovery-service';
import { validateChromeTrace } from '../helpers/chrome-trace';
import { ROOT, runCli, SAMPLES } from '../helpers/cli';

const hasDriver = discoverLibraries().cuda.loaded;
const recorded = (name: string) => JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs', `${name}.json`), 'utf8')) as RunOutcome;

test('run --trace: a recorded run becomes a trace Perfetto can open, with its buffers and its leak', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'run-trace-'));
  const outcome = recorded('never-frees');
  const report = await writeRunTrace(outcome, join(dir, 'never-frees.json'));
  assert.ok(!('notWritten' in report), renderRunTrace(report));
  const byPhase = validateChromeTrace(readFileSync(report.path, 'utf8'));
  const names = [...byPhase.values()].flat().map((e) => e.name);
  for (const m of outcome.result!.memory!)
    assert.ok(
      names.some((n) => n.includes(m.buffer)),
      `buffer ${m.buffer} is in the trace`,
    );
  assert.ok(
    (byPhase.get('i') ?? []).some((e) => /leak/i.test(e.name)),
    'the leak is marked',
  );
  assert.match(renderRunTrace(report), /ui\.perfetto\.dev/);
});

test('run --trace: a run that never reached the GPU writes nothing and says why', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'run-trace-'));
  const outcome = { ...recorded('never-frees'), status: 'unavailable', result: null } as unknown as RunOutcome;
  const report = await writeRunTrace(outcome, join(dir, 'none.json'));
  assert.ok('notWritten' in report);
  assert.match(report.notWritten, /never reached the GPU/);
  assert.equal(existsSync(join(dir, 'none.json')), false);
});

test('run --trace without a driver: the run says so, the trace says why it is not written', { skip: hasDriver && 'this machine has a driver' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'run-trace-'));
  const out = join(dir, 't.json');
  const r = await runCli(['run', '--plan', join(SAMPLES, 'vector-add/plan.json'), '--trace', out]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /No trace written .*never reached the GPU/);
  assert.equal(existsSync(out), false);
});
