import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ApiError } from '../../core/api/channels';
import type { SampleSeries } from '../../core/memory/samples';
import { timelineFromSamples } from '../../core/memory/samples-timeline';
import { encodeTimeline } from '../../core/memory/timeline-wire';
import { exportMemory } from '../../main/memory/export-memory';
import { validateChromeTrace } from '../helpers/chrome-trace';
import { ROOT } from '../helpers/cli';

const dir = mkdtempSync(join(tmpdir(), 'memory-export-'));
// monitor -- python3 leak.py on the H100 (test/fixtures/monitor/).
const series = (JSON.parse(readFileSync(join(ROOT, 'test/fixtures/monitor/h100-pytorch-leak.json'), 'utf8')) as { series: SampleSeries }).series;

test('memory.export: the monitor’s samples as CSV, and its timeline as a trace Perfetto opens', async () => {
  const csv = await exportMemory({ format: 'csv', series }, join(dir, 'leak.csv'));
  const lines = readFileSync(csv.path, 'utf8').trim().split('\n');
  assert.equal(lines.length, series.samples.length * series.devices.length + 1, 'a header and a row per sample and GPU');
  const trace = await exportMemory({ format: 'trace', timeline: encodeTimeline(timelineFromSamples(series, 'leak.py')) }, join(dir, 'leak.json'));
  const byPhase = validateChromeTrace(readFileSync(trace.path, 'utf8'));
  const counters = byPhase.get('C') ?? [];
  assert.ok(
    counters.some((e) => /leak\.py/.test(e.name)),
    `a counter track for leak.py among ${[...new Set(counters.map((e) => e.name))].join(', ')}`,
  );
});

test('memory.export refuses what is not a timeline or a series, and writes nothing', async () => {
  const wire = encodeTimeline(timelineFromSamples(series, 'leak.py'));
  const cases: [string, Parameters<typeof exportMemory>[0]][] = [
    ['no timeline', { format: 'trace', timeline: null }],
    ['a timeline with a wrong column length', { format: 'trace', timeline: { ...wire, allocations: { ...wire.allocations, count: 5 } } }],
    ['a string', { format: 'trace', timeline: 'x'.repeat(1000) }],
    ['a series with Infinity', { format: 'csv', series: { ...series, intervalMs: Infinity } }],
    ['an array', { format: 'csv', series: [] }],
  ];
  for (const [what, request] of cases) {
    const path = join(dir, `${what.replace(/\W/g, '-')}.out`);
    await assert.rejects(
      () => exportMemory(request, path),
      (e: unknown) => e instanceof ApiError && e.code === 'MEMORY_EXPORT_INVALID',
      what,
    );
    assert.equal(existsSync(path), false, `${what}: nothing written`);
  }
});
