import assert from 'node:assert/strict';
import { test } from 'node:test';

import { buildMonitorReport, type SamplingStats } from '../../core/memory/monitor-report';
import { decodeNvmlBatch, decodeNvmlSample, NvmlSampleLayoutError, type NvmlBatchInput } from '../../core/memory/nvml-sample-layout';
import { SampleStore } from '../../core/memory/sample-store';
import { GROWTH_NOISE_BYTES, growthOf, SeriesSummarizer } from '../../core/memory/sample-summary';
import type { MemorySample } from '../../core/memory/samples';
import { renderMonitorReport } from '../../main/cli/render-monitor';
import { SamplerBatch } from '../../main/memory/memory-sampler';

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

/** A sampling thread's batch (native/src/monitor.cc, appendTo) of these samples. */
function threadBatch(samples: MemorySample[], deviceCount: number, reserved: number[] = Array(deviceCount).fill(NaN)): NvmlBatchInput {
  const rows: number[] = [];
  const listings: number[] = [];
  samples.forEach((s, row) => {
    rows.push(s.timeUs, ...s.devices.flatMap((d) => [d.usedBytes, d.freeBytes, d.totalBytes]));
    if (s.processes === null) return;
    listings.push(row);
    for (let device = 0; device < deviceCount; device++) {
      const on = s.processes.filter((p) => p.device === device);
      listings.push(0, on.length, ...on.flatMap((p) => [p.pid, p.usedBytes ?? NaN]));
    }
  });
  return {
    samples: samples.length,
    rows: Float64Array.from(rows),
    listings: Float64Array.from(listings),
    reserved: Float64Array.from(reserved),
    nativeUs: 50 * samples.length,
    processUs: 0,
  };
}

test('a batch from a sampling thread: rows as the store keeps them, listings apart, a device whose processes could not be listed', () => {
  const input: NvmlBatchInput = {
    samples: 3,
    rows: Float64Array.from([
      1e15,
      GiB,
      79 * GiB,
      80 * GiB,
      0,
      0,
      0,
      1e15 + 10_000,
      2 * GiB,
      78 * GiB,
      80 * GiB,
      0,
      0,
      0,
      1e15 + 20_000,
      3 * GiB,
      77 * GiB,
      80 * GiB,
      1,
      1,
      1,
    ]),
    // sample 1: GPU 0 lists 4242 (9 GiB) and 5151 (unknown), GPU 1 fails with NVML error 3
    listings: Float64Array.from([1, 0, 2, 4242, 9 * GiB, 5151, NaN, 3, 0]),
    reserved: Float64Array.from([512 * MiB, NaN]),
    nativeUs: 150,
    processUs: 40,
  };
  const batch = decodeNvmlBatch(input, 2);
  assert.equal(batch.count, 3);
  assert.equal(batch.nativeUs, 150);
  assert.deepEqual(batch.reservedBytes, [512 * MiB, null]);
  assert.deepEqual(batch.listings, [
    {
      row: 1,
      processes: [
        { device: 0, pid: 4242, usedBytes: 9 * GiB },
        { device: 0, pid: 5151, usedBytes: null },
      ],
      processErrors: [{ device: 1, code: 3 }],
    },
  ]);
  assert.deepEqual(batch.sample(2), {
    timeUs: 1e15 + 20_000,
    devices: [
      { index: 0, usedBytes: 3 * GiB, freeBytes: 77 * GiB, totalBytes: 80 * GiB },
      { index: 1, usedBytes: 1, freeBytes: 1, totalBytes: 1 },
    ],
    processes: null,
  });
  assert.equal(batch.sample(1).processes?.length, 2);
  assert.equal(decodeNvmlBatch({ ...input, samples: 0, rows: new Float64Array(0), listings: new Float64Array(0), reserved: new Float64Array(0) }, 2).count, 0);
});

test('a batch from a sampling thread that does not fit is refused: lengths, values, listings out of order or past the end', () => {
  const rows = Float64Array.from([1e15, GiB, 79 * GiB, 80 * GiB, 1e15 + 1, GiB, 79 * GiB, 80 * GiB]);
  const good: NvmlBatchInput = {
    samples: 2,
    rows,
    listings: Float64Array.from([0, 0, 1, 7, GiB]),
    reserved: Float64Array.from([0]),
    nativeUs: 1,
    processUs: 0,
  };
  assert.equal(decodeNvmlBatch(good, 1).listings.length, 1);
  const bad: [string, Partial<NvmlBatchInput>][] = [
    ['a count the rows do not fit', { samples: 3 }],
    ['a fractional count', { samples: 1.5 }],
    ['a negative value', { rows: Float64Array.from([1e15, -1, 0, 0, 1, 1, 1, 1]) }],
    ['NaN in a row', { rows: Float64Array.from([1e15, NaN, 0, 0, 1, 1, 1, 1]) }],
    ['Infinity in a row', { rows: Float64Array.from([Infinity, 1, 0, 0, 1, 1, 1, 1]) }],
    ['a listing of a sample past the count', { listings: Float64Array.from([2, 0, 0]) }],
    ['listings out of order', { listings: Float64Array.from([1, 0, 0, 0, 0, 0]) }],
    ['a listing that runs past the end', { listings: Float64Array.from([0, 0, 2, 7, GiB]) }],
    ['processes beside an error', { listings: Float64Array.from([0, 3, 1, 7, GiB]) }],
    ['a bad pid', { listings: Float64Array.from([0, 0, 1, 0, GiB]) }],
    ['a status below -1', { listings: Float64Array.from([0, -2, 0]) }],
    ['reserves for another device count', { reserved: Float64Array.from([0, 0]) }],
    ['a negative native time', { nativeUs: -1 }],
  ];
  for (const [why, change] of bad) assert.throws(() => decodeNvmlBatch({ ...good, ...change }, 1), NvmlSampleLayoutError, why);
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

/** Samples of two devices, with listings of 0–3 processes (in device order, as NVML lists them) on some and none on the rest. */
function mixedSamples(n: number): MemorySample[] {
  return Array.from({ length: n }, (_, i) =>
    sample(
      i / 100,
      [((i * 7919) % 1000) * MiB, 2 * i * MiB],
      i % 5 === 0 ? Array.from({ length: i % 4 }, (_, k) => [k < 2 ? 0 : 1, 100 + k, k === 2 ? null : (i + k) * MiB] as [number, number, number | null]) : null,
    ),
  );
}

test('rows from a sampling thread land in the store as pushing each sample would: past growth, past both bounds, batches of any size', () => {
  const samples = mixedSamples(3000);
  for (const limits of [
    undefined,
    { maxSamples: 700, maxProcessEntries: 100_000 },
    { maxSamples: 100_000, maxProcessEntries: 90 },
    { maxSamples: 64, maxProcessEntries: 5 },
  ]) {
    const pushed = new SampleStore(2, limits);
    for (const s of samples) pushed.push(s);
    const appended = new SampleStore(2, limits);
    let at = 0;
    for (const size of [0, 1, 100, 37, 1024, 900, 1, 2000]) {
      const part = samples.slice(at, at + size);
      const batch = decodeNvmlBatch(threadBatch(part, 2), 2);
      appended.appendRows(batch.rows, batch.count, batch.listings);
      at += part.length;
    }
    assert.equal(at, samples.length);
    const what = JSON.stringify(limits ?? 'default limits');
    assert.equal(appended.length, pushed.length, what);
    assert.equal(appended.dropped, pushed.dropped, what);
    assert.deepEqual([...appended.iterate()], [...pushed.iterate()], what);
  }
  const bigger = new SampleStore(1, { maxSamples: 10, maxProcessEntries: 100 });
  const one = mixedSamples(25).map((s) => ({ ...s, devices: s.devices.slice(0, 1), processes: s.processes?.filter((p) => p.device === 0) ?? null }));
  const batch = decodeNvmlBatch(threadBatch(one, 1), 1);
  bigger.appendRows(batch.rows, batch.count, batch.listings);
  assert.equal(bigger.length, 10, 'a batch larger than the bound keeps its newest rows');
  assert.equal(bigger.dropped, 15);
  assert.deepEqual(bigger.at(0), one[15]);
  assert.throws(() => bigger.appendRows(new Float64Array(3), 1, []), RangeError);
});

test('the summary of rows from a sampling thread is the summary of the same samples one by one', () => {
  const samples = mixedSamples(500);
  const one = new SeriesSummarizer();
  for (const s of samples) one.observe(s);
  const rows = new SeriesSummarizer();
  for (let at = 0; at < samples.length; at += 128) {
    const batch = decodeNvmlBatch(threadBatch(samples.slice(at, at + 128), 2), 2);
    rows.observeRows(batch.rows, batch.count, 2, batch.listings);
  }
  assert.equal(rows.samples, one.samples);
  assert.deepEqual(rows.devices(), one.devices());
  assert.deepEqual(rows.processes(), one.processes());
});

test('a batch handed to a listener makes sample objects only when asked, in order, timer samples first', () => {
  const samples = mixedSamples(30);
  const batches = [
    decodeNvmlBatch(threadBatch(samples.slice(10, 20), 2), 2),
    decodeNvmlBatch(threadBatch([], 2), 2),
    decodeNvmlBatch(threadBatch(samples.slice(20), 2), 2),
  ];
  let made = 0;
  for (const b of batches) {
    const make = b.sample.bind(b);
    b.sample = (i, processes) => {
      made++;
      return processes === undefined ? make(i) : make(i, processes);
    };
  }
  const batch = new SamplerBatch(samples.slice(0, 10), batches, []);
  assert.deepEqual(batch.first, samples[0]);
  assert.deepEqual(batch.latest, samples[29]);
  assert.equal(made, 1, 'first and latest make only the newest row an object');
  assert.deepEqual(batch.samples, samples);
  assert.equal(made, 21, 'the samples, once asked for, make each row once');
  assert.equal(batch.samples, batch.samples, 'made once');
  assert.equal(made, 21);
  const threadOnly = new SamplerBatch([], batches, []);
  assert.deepEqual(threadOnly.first, samples[10]);
  assert.deepEqual(threadOnly.latest, samples[29]);
  const empty = new SamplerBatch([], [], []);
  assert.equal(empty.first, null);
  assert.equal(empty.latest, null);
  assert.deepEqual(empty.samples, []);
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
