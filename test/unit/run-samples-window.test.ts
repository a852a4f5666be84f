import assert from 'node:assert/strict';
import { test } from 'node:test';

import { samplesDuring } from '../../core/memory/run-timeline';
import type { SampleSeries } from '../../core/memory/samples';
import type { RunResult } from '../../core/runner/run-result';

// A monitoring session's samples drawn with (and bundled with) a run that took none of its own: the run's time, with
// one sample either side — not the whole session, which may be hours long and name every process it saw.

const sample = (s: number, pids: number[]) => ({
  timeUs: s * 1e6,
  devices: [],
  processes: pids.map((pid) => ({ pid, device: 0, usedBytes: 1 })),
});
const series = {
  intervalMs: 1000,
  devices: [],
  processes: [1, 2, 3].map((pid) => ({ pid, name: `p${pid}` })),
  samples: Array.from({ length: 11 }, (_, s) => sample(s, s < 3 ? [1] : s < 7 ? [2] : [3])),
  dropped: 5,
} as unknown as SampleSeries;
const run = (fromS: number, durationS: number) => ({ startedAtMs: fromS * 1000, events: [{ t: 0, dur: durationS * 1000 }] }) as unknown as RunResult;

test('the run’s window and one sample either side; only the processes seen in it', () => {
  const clipped = samplesDuring(series, run(3.5, 2))!;
  assert.deepEqual(
    clipped.samples.map((x) => x.timeUs / 1e6),
    [3, 4, 5, 6],
  );
  assert.deepEqual(
    clipped.processes.map((p) => p.pid),
    [2],
  );
  assert.equal(clipped.dropped, 0, 'what the session dropped was before this window');
});

test('a run over the whole session keeps it whole; a run outside it has none', () => {
  assert.equal(samplesDuring(series, run(-1, 20)), series);
  assert.equal(samplesDuring(series, run(20, 1)), null);
  assert.deepEqual(
    samplesDuring(series, run(0, 1.5))!.samples.map((x) => x.timeUs / 1e6),
    [0, 1, 2],
  );
});
