import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { bytesOf, launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import type { RunLogEvent } from '../../core/runner/event-log';
import { runLogEventSchema } from '../../core/runner/event-log-schema';
import { forkLauncher } from '../../main/process/launcher';
import { readPlanFile } from '../../main/services/plan-files';
import type { RunOutcome } from '../../main/services/run-service';
import { loadSample } from '../../main/services/sample-service';
import { createWorkbench } from '../../main/workbench';
import { SAMPLES } from '../helpers/cli';

// The runner's event log on a real GPU: every alloc, copy, launch, read-back and free of the plan, in
// order, with the addresses the result names, and launches placed on the run's time axis by CUDA events.
// One runner (no spare), so the module cache's behaviour is this file's own.
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
after(() => workbench.dispose());
const fixturesOut = process.env['GPU_WORKBENCH_FIXTURES_OUT'];

/** How far a GPU time may sit outside its launch call's host span: the origin event's own latency. */
const ORIGIN_SLACK_MS = 1;

async function run(plan: unknown, planPath: string): Promise<{ outcome: RunOutcome; plan: LaunchPlan; before: number; after: number }> {
  const before = Date.now();
  const outcome = await workbench.runPlan(plan, { timeoutMs: 60_000, planPath });
  return { outcome, plan: launchPlanSchema.parse(plan), before, after: Date.now() };
}

/** What the plan's own steps make in the log, in order (no replays, no teardown). */
function expectedRunEvents(plan: LaunchPlan): { kind: RunLogEvent['kind']; step: number; buffer?: string | null; what?: string }[] {
  const out: ReturnType<typeof expectedRunEvents> = [];
  plan.steps.forEach((step, index) => {
    switch (step.op) {
      case 'alloc':
      case 'free':
        out.push({ kind: step.op, step: index, buffer: step.buffer });
        break;
      case 'upload':
        out.push({ kind: 'copy', step: index, buffer: step.buffer, what: 'HtoD data' });
        break;
      case 'download':
        out.push({ kind: 'copy', step: index, buffer: step.buffer, what: 'DtoH data' });
        break;
      case 'sync':
        out.push({ kind: 'sync', step: index });
        break;
      case 'launch':
        out.push({ kind: 'launch', step: index });
        if (plan.checks.guardBytes > 0 && step.args.some((a) => 'buffer' in a)) out.push({ kind: 'copy', step: index, buffer: null, what: 'DtoH guards' });
        break;
    }
  });
  return out;
}

const shape = (e: RunLogEvent) => ({
  kind: e.kind,
  step: e.step as number,
  ...('buffer' in e ? { buffer: e.buffer } : {}),
  ...(e.kind === 'copy' ? { what: `${e.direction} ${e.why}` } : {}),
});

/** What holds for every run's log: valid events, times in order inside the run, addresses and sizes as the result has them. */
function checkCommon(outcome: RunOutcome, plan: LaunchPlan, before: number, afterMs: number): RunLogEvent[] {
  const result = outcome.result!;
  const events = result.events!;
  assert.ok(Array.isArray(events) && events.length > 0, 'the result carries its event log');
  assert.equal(result.eventsDropped, 0);
  assert.ok(result.startedAtMs! >= before && result.startedAtMs! <= afterMs, 'startedAtMs is when the run began');
  let last = 0;
  for (const e of events) {
    assert.ok(runLogEventSchema.safeParse(e).success, JSON.stringify(e));
    assert.ok(e.t >= last - 1e-3, `events in the order they were made: ${e.kind} at ${e.t} after ${last}`);
    assert.ok(e.dur >= 0 && e.t + e.dur <= result.executeMs + 1e-3, `${e.kind} inside the run`);
    last = e.t;
  }
  const guard = plan.checks.guardBytes;
  const spec = (name: string) => plan.buffers.find((b) => b.name === name)!;
  for (const e of events) {
    if (e.kind === 'alloc' || e.kind === 'free') {
      assert.equal(e.bytes, bytesOf(spec(e.buffer)), `${e.kind} ${e.buffer}: the buffer's bytes`);
      assert.equal(e.allocatedBytes, e.bytes + 2 * guard, `${e.kind} ${e.buffer}: guards on both sides`);
      const record = result.memory!.find((m) => m.buffer === e.buffer)!;
      assert.equal(e.address, record.address, `${e.kind} ${e.buffer}: the address result.memory names`);
    }
    if (e.kind === 'copy' && e.why === 'data') assert.equal(e.bytes, bytesOf(spec(e.buffer!)));
    if (e.kind === 'copy' && e.why === 'guards') assert.equal(e.bytes % (2 * guard), 0);
    if (e.kind === 'launch') {
      const step = plan.steps[e.step!]!;
      assert.equal(step.op, 'launch');
      if (step.op !== 'launch') continue;
      assert.deepEqual([e.kernel, e.grid, e.block, e.sharedBytes], [step.kernel, step.grid, step.block, step.sharedBytes]);
      assert.equal(e.gpu.length, step.repeats, 'a GPU placement for each timed launch');
      let previousEnd = -Infinity;
      for (const span of e.gpu) {
        assert.ok(span.startMs < span.endMs, `GPU start before end: ${JSON.stringify(span)}`);
        assert.ok(span.startMs >= previousEnd - 1e-3, 'timed launches one after another');
        assert.ok(
          span.startMs >= e.t - ORIGIN_SLACK_MS && span.endMs <= e.t + e.dur + ORIGIN_SLACK_MS,
          `GPU ${JSON.stringify(span)} inside the call ${e.t}+${e.dur}`,
        );
        previousEnd = span.endMs;
      }
    }
  }
  // The first run's launches: the same durations as result.launches, placed.
  const firstLaunches = events.filter((e): e is Extract<RunLogEvent, { kind: 'launch' }> => e.kind === 'launch' && e.phase === 'run');
  assert.equal(firstLaunches.length, result.launches.length);
  firstLaunches.forEach((e, i) =>
    e.gpu.forEach((span, j) => assert.ok(Math.abs(span.endMs - span.startMs - result.launches[i]!.timesMs[j]!) < 3e-4, 'end = start + the launch time')),
  );
  return events;
}

function record(name: string, outcome: RunOutcome): void {
  if (!fixturesOut) return;
  mkdirSync(join(fixturesOut, 'events'), { recursive: true });
  writeFileSync(join(fixturesOut, 'events', `${name}.json`), JSON.stringify(outcome, null, 2));
}

test('vector add: every alloc, upload, launch, read-back and free of the plan, in order, and its replays', async () => {
  const planPath = join(SAMPLES, 'vector-add/plan.json');
  const { plan: raw } = await readPlanFile(planPath);
  const { outcome, plan, before, after: afterMs } = await run(raw, planPath);
  assert.equal(outcome.status, 'ok', outcome.diagnosis.headline);
  const events = checkCommon(outcome, plan, before, afterMs);
  const loads = events.filter((e) => e.phase === 'load');
  assert.deepEqual(
    loads.map((e) => e.kind),
    ['module-load'],
    'the first run of this kernel in a fresh runner loads its module',
  );
  assert.deepEqual(events.filter((e) => e.phase === 'run').map(shape), expectedRunEvents(plan));
  assert.ok(!events.some((e) => e.phase === 'teardown' || e.kind === 'error'));
  const determinism = outcome.result!.checks.determinism!;
  if (determinism.status === 'compared') {
    // The replay: the same uploads, launch and read-back; unwritten memory re-poisoned first.
    const replay = events.filter((e) => e.phase === 'determinism');
    const plain = replay.filter((e) => e.kind !== 'memset').map(shape);
    const replayed = expectedRunEvents(plan).filter((e) => e.kind !== 'alloc' && e.kind !== 'free' && e.what !== 'DtoH guards');
    assert.deepEqual(plain, Array.from({ length: determinism.runs }, () => replayed).flat());
    for (const m of replay.filter((e) => e.kind === 'memset')) {
      assert.ok(m.kind === 'memset' && m.why === 'poison');
      assert.equal(m.address, outcome.result!.memory!.find((r) => r.buffer === m.buffer)!.address);
    }
    const lastReplay = replay[replay.length - 1]!;
    const firstFree = events.find((e) => e.kind === 'free')!;
    assert.ok(lastReplay.t <= firstFree.t, "the replays come before the plan's trailing frees");
  }
  const launch = events.find((e) => e.kind === 'launch')!;
  console.log(
    `# vector add: ${events.length} events; launch call at ${launch.t} ms for ${launch.dur} ms, GPU ${launch.kind === 'launch' ? `${launch.gpu[0]!.startMs}…${launch.gpu[launch.gpu.length - 1]!.endMs}` : ''} ms`,
  );
  record('vector-add', outcome);

  // The same kernel again: the runner's module cache holds it, so no driver call and no load event.
  const again = await run(raw, planPath);
  assert.equal(again.outcome.status, 'ok');
  checkCommon(again.outcome, again.plan, again.before, again.after);
  assert.deepEqual(
    again.outcome.result!.events!.filter((e) => e.phase === 'load'),
    [],
  );
});

test('a plan that never frees: its allocs stay without frees in the run, and teardown frees them', async () => {
  const { plan: raw, planPath } = await loadSample('never-frees', 'broken');
  const { outcome, plan, before, after: afterMs } = await run(raw, planPath);
  assert.equal(outcome.diagnosis.kind, 'leak');
  const events = checkCommon(outcome, plan, before, afterMs);
  const inRun = events.filter((e) => e.phase === 'run');
  assert.deepEqual(inRun.map(shape), expectedRunEvents(plan));
  assert.ok(!inRun.some((e) => e.kind === 'free'));
  const teardown = events.filter((e) => e.phase === 'teardown');
  assert.ok(teardown.every((e) => e.kind === 'free' && e.step === null));
  assert.deepEqual(teardown.map((e) => ('buffer' in e ? e.buffer : null)).sort(), outcome.result!.leaks.map((l) => l.name).sort());
  for (const free of teardown) {
    const alloc = events.find((e) => e.kind === 'alloc' && 'buffer' in free && e.buffer === free.buffer)!;
    assert.ok(alloc.kind === 'alloc' && free.kind === 'free' && alloc.address === free.address);
    assert.ok(free.t >= events.filter((e) => e.phase !== 'teardown').at(-1)!.t, 'teardown comes last');
  }
});

test('an allocation larger than the device: an error event with the request and the device memory, and nothing allocated', async () => {
  const { plan: raw, planPath } = await loadSample('allocation-too-large', 'broken');
  const { outcome, plan, before, after: afterMs } = await run(raw, planPath);
  assert.equal(outcome.diagnosis.kind, 'out-of-memory');
  const events = checkCommon(outcome, plan, before, afterMs);
  const errors = events.filter((e) => e.kind === 'error');
  assert.equal(errors.length, 1);
  const e = errors[0]!;
  assert.ok(e.kind === 'error');
  assert.deepEqual([e.phase, e.step, e.api, e.error.name], ['run', 0, 'cuMemAlloc_v2', 'CUDA_ERROR_OUT_OF_MEMORY']);
  const alloc = plan.steps[0]!;
  assert.ok(alloc.op === 'alloc');
  assert.equal(e.memory!.requestedBytes, bytesOf(plan.buffers.find((b) => b.name === alloc.buffer)!));
  assert.ok(e.memory!.totalBytes > 0 && e.memory!.freeBytes > 0 && e.memory!.freeBytes <= e.memory!.totalBytes);
  assert.deepEqual(e.memory, outcome.result!.failure!.memory);
  assert.ok(!events.some((x) => x.kind === 'alloc' || x.kind === 'free' || x.kind === 'launch'));
});

test('a write past the end: the guard read after the launch, then the guard put back, at the address past the buffer', async () => {
  const { plan: raw, planPath } = await loadSample('oob-off-by-one', 'broken');
  const { outcome, plan, before, after: afterMs } = await run(raw, planPath);
  assert.equal(outcome.diagnosis.kind, 'out-of-bounds-write');
  const events = checkCommon(outcome, plan, before, afterMs);
  const launchAt = events.findIndex((e) => e.kind === 'launch');
  const [guards, restore] = [events[launchAt + 1]!, events[launchAt + 2]!];
  assert.ok(guards.kind === 'copy' && guards.why === 'guards' && guards.direction === 'DtoH');
  assert.ok(restore.kind === 'memset' && restore.why === 'guard');
  const x = outcome.result!.memory!.find((m) => m.buffer === 'x')!;
  assert.equal(restore.address, `0x${(BigInt(x.address) + BigInt(x.bytes)).toString(16)}`);
  assert.equal(restore.bytes, plan.checks.guardBytes);
});

test('a fault that kills the context: the failed launch is the last event, and no teardown is attempted', async () => {
  const { plan: raw, planPath } = await loadSample('null-pointer', 'broken');
  const { outcome, plan, before, after: afterMs } = await run(raw, planPath);
  assert.equal(outcome.result!.failure?.sticky, true);
  const events = checkCommon(outcome, plan, before, afterMs);
  const last = events.at(-1)!;
  assert.ok(last.kind === 'error');
  assert.deepEqual([last.api, last.error.name, last.phase], ['cuCtxSynchronize', 'CUDA_ERROR_ILLEGAL_ADDRESS', 'run']);
  assert.ok(!events.some((e) => e.phase === 'teardown'));
});
