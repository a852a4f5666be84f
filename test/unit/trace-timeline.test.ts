import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SPAN_LANES, type Timeline } from '../../core/memory/timeline';
import { summarizeTimeline } from '../../core/memory/timeline-model';
import { timelineTraceChunks } from '../../core/memory/timeline-trace';
import { isChromeTrace, timelinesFromChromeTrace, TRACE_TABLE_ROWS, TraceFormatError } from '../../core/memory/trace-timeline';
import { neverFreesTimeline } from '../helpers/run-log';

// Issue 26: a Chrome trace opened (as `run --trace` or the Memory tab's Export trace writes it) is drawn by the memory
// timeline, not only pointed to Perfetto; any trace's events with a duration are also listed, by name, with their times.

const runTimeline = neverFreesTimeline;

const lanesOf = (t: Timeline) => [...t.spans.lane].map((l) => SPAN_LANES[l]).sort();

test('a run’s trace, as the workbench writes it, comes back as the timeline it was drawn from', () => {
  const t = runTimeline();
  const trace = JSON.parse([...timelineTraceChunks([t])].join('')) as unknown;
  assert.equal(isChromeTrace(trace), true);
  const read = timelinesFromChromeTrace(trace);
  assert.equal(read.timelines.length, 1);
  const back = read.timelines[0]!;
  assert.equal(back.title, t.title);
  // Every allocation: its size, address, life and buffer's name.
  assert.equal(back.allocations.count, t.allocations.count);
  assert.deepEqual([...back.allocations.size].sort(), [...t.allocations.size].sort());
  assert.deepEqual([...back.allocations.address].sort(), [...t.allocations.address].sort());
  assert.deepEqual([...back.allocations.label].map((l) => back.labels[l]).sort(), [...t.allocations.label].map((l) => t.labels[l]).sort());
  assert.equal([...back.allocations.end].filter((e) => e === Infinity).length, [...t.allocations.end].filter((e) => e === Infinity).length, 'alive at the end');
  // Every span in its own lane, every marker, every counter.
  assert.deepEqual(lanesOf(back), lanesOf(t));
  assert.deepEqual(
    back.markers.map((m) => [m.kind, m.label]),
    [...t.markers].sort((a, b) => a.timeUs - b.timeUs).map((m) => [m.kind, m.label]),
  );
  assert.deepEqual(back.counters.map((c) => c.label).sort(), t.counters.map((c) => c.label).sort());
  const before = summarizeTimeline(t);
  const after = summarizeTimeline(back);
  assert.equal(after.peak?.bytes, before.peak?.bytes, 'the same peak');
  assert.equal(after.leaks.count, before.leaks.count);
  // Its events with a duration, by total time: the allocations (12 MiB kept), the kernel, the copies.
  assert.ok(read.events.some((r) => r.cat === 'kernel' && r.count === 1));
  assert.deepEqual(
    read.events.map((r) => r.totalUs),
    [...read.events.map((r) => r.totalUs)].sort((a, b) => b - a),
  );
});

test('any other trace: complete events and begin/end pairs drawn in the other-events lane and listed by name; what is not well formed is counted and left out', () => {
  const trace = [
    { name: 'process_name', ph: 'M', pid: 7, tid: 0, args: { name: 'trainer' } },
    { name: 'forward', cat: 'python', ph: 'X', pid: 7, tid: 1, ts: 1000, dur: 300 },
    { name: 'forward', cat: 'python', ph: 'X', pid: 7, tid: 1, ts: 2000, dur: 500 },
    { name: 'backward', cat: 'python', ph: 'B', pid: 7, tid: 1, ts: 2600 },
    { name: 'backward', cat: 'python', ph: 'E', pid: 7, tid: 1, ts: 3800 },
    { name: 'memory', ph: 'C', pid: 7, tid: 0, ts: 1000, args: { bytes: 1024, count: 3 } },
    { name: 'memory', ph: 'C', pid: 7, tid: 0, ts: 2000, args: { bytes: 4096, count: 5 } },
    { name: 'OOM', cat: 'oom', ph: 'i', s: 'p', pid: 7, tid: 0, ts: 3900, args: { detail: 'asked 80 GiB' } },
    { name: 'no time', ph: 'X', pid: 7, tid: 1, dur: 5 },
    { name: 'orphan end', ph: 'E', pid: 7, tid: 2, ts: 4000 },
    'not an event',
  ];
  const read = timelinesFromChromeTrace(trace);
  assert.equal(read.timelines.length, 1);
  const t = read.timelines[0]!;
  assert.equal(t.title, 'trainer');
  assert.equal(t.spans.count, 3);
  assert.deepEqual(lanesOf(t), ['other', 'other', 'other']);
  assert.deepEqual([...t.spans.start], [0, 1000, 1600], 'from the trace’s first event');
  assert.equal(t.durationUs, 2900);
  // Counters in bytes only: a count is listed in no unit the axis could mislabel.
  assert.deepEqual(
    t.counters.map((c) => [c.label, [...c.value]]),
    [['memory', [1024, 4096]]],
  );
  assert.deepEqual(
    t.markers.map((m) => [m.kind, m.label, m.detail, m.timeUs]),
    [['oom', 'OOM', 'asked 80 GiB', 2900]],
  );
  assert.deepEqual(
    read.events.map((r) => [r.name, r.count, r.totalUs, r.longestUs]),
    [
      ['backward', 1, 1200, 1200],
      ['forward', 2, 800, 500],
    ],
  );
  assert.match(read.notes.join(' '), /A Chrome trace of 11 events/);
  assert.match(read.notes.join(' '), /3 events were not well formed/);
});

test('a trace of many kinds of event lists the longest kinds, and says how many more; a file that is not a trace is refused', () => {
  const events = Array.from({ length: TRACE_TABLE_ROWS + 5 }, (_, i) => ({ name: `k${i}`, cat: 'x', ph: 'X', pid: 1, tid: 1, ts: i, dur: i + 1 }));
  const read = timelinesFromChromeTrace({ traceEvents: events });
  assert.equal(read.events.length, TRACE_TABLE_ROWS);
  assert.equal(read.moreEvents, 5);
  assert.equal(read.events[0]!.name, `k${TRACE_TABLE_ROWS + 4}`);
  for (const notATrace of [{ kernels: [] }, [1, 2], 'trace', null]) {
    assert.equal(isChromeTrace(notATrace), false);
    assert.throws(() => timelinesFromChromeTrace(notATrace), TraceFormatError);
  }
  assert.deepEqual(timelinesFromChromeTrace({ traceEvents: [] }).timelines, []);
});
