import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { sampleSeriesSchema } from '../../core/memory/sample-series-schema';
import { timelineFromSamples } from '../../core/memory/samples-timeline';
import type { SampleSeries } from '../../core/memory/samples';
import { ROOT } from '../helpers/cli';

// monitor -- python3 leak.py on the H100, every 20 ms (test/fixtures/monitor/).
const recorded = () => (JSON.parse(readFileSync(join(ROOT, 'test/fixtures/monitor/h100-pytorch-leak.json'), 'utf8')) as { series: SampleSeries }).series;

test('a series recorded on the H100 passes, and draws the leaking process growing', () => {
  const series = sampleSeriesSchema.parse(recorded());
  assert.ok(series.samples.length > 100);
  const timeline = timelineFromSamples(series, 'leak.py');
  const leak = timeline.counters.find((c) => c.group === 'process' && /leak\.py/.test(c.label));
  assert.ok(leak, `a track for leak.py: ${timeline.counters.map((c) => c.label).join(', ')}`);
  const values = [...leak.value];
  const peak = Math.max(...values);
  assert.ok(peak > 1024 * 2 ** 20, `it reached ${peak} bytes`);
  assert.ok(peak > values.find((v) => v > 0)!, 'and grew from its first sample');
});

test('hostile series are refused: non-finite numbers, unknown flags, too many samples, negative bytes', () => {
  const good = recorded();
  const cases: [string, (s: SampleSeries) => unknown][] = [
    ['Infinity bytes', (s) => ({ ...s, samples: [{ ...s.samples[0]!, devices: [{ ...s.samples[0]!.devices[0]!, usedBytes: Infinity }] }] })],
    ['negative bytes', (s) => ({ ...s, samples: [{ ...s.samples[0]!, devices: [{ ...s.samples[0]!.devices[0]!, freeBytes: -1 }] }] })],
    ['an unknown flag', (s) => ({ ...s, processes: [{ pid: 7, command: null, flag: { kind: 'evil', text: '', fix: '' }, firstSeenUs: 0, lastSeenUs: 0 }] })],
    ['pid 0', (s) => ({ ...s, processes: [{ pid: 0, command: null, flag: null, firstSeenUs: 0, lastSeenUs: 0 }] })],
    ['a huge command line', (s) => ({ ...s, processes: [{ pid: 7, command: 'x'.repeat(100_000), flag: null, firstSeenUs: 0, lastSeenUs: 0 }] })],
    ['200,001 samples', (s) => ({ ...s, samples: new Array(200_001).fill(s.samples[0]) })],
    ['samples not a list', (s) => ({ ...s, samples: {} })],
  ];
  for (const [what, make] of cases) assert.equal(sampleSeriesSchema.safeParse(make(good)).success, false, what);
});
