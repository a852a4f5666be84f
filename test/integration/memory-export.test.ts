import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ApiError, monitorTimelineId } from '../../core/api/channels';
import type { SampleSeries } from '../../core/memory/samples';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { exportMemory } from '../../main/memory/export-memory';
import { HeldResults } from '../../main/services/held-results';
import { validateChromeTrace } from '../helpers/chrome-trace';
import { ROOT } from '../helpers/cli';

const dir = mkdtempSync(join(tmpdir(), 'memory-export-'));
// monitor -- python3 leak.py on the H100 (test/fixtures/monitor/).
const series = (JSON.parse(readFileSync(join(ROOT, 'test/fixtures/monitor/h100-pytorch-leak.json'), 'utf8')) as { series: SampleSeries }).series;
const neverFrees = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/never-frees.json'), 'utf8')) as RunOutcome;

test('memory.export: a monitoring session’s samples as the host kept them, as CSV and as a trace Perfetto opens', async () => {
  const held = new HeldResults();
  held.holdSamples(monitorTimelineId('ui-1'), { series });
  const csv = await exportMemory({ format: 'csv', timelineId: monitorTimelineId('ui-1') }, join(dir, 'leak.csv'), held);
  const lines = readFileSync(csv.path, 'utf8').trim().split('\n');
  assert.equal(lines.length, series.samples.length * series.devices.length + 1, 'a header and a row per sample and GPU');
  const trace = await exportMemory({ format: 'trace', timelineId: monitorTimelineId('ui-1') }, join(dir, 'leak.json'), held);
  const byPhase = validateChromeTrace(readFileSync(trace.path, 'utf8'));
  assert.ok((byPhase.get('C') ?? []).length > 0, 'the devices’ memory is a counter track');
});

test('a run that took no samples is drawn with the monitor’s taken while it ran, as the Memory tab draws it', async () => {
  const held = new HeldResults();
  const { outcomeId } = held.holdOutcome(neverFrees);
  const plain = await exportMemory({ format: 'trace', timelineId: outcomeId }, join(dir, 'plain.json'), held);
  // A session that sampled while the run ran (its samples moved onto the run's clock).
  const start = neverFrees.result!.startedAtMs! * 1000;
  const shift = start - series.samples[0]!.timeUs;
  held.holdSamples(monitorTimelineId('ui-2'), { series: { ...series, samples: series.samples.map((s) => ({ ...s, timeUs: s.timeUs + shift })) } });
  const sampled = await exportMemory({ format: 'trace', timelineId: outcomeId, monitorId: 'ui-2' }, join(dir, 'sampled.json'), held);
  assert.ok(sampled.events! > plain.events!, `${sampled.events} events with the monitor's samples, ${plain.events} without`);
  // A session the host no longer holds leaves the run's own timeline, as the tab would draw it without one.
  const without = await exportMemory({ format: 'trace', timelineId: outcomeId, monitorId: 'ui-gone' }, join(dir, 'without.json'), held);
  assert.equal(without.events, plain.events);
});

test('memory.export refuses what the id cannot give, in words, and writes nothing', async () => {
  const held = new HeldResults();
  const { outcomeId } = held.holdOutcome(neverFrees);
  const [timelineId] = held.holdTimelines([{ version: 1 } as never]);
  const cases: [string, Parameters<typeof exportMemory>[0], string, RegExp][] = [
    ['samples of a run that took none', { format: 'csv', timelineId: outcomeId }, 'MEMORY_EXPORT_INVALID', /did not sample device memory/],
    ['samples of a file', { format: 'csv', timelineId: timelineId! }, 'MEMORY_EXPORT_INVALID', /export it as a trace/],
    ['a run gone', { format: 'trace', timelineId: 'run-0' }, 'HELD_GONE', /no longer holds this run’s result .*: run it again/],
    ['a file gone', { format: 'trace', timelineId: 'timeline-0' }, 'HELD_GONE', /no longer holds this memory timeline .*: open its file again, then export\./],
    ['a monitor gone', { format: 'csv', timelineId: monitorTimelineId('ui-9') }, 'HELD_GONE', /start monitoring again, then export\./],
  ];
  for (const [what, request, code, said] of cases) {
    const path = join(dir, `${what.replace(/\W/g, '-')}.out`);
    await assert.rejects(
      () => exportMemory(request, path, held),
      (e: unknown) => e instanceof ApiError && e.code === code && said.test(e.message),
      what,
    );
    assert.equal(existsSync(path), false, `${what}: nothing written`);
  }
});

test('a held run read from a file whose log a timeline cannot draw is refused in words, not a host error', async () => {
  const held = new HeldResults();
  // As a hostile result file could hold it past the saved-result reader: memory entries with no size, no device.
  const hostile = { ...neverFrees, result: { ...neverFrees.result!, device: undefined, memory: [{ name: 'a' }] } } as unknown as RunOutcome;
  const { outcomeId } = held.holdOutcome(hostile);
  const path = join(dir, 'hostile.json');
  await assert.rejects(
    () => exportMemory({ format: 'trace', timelineId: outcomeId }, path, held),
    (e: unknown) => e instanceof ApiError && e.code === 'MEMORY_EXPORT_INVALID' && /cannot be drawn as a memory timeline: .*memory/.test(e.message),
  );
  assert.equal(existsSync(path), false);
});
