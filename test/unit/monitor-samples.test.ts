import assert from 'node:assert/strict';
import { test } from 'node:test';

import { buildMonitorReport, type SamplingStats } from '../../core/memory/monitor-report';
import { decodeNvmlSample, decodeNvmlSamples, NvmlSampleLayoutError } from '../../core/memory/nvml-sample-layout';
import { SampleStore } from '../../core/memory/sample-store';
import { GROWTH_NOISE_BYTES, growthOf, SeriesSummarizer } from '../../core/memory/sample-summary';
import type { MemorySample } from '../../core/memory/samples';
import { renderMonitorReport } from '../../main/cli/render-monitor';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const TOTAL = 80 * GiB;

/** A sample of one or two devices, t in seconds. */
function sample(t: number, used: number[], processes: [number, number, number | null][] | null = []): MemorySample {
  return {
    timeUs: 1.7e15 + t * 1e6,
    devices: used.map((u, index) => ({ index, usedBytes: u, freeBytes: TOTAL - u, totalBytes: TOTAL })),
    processes: processes === null ? null : processes.map(([device, pid, usedBytes]) => ({ device, pid, usedBytes })),
  };
}

test('the NVML layout: devices, reserve, processes (NaN: unknown), a device whose processes could not be listed', () => {
  const data = Float64Array.from([
    1,
    1.7e15,
    85.5,
    40.25,
    2,
    // GPU 0: used, free, total, reserved, listed, 2 processes
    10 * GiB,
    70 * GiB,
    80 * GiB,
    512 * MiB,
    0,
    2,
    4242,
    9 * GiB,
    5151,
    NaN,
    // GPU 1: no v2 (reserve NaN), NVML error 3 listing processes
    1 * GiB,
    79 * GiB,
    80 * GiB,
    NaN,
    3,
    0,
  ]);
  const d = decodeNvmlSample(data);
  assert.equal(d.sample.timeUs, 1.7e15);
  assert.equal(d.nativeUs, 85.5);
  assert.equal(d.processUs, 40.25);
  assert.deepEqual(d.sample.devices[1], { index: 1, usedBytes: GiB, freeBytes: 79 * GiB, totalBytes: 80 * GiB });
  assert.deepEqual(d.reservedBytes, [512 * MiB, null]);
  assert.deepEqual(d.sample.processes, [
    { device: 0, pid: 4242, usedBytes: 9 * GiB },
    { device: 0, pid: 5151, usedBytes: null },
  ]);
  assert.deepEqual(d.processErrors, [{ device: 1, code: 3 }]);
  // Processes not asked for: null, not an empty list (which would say "none hold memory").
  assert.equal(decodeNvmlSample(Float64Array.from([1, 1, 0, 0, 1, 1, 2, 3, NaN, -1, 0])).sample.processes, null);
});

test('the sampling thread hands over samples end to end: each read in turn, and a count that does not fit is refused', () => {
  const one = [1, 1e15, 5, 0, 1, GiB, 79 * GiB, 80 * GiB, NaN, -1, 0];
  const two = [1, 1e15 + 10_000, 7, 3, 1, 2 * GiB, 78 * GiB, 80 * GiB, NaN, 0, 1, 4242, GiB];
  const decoded = decodeNvmlSamples(Float64Array.from([...one, ...two]), 2);
  assert.deepEqual(
    decoded.map((d) => [d.sample.timeUs, d.sample.devices[0]!.usedBytes, d.sample.processes?.length ?? null]),
    [
      [1e15, GiB, null],
      [1e15 + 10_000, 2 * GiB, 1],
    ],
  );
  assert.deepEqual(decodeNvmlSamples(new Float64Array(0), 0), []);
  assert.throws(() => decodeNvmlSamples(Float64Array.from([...one, ...two]), 1), /values after sample 1/);
  assert.throws(() => decodeNvmlSamples(Float64Array.from(one), 2), NvmlSampleLayoutError);
});

test('the NVML layout refuses what does not fit: a wrong layout, counts past the end, values after the end, bad pids', () => {
  const bad: number[][] = [
    [2, 1, 0, 0, 0],
    [1, 1, 0, 0, 1],
    [1, 1, 0, 0, 1, 1, 2, 3, 0, 0, 1],
    [1, 1, 0, 0, 1, 1, 2, 3, 0, 0, 1, 0, 5],
    [1, 1, 0, 0, 1, 1, 2, 3, 0, 0, 1, 1.5, 5],
    [1, 1, 0, 0, 1, 1, 2, 3, 0, 3, 1, 7, 5],
    [1, 1, 0, 0, 1, -1, 2, 3, 0, -1, 0],
    [1, 1, 0, 0, 1, 1, 2, 3, 0, 0, 0, 99],
    [1, 1, 0, 0, 2.5],
  ];
  for (const values of bad) assert.throws(() => decodeNvmlSample(values), NvmlSampleLayoutError, JSON.stringify(values));
});

test('the store gives back what was pushed, processes and all, past its first growth', () => {
  const store = new SampleStore(2);
  for (let i = 0; i < 3000; i++)
    store.push(sample(i / 100, [i * MiB, 2 * i * MiB], i % 3 === 0 ? null : Array.from({ length: i % 3 }, (_, k) => [k, 100 + k, k ? null : i * MiB])));
  assert.equal(store.length, 3000);
  assert.equal(store.dropped, 0);
  assert.deepEqual(store.at(0), sample(0, [0, 0], null));
  assert.deepEqual(store.at(2998), sample(29.98, [2998 * MiB, 5996 * MiB], [[0, 100, 2998 * MiB]]));
  assert.deepEqual(
    store.at(1001),
    sample(
      10.01,
      [1001 * MiB, 2002 * MiB],
      [
        [0, 100, 1001 * MiB],
        [1, 101, null],
      ],
    ),
  );
  assert.equal([...store.iterate(2990)].length, 10);
  assert.deepEqual(store.newest(1)[0], store.at(2999));
  assert.throws(() => store.at(3000), RangeError);
  assert.throws(() => store.push(sample(1, [1])), RangeError, 'a sample of another device count');
});

test('the ring: past maxSamples the oldest go and are counted; past maxProcessEntries too', () => {
  const store = new SampleStore(1, { maxSamples: 1000, maxProcessEntries: 10_000 });
  for (let i = 0; i < 2500; i++) store.push(sample(i, [i], [[0, 7, i]]));
  assert.equal(store.length, 1000);
  assert.equal(store.dropped, 1500);
  assert.equal(store.at(0).devices[0]!.usedBytes, 1500);
  assert.deepEqual(store.at(999).processes, [{ device: 0, pid: 7, usedBytes: 2499 }]);
  const before = store.bytes();
  for (let i = 2500; i < 5000; i++) store.push(sample(i, [i], [[0, 7, i]]));
  assert.equal(store.bytes(), before, 'at its bound the store stops growing');

  const byProcesses = new SampleStore(1, { maxSamples: 1000, maxProcessEntries: 50 });
  for (let i = 0; i < 40; i++)
    byProcesses.push(
      sample(
        i,
        [i],
        Array.from({ length: 5 }, (_, k) => [0, 10 + k, i] as [number, number, number]),
      ),
    );
  assert.equal(byProcesses.length, 10, '50 entries hold 10 samples of 5 processes');
  assert.equal(byProcesses.dropped, 30);
  assert.equal(byProcesses.at(0).timeUs, sample(30, [0]).timeUs);
  assert.equal(byProcesses.at(9).processes!.length, 5);
});

test('the summary covers every sample, also those the store dropped: baseline, peak and when, end, least free', () => {
  const store = new SampleStore(1, { maxSamples: 10, maxProcessEntries: 100 });
  const summary = new SeriesSummarizer();
  const used = [500, 520, 3000, 2900, 600, 600, 600, 600, 600, 600, 600, 600, 610].map((u) => u * MiB);
  used.forEach((u, i) => {
    const s = sample(i * 0.1, [u]);
    store.push(s);
    summary.observe(s);
  });
  assert.equal(store.dropped, 3, 'the peak has left the store');
  const [d] = summary.devices();
  assert.equal(d!.baselineUsedBytes, 500 * MiB);
  assert.equal(d!.peakUsedBytes, 3000 * MiB);
  assert.equal(d!.peakAtUs, sample(0.2, [0]).timeUs);
  assert.equal(d!.endUsedBytes, 610 * MiB);
  assert.equal(d!.minFreeBytes, TOTAL - 3000 * MiB);
  assert.equal(d!.samples, 13);
  assert.equal(summary.samples, 13);
});

test('growth: a leak grows and never falls; a working set goes up and down; noise holds steady; unknown is said', () => {
  const summary = new SeriesSummarizer();
  for (let i = 0; i <= 30; i++)
    summary.observe(
      sample(
        i / 10,
        [GiB],
        [
          [0, 100, 300 * MiB + i * 10 * MiB], // appends 10 MiB every 100 ms
          [0, 200, (i % 2 ? 900 : 500) * MiB + i * MiB], // up and down, slowly up
          [0, 300, 700 * MiB + (i % 3) * 4096], // allocator noise
          [0, 400, null], // NVML cannot size it
          [0, 500, (800 - i * 5) * MiB], // frees
        ],
      ),
    );
  summary.observe(sample(3.1, [GiB], [[1, 100, 5 * MiB]]));
  const trends = summary.processes();
  const of = (pid: number, device = 0) => growthOf(trends.find((t) => t.pid === pid && t.device === device)!);
  const leak = of(100);
  assert.equal(leak.bytes, 300 * MiB);
  assert.ok(leak.steady);
  assert.match(leak.text, /^grew by 300 MiB over 3\.0 s, steadily \(30 rises, never down\): a leak looks like this$/);
  const saw = of(200);
  assert.equal(saw.steady, false);
  assert.match(saw.text, /grew by 30 MiB over 3\.0 s \(15 rises, 15 falls\)/);
  assert.match(of(300).text, /^held steady over 3\.0 s$/);
  assert.ok(Math.abs(of(300).bytes) < GROWTH_NOISE_BYTES);
  assert.match(of(400).text, /NVML did not report its memory/);
  assert.match(of(500).text, /^shrank by 150 MiB over 3\.0 s$/);
  assert.match(of(100, 1).text, /seen in one sample only/);
  const noisy = trends.find((t) => t.pid === 400)!;
  assert.equal(noisy.unknownSamples, 31);
});

test('the report: flagged processes first, then by peak; the text says peak, growth, the flag and its fix', () => {
  const summary = new SeriesSummarizer();
  for (let i = 0; i <= 30; i++)
    summary.observe(
      sample(
        i / 10,
        [GiB + i * 10 * MiB],
        [
          [0, 4242, 300 * MiB + i * 10 * MiB],
          [0, 6000, 2 * GiB],
        ],
      ),
    );
  const origin = sample(0, [0]).timeUs;
  const sampling: SamplingStats = {
    intervalMs: 100,
    processIntervalMs: 100,
    mode: 'worker',
    samples: 31,
    kept: 31,
    skipped: 0,
    errors: 0,
    stalls: 0,
    meanNativeUs: 42,
  };
  const foreign = {
    kind: 'foreign' as const,
    text: 'PID 6000 holds 2 GiB on GPU 0, and neither the monitored program nor the workbench started it.',
    fix: 'Ask its owner (bob).',
  };
  const report = buildMonitorReport({
    startedAtUs: origin,
    endedAtUs: origin + 4e6,
    end: { kind: 'target-exited', pid: 4242, code: 0, signal: null },
    target: { pid: 4242, command: 'python3 leak.py', startedByMonitor: true, exit: { code: 0, signal: null }, stoppedByMonitor: false, leftBehind: [] },
    sampling,
    devices: [{ index: 0, name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-x', totalBytes: TOTAL }],
    reservedBytes: [512 * MiB],
    deviceTrends: summary.devices(),
    processTrends: summary.processes(),
    processes: [
      { pid: 4242, command: 'python3 leak.py', flag: null, firstSeenUs: origin, lastSeenUs: origin + 3e6 },
      { pid: 6000, command: 'python3 other.py', flag: foreign, firstSeenUs: origin, lastSeenUs: origin + 3e6 },
    ],
    relations: new Map([
      [4242, 'target' as const],
      [6000, 'other' as const],
    ]),
    series: { intervalMs: 100, devices: [], processes: [], samples: [], dropped: 0 },
    samplesIncluded: false,
    problems: ['An NVML sample failed once.'],
  });
  assert.deepEqual(
    report.processes.map((p) => p.pid),
    [6000, 4242],
  );
  assert.equal(report.devices[0]!.name, 'NVIDIA H100 80GB HBM3');
  assert.equal(report.devices[0]!.reservedBytes, 512 * MiB);
  const text = renderMonitorReport(report);
  assert.match(text, /Monitored python3 leak\.py \(PID 4242\) for 4\.0 s: it exited with code 0\./);
  assert.match(text, /used at the start 1 GiB · peak 1\.29 GiB at \+3\.0 s \(\+300 MiB\)/);
  assert.match(text, /PID 4242 {2}python3 leak\.py {2}\[the monitored process\]/);
  assert.match(text, /grew by 300 MiB over 3\.0 s, steadily/);
  assert.match(text, /! PID 6000 {2}python3 other\.py {2}\[FOREIGN\]/);
  assert.match(text, /→ Ask its owner \(bob\)\./);
  assert.match(text, /Problems:\n {2}- An NVML sample failed once\./);
  assert.match(text, /more was in use at the end than before the program started, although it has ended/);
});
