import assert from 'node:assert/strict';
import { test } from 'node:test';

import { checkRunForTimeline, RunLogError } from '../../core/memory/run-log-schema';
import { NoEventLogError, STEP_ORDER_US, timelineFromRun } from '../../core/memory/run-timeline';
import { SPAN_LANES, type Timeline } from '../../core/memory/timeline';
import { aliveAtEnd, peakOf } from '../../core/memory/timeline-model';
import { decodeTimeline, encodeTimeline } from '../../core/memory/timeline-wire';
import type { RunResult } from '../../core/runner/run-result';
import { GUARD, H100_TOTAL, legacyRun, MiB, recordedRun, samplesAround, STARTED_AT_MS, withEventLog } from '../helpers/run-log';

// The runs are real H100 results (test/fixtures/runs); their event logs are written by hand in test/helpers/run-log.ts
// (none of the recorded results has one yet), from each result's own steps and timings.

const spansOf = (t: Timeline, lane: (typeof SPAN_LANES)[number]) => {
  const out: { label: string; start: number; end: number; step: number }[] = [];
  for (let i = 0; i < t.spans.count; i++) {
    if (SPAN_LANES[t.spans.lane[i]!] !== lane) continue;
    out.push({ label: t.labels[t.spans.label[i]!]!, start: t.spans.start[i]!, end: t.spans.end[i]!, step: t.spans.step[i]! });
  }
  return out;
};

function neverFrees(): RunResult {
  const run = recordedRun('never-frees');
  const buffer = (name: string, k: number) => ({ buffer: name, address: `0x7f3a0${k}e00100`, bytes: 4 * MiB });
  return withEventLog(run, [
    { op: 'alloc', ...buffer('a', 1) },
    { op: 'alloc', ...buffer('b', 2) },
    { op: 'alloc', ...buffer('c', 3) },
    { op: 'upload', buffer: 'a', bytes: 4 * MiB },
    { op: 'upload', buffer: 'b', bytes: 4 * MiB },
    { op: 'launch' },
    { op: 'download', buffer: 'c', bytes: 4 * MiB },
  ]);
}

test('never-frees: three 4 MiB buffers from their alloc to the end, each a leak with the step that made it', () => {
  const run = neverFrees();
  const t = timelineFromRun(run);
  assert.equal(t.source, 'run');
  assert.equal(t.device, 0);
  assert.equal(t.originUs, STARTED_AT_MS * 1000);
  assert.equal(t.allocations.count, 3);
  assert.deepEqual([...t.allocations.size], [4 * MiB, 4 * MiB, 4 * MiB]);
  assert.deepEqual([...t.allocations.address], [0x7f3a01e00100, 0x7f3a02e00100, 0x7f3a03e00100]);
  assert.deepEqual([...t.allocations.step], [0, 1, 2]);
  assert.deepEqual(
    [...t.allocations.label].map((l) => t.labels[l]),
    ['a', 'b', 'c'],
  );
  // Freed only by the workbench's teardown: alive to the end.
  assert.deepEqual([...t.allocations.end], [Infinity, Infinity, Infinity]);
  const first = run.events!.find((e) => e.kind === 'alloc')!;
  assert.equal(t.allocations.start[0], first.t * 1000);

  const leaks = t.markers.filter((m) => m.kind === 'leak');
  assert.deepEqual(
    leaks.map((m) => [m.label, m.step, m.allocation]),
    [
      ['leak: a (4 MiB) never freed', 0, 0],
      ['leak: b (4 MiB) never freed', 1, 1],
      ['leak: c (4 MiB) never freed', 2, 2],
    ],
  );
  assert.match(
    leaks[0]!.detail,
    /allocated at step 1 \(alloc a\) and never freed by the plan\. The workbench freed it when the run ended\. Add a free step for a/,
  );
  const teardown = run.events!.find((e) => e.phase === 'teardown')!;
  assert.ok(
    leaks.every((m) => m.timeUs === teardown.t * 1000),
    'leaks are marked where the plan ended',
  );

  const peak = t.markers.find((m) => m.kind === 'peak')!;
  assert.equal(peak.label, 'peak: 12 MiB in 3 buffers');
  assert.equal(peak.timeUs, t.allocations.start[2]);
  assert.match(peak.detail, new RegExp(`the workbench's guard bytes included`));
  assert.equal(peakOf(t)!.bytes, 12 * MiB);
  assert.equal(t.markers.filter((m) => m.kind === 'error' || m.kind === 'oom').length, 0);

  const [allocated] = t.counters;
  assert.equal(allocated!.group, 'allocated');
  assert.deepEqual([...allocated!.value], [0, 4 * MiB, 8 * MiB, 12 * MiB], 'the teardown frees do not lower it');
  assert.deepEqual(
    t.steps.map((s) => s.label),
    run.steps.map((s) => s.label),
  );
});

test('never-frees: copies, memsets, the launch on the GPU clock, the sync and the module load are spans on their lanes', () => {
  const run = neverFrees();
  const t = timelineFromRun(run);
  assert.deepEqual(
    spansOf(t, 'copy').map((s) => [s.label, s.step]),
    [
      ['HtoD a', 3],
      ['HtoD b', 4],
      ['DtoH c', 6],
    ],
  );
  assert.deepEqual(
    spansOf(t, 'memset').map((s) => s.label),
    ['memset a (poison)', 'memset b (poison)', 'memset c (poison)'],
  );
  const [kernel] = spansOf(t, 'kernel');
  const launch = run.events!.find((e) => e.kind === 'launch');
  assert.ok(launch?.kind === 'launch');
  assert.equal(kernel!.label, 'vecAdd');
  assert.equal(kernel!.start, launch.gpu[0]!.startMs * 1000);
  assert.ok(Math.abs(kernel!.end - kernel!.start - run.launches[0]!.medianMs * 1000) < 1e-6, 'the GPU’s own duration, not the host call’s');
  assert.deepEqual(
    spansOf(t, 'module').map((s) => [s.label, s.step]),
    [['load add', -1]],
  );
  assert.equal(spansOf(t, 'sync').length, 1);
  assert.ok(t.durationUs >= Math.max(...[...t.spans.end]));
});

test('a launch the GPU did not time is drawn over the host call; a phase other than the run is named', () => {
  const run = neverFrees();
  const events = run.events!.map((e) => (e.kind === 'launch' ? { ...e, gpu: [], phase: 'determinism' as const } : e));
  const t = timelineFromRun({ ...run, events });
  const launch = events.find((e) => e.kind === 'launch')!;
  const [kernel] = spansOf(t, 'kernel');
  assert.equal(kernel!.label, 'vecAdd (determinism replay)');
  assert.equal(kernel!.start, launch.t * 1000);
  assert.equal(kernel!.end, (launch.t + launch.dur) * 1000);
});

test('with NVML samples: the device’s used memory and each process on the run’s axis, the foreign process flagged', () => {
  const run = neverFrees();
  const samples = samplesAround({
    runnerPid: run.runnerPid,
    runnerBytes: (ms) => (ms > 0 ? 500 * MiB + 12 * MiB : 0),
    foreignBytes: 30 * 1024 * MiB,
    untilMs: 60,
  });
  const t = timelineFromRun(run, samples);
  // The first sample was taken 5 ms before the run began: it is time 0, and the run starts 5 ms in.
  assert.equal(t.originUs, STARTED_AT_MS * 1000 - 5000);
  assert.equal(t.allocations.start[0], 5000 + run.events!.find((e) => e.kind === 'alloc')!.t * 1000);
  const device = t.counters.find((c) => c.group === 'device')!;
  assert.equal(device.id, 'device:0:used');
  assert.equal(device.capacity, H100_TOTAL);
  assert.equal(device.time[0], 0);
  assert.deepEqual(
    t.counters.filter((c) => c.group === 'device').map((c) => c.id),
    ['device:0:used'],
    'a run shows used memory, not free',
  );
  const processes = t.counters.filter((c) => c.group === 'process');
  assert.deepEqual(
    processes.map((p) => [p.pid, p.label, p.flag?.kind ?? null]),
    [
      [4242, 'pid 4242 · python train.py --batch 512', 'foreign'],
      [run.runnerPid, `pid ${run.runnerPid} · node dist/main/runner.js`, null],
    ],
  );
  const runner = processes.find((p) => p.pid === run.runnerPid)!;
  assert.equal(runner.time[0], 10_000, 'first listed at the sample 5 ms after the run began');
  assert.equal(t.durationUs, 60_000, 'the timeline reaches the last sample, 55 ms after the run began');
});

test('samples with a result that does not say when the run began: not drawn, and the title says why', () => {
  const run = neverFrees();
  const { startedAtMs: _dropped, ...undated } = run;
  const t = timelineFromRun(undated, samplesAround({ runnerPid: run.runnerPid, runnerBytes: () => MiB, foreignBytes: 0, untilMs: 20 }));
  assert.deepEqual(
    t.counters.map((c) => c.group),
    ['allocated'],
  );
  assert.match(t.title, /the NVML samples are not shown: the result does not say when the run began/);
  assert.equal(t.originUs, 0);
});

test('allocation-too-large: an OOM marker with the request against free and total, the holders (none of the run’s), and the processes', () => {
  const run = recordedRun('allocation-too-large');
  const failure = run.failure!;
  const withLog = withEventLog(run, [{ op: 'alloc', buffer: 'x', address: '0x0', bytes: failure.memory!.requestedBytes }], {
    failAtStep: 0,
    error: { kind: 'error', t: 0, dur: 5.5, step: 0, phase: 'run', api: failure.error.api, error: failure.error, memory: failure.memory },
  });
  const samples = samplesAround({ runnerPid: run.runnerPid, runnerBytes: () => 500 * MiB, foreignBytes: 0, untilMs: 20 });
  const t = timelineFromRun(withLog, samples);
  assert.equal(t.allocations.count, 0);
  const ooms = t.markers.filter((m) => m.kind === 'oom');
  assert.equal(ooms.length, 1);
  assert.equal(t.markers.filter((m) => m.kind === 'error').length, 0, 'one marker for the failure, not two');
  const [oom] = ooms;
  assert.equal(oom!.label, 'out of memory: asked 256 GiB, 78.15 GiB free of 79.18 GiB');
  assert.equal(oom!.step, 0);
  assert.match(oom!.detail, /cuMemAlloc_v2 failed with CUDA_ERROR_OUT_OF_MEMORY at step 1 \(alloc x\)\./);
  assert.match(oom!.detail, /\(3\.28× what was free\)/);
  assert.match(oom!.detail, /This run held nothing on the device at that moment\./);
  assert.match(
    oom!.detail,
    new RegExp(
      `Processes holding device memory \\(NVML, sampled [\\d.]+ ms before\\):\\n  pid ${run.runnerPid} \\(node dist/main/runner.js\\) on GPU 0: 500 MiB`,
    ),
  );
  assert.match(oom!.detail, /What to do:\n {2}Compare the request with free and total memory/);
  assert.equal(t.markers.filter((m) => m.kind === 'leak').length, 0, 'a failed run’s buffers are not called leaks');
});

test('an OOM after two allocations: the run’s own buffers are the holders', () => {
  const run = recordedRun('never-frees');
  const error = {
    library: 'cuda',
    api: 'cuMemAlloc_v2',
    code: 2,
    name: 'CUDA_ERROR_OUT_OF_MEMORY',
    message: 'cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)',
  };
  const memory = { requestedBytes: 80 * 1024 * MiB, freeBytes: 70 * 1024 * MiB, totalBytes: H100_TOTAL };
  const failed = withEventLog(
    { ...run, ok: false, failure: { stepIndex: 2, op: 'alloc', kernel: null, error, sticky: false, memory } },
    [
      { op: 'alloc', buffer: 'a', address: '0x7f3a01e00100', bytes: 4 * MiB },
      { op: 'alloc', buffer: 'b', address: '0x7f3a02e00100', bytes: 1024 * MiB },
      { op: 'alloc', buffer: 'c', address: '0x0', bytes: memory.requestedBytes },
    ],
    { failAtStep: 2, error: { kind: 'error', t: 0, dur: 0.2, step: 2, phase: 'run', api: 'cuMemAlloc_v2', error, memory } },
  );
  const t = timelineFromRun(failed);
  const oom = t.markers.find((m) => m.kind === 'oom')!;
  assert.equal(oom.label, 'out of memory: asked 80 GiB, 70 GiB free of 79.18 GiB');
  assert.match(oom.detail, /This run held 2 buffers, 1 GiB:\n {2}b: 1 GiB, from step 2 \(alloc b\)\n {2}a: 4 MiB, from step 1 \(alloc a\)/);
  assert.deepEqual(
    [...aliveAtEnd(t)].map((i) => t.labels[t.allocations.label[i]!]),
    ['a', 'b'],
  );
});

test('use-after-free: the sticky fault decoded at its step; the freed buffer ends at its free; no leaks in a failed run', () => {
  const run = recordedRun('use-after-free');
  const failure = run.failure!;
  const x = { buffer: 'x', address: '0x7f3a0c800100', bytes: 64 * MiB };
  const t = timelineFromRun(
    withEventLog(run, [{ op: 'alloc', ...x }, { op: 'upload', buffer: 'x', bytes: x.bytes }, { op: 'launch' }, { op: 'free', ...x }, { op: 'launch' }], {
      failAtStep: 4,
      error: { kind: 'error', t: 0, dur: 174.7, step: 4, phase: 'run', api: failure.error.api, error: failure.error },
    }),
  );
  const [error] = t.markers.filter((m) => m.kind === 'error');
  assert.equal(error!.label, 'CUDA_ERROR_ILLEGAL_ADDRESS in cuCtxSynchronize');
  assert.equal(error!.step, 4);
  assert.match(error!.detail, /cuCtxSynchronize failed at step 5 \(launch scale<<<65536, 256>>>\): CUDA_ERROR_ILLEGAL_ADDRESS \(700\)\./);
  assert.match(error!.detail, /The error is sticky/);
  assert.ok(Number.isFinite(t.allocations.end[0]), 'x ended at its free');
  assert.equal(t.markers.filter((m) => m.kind === 'leak').length, 0);
});

test('a failure the log does not show (events dropped) is still marked, where the log ends, and the title says events were left out', () => {
  const run = recordedRun('use-after-free');
  const logged = withEventLog(run, [{ op: 'alloc', buffer: 'x', address: '0x7f3a0c800100', bytes: MiB }]);
  const t = timelineFromRun({ ...logged, eventsDropped: 12 });
  const [error] = t.markers.filter((m) => m.kind === 'error');
  assert.equal(error!.label, 'CUDA_ERROR_ILLEGAL_ADDRESS in cuCtxSynchronize');
  assert.match(t.title, /12 events past the first 100000 were not recorded/);
});

test('an older result with allocation records only: the steps in order, one a millisecond, and the title says so', () => {
  const run = recordedRun('divergent-barrier');
  assert.equal(run.events, undefined);
  const t = timelineFromRun(run);
  assert.match(t.title, /no event log: the steps in order, one a millisecond, not to time/);
  assert.deepEqual([...t.allocations.start], [0, STEP_ORDER_US]);
  assert.deepEqual([...t.allocations.end], [5 * STEP_ORDER_US, 6 * STEP_ORDER_US]);
  assert.deepEqual([...t.allocations.address], [0x7f3a0c800100, 0x7f3a07e00100]);
  assert.equal(peakOf(t)!.bytes, 4 * MiB + 16 * 1024);
  assert.equal(t.markers.filter((m) => m.kind === 'leak').length, 0);
  assert.deepEqual(
    spansOf(t, 'kernel').map((s) => [s.label, s.start]),
    [['launch blockSums<<<4096, 256>>>', 3 * STEP_ORDER_US]],
  );
  assert.deepEqual([...t.counters[0]!.value], [0, 4 * MiB, 4 * MiB + 16 * 1024, 16 * 1024, 0]);
  assert.equal(t.durationUs, 7 * STEP_ORDER_US);
});

test('a result with neither an event log nor allocation records is refused in words, not drawn empty', () => {
  const run = legacyRun('device-assert.before-memory-records.json');
  assert.equal(run.memory, undefined);
  assert.throws(
    () => timelineFromRun(run),
    (e: unknown) => e instanceof NoEventLogError && /no event log and no allocation records.*Run the plan again/.test(e.message),
  );
});

test('a run’s timeline crosses the wire whole', () => {
  const run = neverFrees();
  const t = timelineFromRun(run, samplesAround({ runnerPid: run.runnerPid, runnerBytes: () => 12 * MiB + 6 * GUARD, foreignBytes: MiB, untilMs: 50 }));
  const back = decodeTimeline(structuredClone(encodeTimeline(t)));
  assert.deepEqual(back, { ...t, sourceFile: null });
});

test('recorded on the H100 with the runner’s own event log: never-frees leaks a, b and c (4 MiB each); allocation-too-large is an OOM of 256 GiB against what was free', () => {
  const leaks = timelineFromRun(recordedRun('never-frees')).markers.filter((m) => m.kind === 'leak');
  for (const buffer of ['a', 'b', 'c'])
    assert.ok(
      leaks.some((m) => m.label.includes(`${buffer} (4 MiB) never freed`)),
      `${buffer}: ${leaks.map((m) => m.label).join(' | ')}`,
    );
  const oomRun = recordedRun('allocation-too-large');
  const ooms = timelineFromRun(oomRun).markers.filter((m) => m.kind === 'oom');
  assert.equal(ooms.length, 1);
  assert.equal(oomRun.failure!.memory!.requestedBytes, 256 * 1024 ** 3, 'the plan asks for 256 GiB');
  assert.match(ooms[0]!.label, /256 GiB/);
  assert.match(ooms[0]!.label + ooms[0]!.detail, /78\.15 GiB free/);
});

test('an edited event log still crosses the wire: an event timed before the one before it; times past any run are refused in words', () => {
  // The reader fuzz's cases (test/integration/reader-fuzz.test.ts): a counter that went back in time, and an origin of
  // 1e308 ms (Infinity in microseconds, null in JSON), were drawn, then refused by the view.
  const run = neverFrees();
  const events = run.events!.map((e) => ({ ...e }));
  const [first, second] = events.flatMap((e, i) => (e.kind === 'alloc' ? [i] : []));
  events[first!] = { ...events[first!]!, t: 10 };
  events[second!] = { ...events[second!]!, t: 5 };
  const t = decodeTimeline(structuredClone(encodeTimeline(timelineFromRun({ ...run, events }))));
  assert.deepEqual([...t.allocations.start.slice(0, 2)], [10_000, 10_000], 'the second is drawn at the first’s time');
  assert.throws(
    () => checkRunForTimeline({ ...run, startedAtMs: 1e308 }),
    (e: unknown) => e instanceof RunLogError && /startedAtMs/.test(e.message),
  );
  assert.throws(
    () => checkRunForTimeline({ ...run, events: [{ ...events[0]!, t: 1e300 }] }),
    (e: unknown) => e instanceof RunLogError && /events\.0\.t/.test(e.message),
  );
});
