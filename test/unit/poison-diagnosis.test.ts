import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { launchPlanSchema } from '../../core/plan/plan-schema';
import { nanChange } from '../../core/plan/poison';
import { diagnoseRun } from '../../core/runner/diagnose';
import type { PoisonProbe, RunResult } from '../../core/runner/run-result';
import type { RunOutcome } from '../../main/services/run-service';
import { ROOT } from '../helpers/cli';

// The uninitialised-read sample as the H200 ran it (out[i] += 2*in[i], out never written: 4096 NaN),
// read without its expectation, with the poison probe's three possible answers.
const recorded = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/uninitialised-read.json'), 'utf8')) as RunOutcome;

function diagnose(probe: PoisonProbe | undefined) {
  const result = structuredClone(recorded.result!) as RunResult;
  result.checks.comparisons = [];
  result.buffers[0]!.poison = { poisonCount: 0, firstPoisonIndex: null, nanCount: 4096, firstNanIndex: 0 };
  if (probe) result.checks.poisonProbe = probe;
  return diagnoseRun({
    status: 'ok',
    problem: null,
    result,
    exit: null,
    plan: launchPlanSchema.parse({
      version: 1,
      kernels: [{ id: 'accumulate', entry: 'accumulate', source: '' }],
      buffers: [],
      steps: [{ op: 'sync' }],
    }),
    launchFindings: [],
    processes: null,
  });
}

test('NaN that zeroing unwritten memory turns into numbers is an uninitialised read, with no expectation given', () => {
  const d = diagnose({ status: 'ran', reason: null, buffers: [{ buffer: 'out', stepIndex: 4, nanInFirst: 4096, nanWithZeros: 0, firstIndex: 0 }] });
  assert.deepEqual([d.kind, d.severity, d.buffer], ['uninitialised-read', 'error', 'out']);
  assert.match(d.headline, /accumulate read memory nothing had written: out holds 4096 NaN from the poison pattern, the first at index 0/);
  assert.match(d.specifics.join(' '), /4,096 elements of out are NaN only because of memory nothing wrote/);
  assert.equal(d.sanitizer?.tool, 'initcheck');
});

test('NaN the kernel computes whatever the memory held (sqrt of a negative) is not blamed on the poison', () => {
  const d = diagnose({ status: 'ran', reason: null, buffers: [{ buffer: 'out', stepIndex: 4, nanInFirst: 4096, nanWithZeros: 4096, firstIndex: null }] });
  assert.equal(d.kind, 'ok');
  assert.match(d.specifics.join(' '), /Buffer out holds 4,096 NaN values/);
});

test('when the probe could not run, the NaN is a warning that says it may come from unwritten memory, and why it was not confirmed', () => {
  const d = diagnose({ status: 'skipped', reason: 'the first run took 25.0 s of the 30 s time limit', buffers: [] });
  assert.deepEqual([d.kind, d.severity], ['uninitialised-read', 'warning']);
  assert.match(d.headline, /NaN that may come from the poison pattern/);
  assert.match(d.specifics.join(' '), /could not confirm it \(the first run took 25\.0 s/);
});

test('nanChange: which NaN became numbers when the unwritten memory was zeroed', () => {
  const first = new Float32Array([NaN, 1, NaN, NaN]);
  const second = new Float32Array([0, 1, NaN, 2]);
  assert.deepEqual(nanChange('f32', new Uint8Array(first.buffer), new Uint8Array(second.buffer)), { nanInFirst: 3, nanWithZeros: 1, firstIndex: 0 });
  assert.equal(nanChange('i32', new Uint8Array(4), new Uint8Array(4)), null);
  assert.equal(nanChange('f32', new Uint8Array(new Float32Array([1]).buffer), new Uint8Array(4)), null);
});

/** The race sample's plan with its kernels' sources read in, as the sample service resolves it. */
function racePlan() {
  const dir = join(ROOT, 'samples/shared-memory-race');
  const raw = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')) as { kernels: { id: string; entry: string; sourceFile: string }[] };
  const kernels = raw.kernels.map((k) => ({ id: k.id, entry: k.entry, source: readFileSync(join(dir, k.sourceFile), 'utf8'), sourceName: k.sourceFile }));
  return launchPlanSchema.parse({ ...raw, kernels });
}

test('a race that reads stale shared memory (NaN in the result, not the poison bytes) stays a wrong result, not a read of unwritten memory', () => {
  // The race sample as the H100 ran it; in the soak, 6 of about 60 such runs read shared memory a
  // previous kernel had left NaN, and were blamed on the reference kernel's output buffer.
  const race = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/shared-memory-race.json'), 'utf8')) as RunOutcome;
  const result = structuredClone(race.result!) as RunResult;
  const out = result.buffers.find((b) => b.name === 'out')!;
  out.nanCount = 3;
  out.poison = { poisonCount: 0, firstPoisonIndex: null, nanCount: 3, firstNanIndex: 40 };
  result.checks.comparisons[0]!.first[0]!.actual = NaN;
  const withProbe = (nanWithZeros: number): RunResult => ({
    ...result,
    checks: {
      ...result.checks,
      poisonProbe: { status: 'ran', reason: null, buffers: [{ buffer: 'out', stepIndex: 5, nanInFirst: 3, nanWithZeros, firstIndex: 40 }] },
    },
  });
  const plan = racePlan();
  for (const r of [result, withProbe(0), withProbe(3)]) {
    const d = diagnoseRun({ status: 'ok', problem: null, result: r, exit: null, plan, launchFindings: [], processes: null });
    assert.equal(d.kind, 'wrong-result', d.headline);
    assert.equal(d.buffer, 'out');
    assert.doesNotMatch(d.headline, /read buffer expected/);
  }
});

test('a race whose stale reads happen to be the poison bytes (seen in the H100 soak) is still a race: wrong result, the poison named as one possible cause', () => {
  const race = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/shared-memory-race.json'), 'utf8')) as RunOutcome;
  const result = structuredClone(race.result!) as RunResult;
  const out = result.buffers.find((b) => b.name === 'out')!;
  out.poison = { poisonCount: 7, firstPoisonIndex: 96, nanCount: 7, firstNanIndex: 96 };
  const d = diagnoseRun({ status: 'ok', problem: null, result, exit: null, plan: racePlan(), launchFindings: [], processes: null });
  assert.deepEqual([d.kind, d.buffer, d.sanitizer?.tool], ['wrong-result', 'out', 'racecheck']);
  assert.match(
    d.specifics.join(' '),
    /7 elements of out hold the poison pattern .* the first at index 96: memory no thread wrote, or stale memory a racing read picked up/,
  );
  result.checks.comparisons = [];
  const unexpected = diagnoseRun({ status: 'ok', problem: null, result, exit: null, plan: racePlan(), launchFindings: [], processes: null });
  assert.equal(unexpected.kind, 'nondeterministic');
});

test('the same wrong result with the poison bytes themselves in it is an uninitialised read of that buffer', () => {
  const race = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/shared-memory-race.json'), 'utf8')) as RunOutcome;
  const result = structuredClone(race.result!) as RunResult;
  result.checks.determinism!.differences = [];
  const out = result.buffers.find((b) => b.name === 'out')!;
  out.poison = { poisonCount: 512, firstPoisonIndex: 32, nanCount: 512, firstNanIndex: 32 };
  const plan = racePlan();
  const d = diagnoseRun({ status: 'ok', problem: null, result, exit: null, plan, launchFindings: [], processes: null });
  assert.deepEqual([d.kind, d.buffer, d.kernel?.entry], ['uninitialised-read', 'out', 'reverseBlocks']);
});
