import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { MonitorReport } from '../../core/memory/monitor-report';
import { SampleStore } from '../../core/memory/sample-store';
import type { MemorySample, SampleSeries } from '../../core/memory/samples';
import { samplesToCsv } from '../../core/memory/samples-csv';
import { CSV_SLICE_SAMPLES, writeMonitorCsv, writeMonitorTrace } from '../../main/memory/monitor-export';

// The monitor's --csv and --trace go through the timeline's own exports (samplesToCsv, timelineFromSamples and
// its trace writer): the CSV is written slice by slice, and must read exactly as the whole series in one piece.
const work = mkdtempSync(join(tmpdir(), 'wb-monitor-export-'));
const MiB = 2 ** 20;
const TOTAL = 80 * 2 ** 30;
const devices = [
  { index: 0, name: 'GPU A', uuid: 'GPU-a', totalBytes: TOTAL },
  { index: 1, name: 'GPU B', uuid: 'GPU-b', totalBytes: TOTAL },
];

function sessionOf(count: number): { store: SampleStore; samples: MemorySample[]; report: MonitorReport } {
  const store = new SampleStore(2);
  const samples: MemorySample[] = [];
  for (let i = 0; i < count; i++) {
    // PID 300 appears only late (in the third slice), and the report does not name it.
    const processes =
      i % 7 === 0 ? null : [{ device: 0, pid: 100, usedBytes: i * MiB }, ...(i > 2 * CSV_SLICE_SAMPLES ? [{ device: 1, pid: 300, usedBytes: null }] : [])];
    const sample = {
      timeUs: 1.7e15 + i * 10_000,
      devices: devices.map((d) => ({ index: d.index, usedBytes: (i + d.index) * MiB, freeBytes: TOTAL - (i + d.index) * MiB, totalBytes: TOTAL })),
      processes,
    };
    store.push(sample);
    samples.push(sample);
  }
  const series: SampleSeries = {
    intervalMs: 10,
    devices,
    processes: [{ pid: 100, command: 'python3 "train".py, --lr=1e-3', flag: null, firstSeenUs: 1.7e15, lastSeenUs: 1.7e15 }],
    samples: [],
    dropped: 0,
  };
  return { store, samples, report: { series } as MonitorReport };
}

test('--csv: written in slices, it reads exactly as the whole series in one piece (the same columns throughout)', async () => {
  const { store, samples, report } = sessionOf(2 * CSV_SLICE_SAMPLES + 500);
  const path = join(work, 'session.csv');
  const { samples: written } = await writeMonitorCsv(path, report, store);
  assert.equal(written, samples.length);
  const whole = samplesToCsv({
    ...report.series,
    processes: [...report.series.processes, { pid: 300, command: null, flag: null, firstSeenUs: samples[2 * CSV_SLICE_SAMPLES + 1]!.timeUs, lastSeenUs: 0 }],
    samples,
  });
  const text = readFileSync(path, 'utf8');
  assert.equal(text, whole);
  const lines = text.trimEnd().split('\n');
  assert.equal(lines.length, 1 + samples.length * devices.length);
  assert.match(lines[0]!, /pid 100 \(python3 ""train"".py, --lr=1e-3\)/);
  assert.match(lines[0]!, /pid 300 \(command unknown\)/);
});

test('--trace: the session as a Chrome trace, a counter track per GPU and per process', async () => {
  const { store, report } = sessionOf(300);
  const path = join(work, 'session.json');
  const t = await writeMonitorTrace(path, report, store, 'Monitor: python3 train.py');
  assert.equal(t.samples, 300);
  assert.equal(t.leftOut, 0);
  const trace = JSON.parse(readFileSync(path, 'utf8')) as { traceEvents: { ph: string; name: string; args?: Record<string, unknown> }[] };
  assert.ok(t.events > 0 && trace.traceEvents.length > 0);
  const counters = new Set(trace.traceEvents.filter((e) => e.ph === 'C').map((e) => e.name));
  assert.ok(
    [...counters].some((n) => /GPU 0/.test(n)),
    [...counters].join(', '),
  );
  assert.ok(
    [...counters].some((n) => /100/.test(n)),
    [...counters].join(', '),
  );
});
