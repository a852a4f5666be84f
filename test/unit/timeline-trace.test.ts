import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { chromeTraceChunks, TraceTooLargeError } from '../../core/memory/chrome-trace';
import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { snapshotTimelines } from '../../core/memory/memory-open';
import { timelineFromSamples } from '../../core/memory/samples-timeline';
import type { Timeline } from '../../core/memory/timeline';
import { AllocationsBuilder, emptySpans } from '../../core/memory/timeline-columns';
import { countTimelineTraceEvents, estimateTimelineTraceBytes, timelineTraceChunks, timelineWindow } from '../../core/memory/timeline-trace';
import { unpickle } from '../../core/memory/unpickle';
import { validateChromeTrace } from '../helpers/chrome-trace';
import { ROOT } from '../helpers/cli';
import { MiB, neverFreesTimeline, samplesAround } from '../helpers/run-log';

const H100 = join(ROOT, 'test/fixtures/snapshots/h100');
const model = (name: string) => buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(H100, name)))));

const runTimeline = neverFreesTimeline;

test('a run’s timeline as a Chrome trace: counters, spans and allocations as complete events, markers as instants, names', () => {
  const t = runTimeline();
  const stats = { events: 0 };
  const text = [...timelineTraceChunks([t], { chunkChars: 256, stats })].join('');
  const events = validateChromeTrace(text);
  assert.equal(events.get('X')!.length, t.spans.count + t.allocations.count);
  assert.equal(events.get('i')!.length, t.markers.length);
  assert.deepEqual(
    events
      .get('i')!
      .map((e) => e.name)
      .sort(),
    t.markers.map((m) => m.label).sort(),
  );
  const counters = new Set(events.get('C')!.map((e) => e.name));
  assert.deepEqual([...counters].sort(), t.counters.map((c) => c.label).sort());
  const processName = events.get('M')!.find((e) => e.name === 'process_name')!;
  assert.equal(processName.args!['name'], t.title);
  const threads = events
    .get('M')!
    .filter((e) => e.name === 'thread_name')
    .map((e) => e.args!['name']);
  for (const lane of ['kernel · lane 1', 'copy · lane 1', 'memset · lane 1', 'module · lane 1', 'allocations · lane 1'])
    assert.ok(threads.includes(lane), lane);
  const a = events.get('X')!.find((e) => e.name === '4 MiB a')!;
  assert.equal(a.args!['address'], '0x7f3a01e00100');
  assert.equal(a.args!['alive_at_end'], true);
  assert.equal(
    stats.events,
    [...events.values()].reduce((s, l) => s + l.length, 0),
  );
  assert.ok(countTimelineTraceEvents([t]) <= stats.events);
});

test('overlapping allocations take separate lanes; several timelines share one clock', () => {
  const snapshots = snapshotTimelines(model('oom.pickle'));
  const leak = snapshotTimelines(model('leak.pickle'));
  const text = [...timelineTraceChunks([...snapshots, ...leak])].join('');
  const events = validateChromeTrace(text); // throws if complete events on one thread overlap without nesting
  const lanes = new Set(
    events
      .get('X')!
      .filter((e) => e.pid === 1)
      .map((e) => e.tid),
  );
  assert.equal(lanes.size, 8, 'eight 64 MiB blocks alive at once: eight lanes');
  // The later snapshot starts later on the shared clock.
  const firstTs = (pid: number) =>
    Math.min(
      ...events
        .get('C')!
        .filter((e) => e.pid === pid)
        .map((e) => e.ts!),
    );
  assert.equal(firstTs(1), 0);
  assert.equal(firstTs(2), leak[0]!.originUs - snapshots[0]!.originUs);
});

test('a monitor timeline (counters only) is a valid trace too, and the existing snapshot export still is', () => {
  const s = samplesAround({ runnerPid: 7, runnerBytes: (ms) => ms * MiB, foreignBytes: 0, untilMs: 30 });
  const events = validateChromeTrace([...timelineTraceChunks([timelineFromSamples(s, 'Monitor')])].join(''));
  assert.ok(events.get('C')!.length > 0);
  assert.ok(events.get('i')!.some((e) => /peak/.test(e.name)));
  assert.equal(events.get('X'), undefined);
  assert.ok(validateChromeTrace([...chromeTraceChunks(model('oom.pickle'))].join('')).get('X')!.length === 8);
});

test('a trace past its bound stops with a reason; the estimate sees it coming', () => {
  const t = runTimeline();
  assert.throws(
    () => [...timelineTraceChunks([t], { chunkChars: 64, maxChars: 1000 })],
    (e: unknown) => e instanceof TraceTooLargeError && /Perfetto/.test(e.message),
  );
  assert.ok(estimateTimelineTraceBytes([t]) > 1000);
});

test('an allocation alive at the end is drawn to the end of its timeline; the window keeps what overlaps it', () => {
  const a = new AllocationsBuilder();
  a.push({ start: 0, end: 10, size: 1, address: 0 });
  a.push({ start: 20, end: Infinity, size: 2, address: 16 });
  a.push({ start: 50, end: 60, size: 3, address: 32 });
  const t: Timeline = {
    version: 1,
    source: 'run',
    title: 't',
    device: 0,
    originUs: 0,
    durationUs: 100,
    counters: [],
    allocations: a.finish(),
    spans: emptySpans(),
    markers: [{ kind: 'leak', timeUs: 100, label: 'leak', detail: '', allocation: 1 }],
    labels: [],
    stacks: [],
    steps: [],
  };
  const events = validateChromeTrace([...timelineTraceChunks([t])].join(''));
  const alive = events.get('X')!.find((e) => e.args!['bytes'] === 2)!;
  assert.equal(alive.ts! + alive.dur!, 100);
  const w = timelineWindow(t, 15, 100);
  assert.deepEqual([...w.allocations.size], [2, 3]);
  assert.equal(w.markers[0]!.allocation, 0, 'the marker follows its allocation to its new index');
});
