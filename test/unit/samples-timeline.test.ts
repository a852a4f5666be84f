import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { SampleSeries } from '../../core/memory/samples';
import { samplesToCsv } from '../../core/memory/samples-csv';
import { timelineFromSamples } from '../../core/memory/samples-timeline';
import { decodeTimeline, encodeTimeline } from '../../core/memory/timeline-wire';
import { H100_TOTAL, MiB } from '../helpers/run-log';

// A hand-made NVML series (no sampler has recorded one yet) with the H100's real total: two GPUs, a training job on
// GPU 0, a process that exited but still holds memory on GPU 1, and one sample where the driver listed no processes.
const GiB = 1024 * MiB;
const T0 = 1_795_435_200_000_000;

function series(): SampleSeries {
  const sample = (ms: number, train: number | null, zombie: boolean, listed = true) => ({
    timeUs: T0 + ms * 1000,
    devices: [
      { index: 0, usedBytes: GiB + (train ?? 0), freeBytes: H100_TOTAL - GiB - (train ?? 0), totalBytes: H100_TOTAL },
      { index: 1, usedBytes: zombie ? 3 * GiB : 0, freeBytes: H100_TOTAL - (zombie ? 3 * GiB : 0), totalBytes: H100_TOTAL },
    ],
    processes: listed
      ? [...(train !== null ? [{ device: 0, pid: 100, usedBytes: train }] : []), ...(zombie ? [{ device: 1, pid: 200, usedBytes: 3 * GiB }] : [])]
      : null,
  });
  return {
    intervalMs: 100,
    devices: [
      { index: 0, name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-a', totalBytes: H100_TOTAL },
      { index: 1, name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-b', totalBytes: H100_TOTAL },
    ],
    processes: [
      { pid: 100, command: '=cmd|calc, "train".py', flag: null, firstSeenUs: T0, lastSeenUs: T0 + 300_000 },
      {
        pid: 200,
        command: null,
        flag: { kind: 'exited', text: 'It is not in the process table, yet NVML still counts its memory.', fix: 'Reset the GPU when nothing else uses it.' },
        firstSeenUs: T0 + 100_000,
        lastSeenUs: T0 + 400_000,
      },
    ],
    samples: [sample(0, 2 * GiB, false), sample(100, 10 * GiB, true), sample(200, null, true, false), sample(300, 6 * GiB, true), sample(400, null, true)],
    dropped: 0,
  };
}

test('the monitor’s timeline: used and free per GPU against its total, a track per process and GPU, flags kept', () => {
  const t = timelineFromSamples(series(), 'Monitor');
  assert.equal(t.source, 'monitor');
  assert.equal(t.title, 'Monitor');
  assert.equal(t.device, null, 'two GPUs');
  assert.equal(t.originUs, T0);
  assert.equal(t.durationUs, 400_000);
  assert.deepEqual(
    t.counters.map((c) => [c.id, c.group, c.capacity ?? null]),
    [
      ['device:0:used', 'device', H100_TOTAL],
      ['device:0:free', 'device', H100_TOTAL],
      ['device:1:used', 'device', H100_TOTAL],
      ['device:1:free', 'device', H100_TOTAL],
      ['process:0:100', 'process', H100_TOTAL],
      ['process:1:200', 'process', H100_TOTAL],
    ],
  );
  const train = t.counters.find((c) => c.id === 'process:0:100')!;
  assert.equal(train.label, 'pid 100 · =cmd|calc, "train".py on GPU 0');
  // Not listed at 400 ms (the sample lists processes): holds nothing. At 200 ms the driver listed none: no point.
  assert.deepEqual([...train.time], [0, 100_000, 300_000, 400_000]);
  assert.deepEqual([...train.value], [2 * GiB, 10 * GiB, 6 * GiB, 0]);
  const zombie = t.counters.find((c) => c.id === 'process:1:200')!;
  assert.equal(zombie.flag?.kind, 'exited');
  assert.equal(zombie.label, 'pid 200 · command unknown on GPU 1');
  assert.equal(t.allocations.count, 0);
  assert.equal(t.spans.count, 0);
});

test('the monitor’s markers: each GPU’s peak with who held memory then, and a process that exited still holding memory', () => {
  const t = timelineFromSamples(series(), 'Monitor');
  assert.deepEqual(
    t.markers.map((m) => [m.kind, m.timeUs, m.label]),
    [
      ['peak', 100_000, 'GPU 0 peak: 11 GiB used of 79.18 GiB'],
      ['peak', 100_000, 'GPU 1 peak: 3 GiB used of 79.18 GiB'],
      ['leak', 100_000, 'pid 200 has exited but holds 3 GiB'],
    ],
  );
  assert.match(t.markers[0]!.detail, /Held then:\npid 100 \(=cmd\|calc, "train"\.py\) on GPU 0: 10 GiB/);
  assert.match(t.markers[2]!.detail, /not in the process table.*\nReset the GPU/s);
});

test('no samples yet, or samples left out: the title says so, never a silent empty view', () => {
  const empty = timelineFromSamples({ ...series(), samples: [] }, 'Monitor');
  assert.equal(empty.title, 'Monitor (no samples yet)');
  assert.equal(empty.counters.length, 0);
  assert.equal(empty.durationUs, 0);
  assert.equal(timelineFromSamples({ ...series(), dropped: 120 }, 'Monitor').title, 'Monitor (the 120 oldest samples were left out to bound memory)');
});

test('samples out of order are drawn in order', () => {
  const s = series();
  const shuffled = { ...s, samples: [s.samples[3]!, s.samples[0]!, s.samples[4]!, s.samples[1]!, s.samples[2]!] };
  assert.deepEqual(timelineFromSamples(shuffled, 'M'), timelineFromSamples(s, 'M'));
});

test('the monitor’s timeline crosses the wire whole', () => {
  const t = timelineFromSamples(series(), 'Monitor');
  assert.deepEqual(decodeTimeline(structuredClone(encodeTimeline(t))), t);
});

test('samples as CSV: a row per sample and GPU, a column per process; formulas defused, quotes escaped, unknown left empty', () => {
  const csv = samplesToCsv(series());
  const lines = csv.trimEnd().split('\n');
  assert.equal(lines[0], 'time_us,time_utc,device,device_name,used_bytes,free_bytes,total_bytes,"pid 100 (=cmd|calc, ""train"".py)",pid 200 (command unknown)');
  assert.equal(lines.length, 1 + 5 * 2);
  assert.equal(lines[1], `${T0},2026-11-23T12:00:00.000Z,0,NVIDIA H100 80GB HBM3,${3 * GiB},${H100_TOTAL - 3 * GiB},${H100_TOTAL},${2 * GiB},0`);
  assert.equal(lines[4], `${T0 + 100_000},2026-11-23T12:00:00.100Z,1,NVIDIA H100 80GB HBM3,${3 * GiB},${H100_TOTAL - 3 * GiB},${H100_TOTAL},0,${3 * GiB}`);
  // At 200 ms the driver listed no processes: their cells are empty, not 0.
  assert.match(lines[5]!, /,,$/);
  // A cell a spreadsheet would run as a formula is text.
  const hostile = series();
  hostile.devices[0]!.name = '=HYPERLINK("http://x")';
  assert.match(samplesToCsv(hostile).split('\n')[1]!, /,0,"'=HYPERLINK\(""http:\/\/x""\)",/);
});
