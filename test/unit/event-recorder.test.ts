import assert from 'node:assert/strict';
import { test } from 'node:test';

import { MAX_RUN_EVENTS, MAX_RUN_GPU_TIMES } from '../../core/runner/event-log';
import { RunEventRecorder } from '../../core/runner/event-recorder';
import { runLogEventSchema, savedEventLogFields } from '../../core/runner/event-log-schema';
import { resultFileText } from '../../core/runner/result-file';
import type { CudaErrorInfo } from '../../core/runner/run-result';

/** A clock the test moves by hand. */
function manualClock(start = 1000) {
  let now = start;
  return { clock: () => now, advance: (ms: number) => (now += ms) };
}

const oom: CudaErrorInfo = { library: 'cuda', api: 'cuMemAlloc_v2', code: 2, name: 'CUDA_ERROR_OUT_OF_MEMORY', message: 'out of memory' };

test('events carry the phase and step current when recorded, host times since the run began, and a duration from begin()', () => {
  const { clock, advance } = manualClock(500);
  const log = new RunEventRecorder(clock, 500);
  log.phase = 'load';
  advance(1);
  log.begin();
  advance(2.5);
  log.moduleLoad('add', 4096);
  log.phase = 'run';
  log.step = 0;
  log.begin();
  advance(0.0123456);
  log.alloc('a', '0x7f0000000100', 4096, 4608);
  log.step = 1;
  log.begin();
  advance(0.5);
  log.copy('HtoD', 'a', 4096, 'data');
  log.step = 2;
  log.begin();
  advance(1);
  log.launch('add', 'vecAdd', [4, 1, 1], [256, 1, 1], 0, [{ startMs: 4.123456789, endMs: 4.987654321 }]);
  log.begin();
  log.copy('DtoH', null, 1024, 'guards');
  log.step = 3;
  log.begin();
  log.sync();
  log.phase = 'teardown';
  log.step = null;
  log.begin();
  log.free('a', '0x7f0000000100', 4096, 4608);

  const { events, eventsDropped } = log.finish();
  assert.equal(eventsDropped, 0);
  assert.deepEqual(
    events.map((e) => [e.kind, e.phase, e.step]),
    [
      ['module-load', 'load', null],
      ['alloc', 'run', 0],
      ['copy', 'run', 1],
      ['launch', 'run', 2],
      ['copy', 'run', 2],
      ['sync', 'run', 3],
      ['free', 'teardown', null],
    ],
  );
  assert.deepEqual(events[0], { t: 1, dur: 2.5, step: null, phase: 'load', kind: 'module-load', kernel: 'add', imageBytes: 4096 });
  // Host times to the microsecond, GPU times to a tenth of one.
  assert.equal(events[1]!.t, 3.5);
  assert.equal(events[1]!.dur, 0.012);
  const launch = events[3]!;
  assert.equal(launch.kind, 'launch');
  if (launch.kind === 'launch') assert.deepEqual(launch.gpu, [{ startMs: 4.1235, endMs: 4.9877 }]);
  assert.equal('gpuDropped' in launch, false);
  for (const e of events) assert.ok(runLogEventSchema.safeParse(e).success, JSON.stringify(e));
});

test('a failure: timed from its begin() when a call was under way, an instant otherwise; the caller adds the memory figures', () => {
  const { clock, advance } = manualClock();
  const log = new RunEventRecorder(clock, 1000);
  log.step = 0;
  advance(2);
  log.begin();
  advance(3);
  const failed = log.error(oom);
  assert.ok(failed);
  assert.deepEqual([failed.t, failed.dur, failed.api], [2, 3, 'cuMemAlloc_v2']);
  failed.memory = { requestedBytes: 2 ** 38, freeBytes: 1e9, totalBytes: 8e10 };
  assert.deepEqual(log.events[0], failed);
  // A failure the workbench found before any call (a buffer used before its alloc): no stale begin() is used.
  advance(1);
  const planError = log.error({ library: 'workbench', api: 'cuLaunchKernel', code: -1, name: 'WORKBENCH_PLAN_ERROR', message: 'x' });
  assert.deepEqual([planError!.t, planError!.dur], [6, 0]);
  // A cache hit made no call: skip() leaves nothing pending for the next failure.
  log.begin();
  advance(4);
  log.skip();
  const after = log.error(oom);
  assert.deepEqual([after!.t, after!.dur], [10, 0]);
});

test('past the cap, events are counted, not kept: a plan with repeats and replays cannot grow its result without bound', () => {
  const { clock, advance } = manualClock();
  const log = new RunEventRecorder(clock, 1000, { events: 5, gpuTimes: 100 });
  for (let i = 0; i < 12; i++) {
    log.begin();
    advance(0.001);
    log.sync();
  }
  assert.equal(log.error(oom), null, 'a full log has no room for the failure either');
  const { events, eventsDropped } = log.finish();
  assert.equal(events.length, 5);
  assert.equal(eventsDropped, 8);
  assert.deepEqual(
    events.map((e) => e.t),
    [0, 0.001, 0.002, 0.003, 0.004],
  );
});

test('GPU placements are bounded across all launches of a run, and what was left out is counted on the launch', () => {
  const { clock } = manualClock();
  const log = new RunEventRecorder(clock, 1000, { events: 100, gpuTimes: 10 });
  const spans = (n: number) => Array.from({ length: n }, (_, i) => ({ startMs: i, endMs: i + 0.5 }));
  for (let i = 0; i < 3; i++) {
    log.begin();
    log.launch('k', 'k', [1, 1, 1], [32, 1, 1], 0, spans(4));
  }
  const launches = log.events.filter((e) => e.kind === 'launch');
  assert.deepEqual(
    launches.map((e) => [e.gpu.length, e.gpuDropped]),
    [
      [4, undefined],
      [4, undefined],
      [2, 2],
    ],
  );
  assert.ok(MAX_RUN_GPU_TIMES >= MAX_RUN_EVENTS / 10, 'the defaults leave room for a placement per launch of a full log');
});

/**
 * A full log of the shape a real run makes (allocs, uploads, launches with a placement each, guard reads,
 * frees; long buffer and kernel names, addresses and times in the replays): what it costs as JSON, the
 * way it crosses to the host and the renderer, and as a saved result file.
 */
function fullLog() {
  let now = 0;
  const log = new RunEventRecorder(() => now, 0);
  log.phase = 'determinism';
  for (let i = 0; log.events.length < MAX_RUN_EVENTS; i++) {
    now += 0.0123456789;
    log.step = i % 10_000;
    log.begin();
    now += 0.0087654321;
    switch (i % 5) {
      case 0:
        log.alloc('input_values', '0x7f3a12345600', 4_194_304, 4_194_816);
        break;
      case 1:
        log.copy('HtoD', 'input_values', 4_194_304, 'data');
        break;
      case 2:
        log.launch('vector_add', 'vecAdd', [4096, 1, 1], [256, 1, 1], 0, [{ startMs: now - 0.0061234, endMs: now - 0.0012345 }]);
        break;
      case 3:
        log.copy('DtoH', null, 1536, 'guards');
        break;
      default:
        log.free('input_values', '0x7f3a12345600', 4_194_304, 4_194_816);
    }
  }
  log.sync(); // one past the cap
  return log.finish();
}

test('a full 100,000-event log: its JSON size over IPC and in a result file, and what validating it costs', () => {
  const { events, eventsDropped } = fullLog();
  assert.equal(events.length, MAX_RUN_EVENTS);
  assert.equal(eventsDropped, 1);
  const compact = JSON.stringify({ events }).length;
  const indented = JSON.stringify({ result: { events } }, null, 2).length;
  const saved = resultFileText({ result: { events } });
  console.log(
    `# 100,000 events: ${(compact / 1e6).toFixed(1)} MB as JSON (${(compact / events.length).toFixed(0)} bytes an event), ` +
      `${(saved.length / 1e6).toFixed(1)} MB as a result file (one line an event), ${(indented / 1e6).toFixed(1)} MB indented field by field`,
  );
  // The figures this was designed to: under 20 MB on the wire (serve's 40 MiB message limit), and a
  // result file well inside MAX_RESULT_FILE_BYTES (64 MiB).
  assert.ok(compact < 20e6, `${compact} bytes`);
  assert.ok(saved.length < compact * 1.1, `${saved.length} bytes`);
  assert.equal(saved.split('\n').length < events.length + 20, true, 'one line an event');
  const started = performance.now();
  const parsed = savedEventLogFields.events.safeParse(JSON.parse(saved).result.events);
  const ms = performance.now() - started;
  assert.ok(parsed.success);
  console.log(`# parsing and validating them: ${ms.toFixed(0)} ms`);
});
