import assert from 'node:assert/strict';
import { test } from 'node:test';

import { sortedIndex } from '../../core/memory/sort-index';
import type { Timeline, TimelineMarker, TimelineStack } from '../../core/memory/timeline';
import { AllocationsBuilder, CounterBuilder, counterHead, emptySpans, LabelTable, parseAddress } from '../../core/memory/timeline-columns';
import {
  addressSpaceAt,
  aliveAt,
  aliveAtEnd,
  counterPeak,
  groupAllocations,
  leaksOf,
  liveBytes,
  originOf,
  peakOf,
  summarizeTimeline,
} from '../../core/memory/timeline-model';
import { counterValueAt } from '../../core/memory/timeline-describe';

const KiB = 1024;

interface Row {
  start: number;
  end?: number;
  size: number;
  address?: number;
  label?: string;
  step?: number;
  stack?: number;
}

/** A small timeline by hand: the model's edge cases, each with its own few allocations. */
function timeline(rows: Row[], extra: { stacks?: TimelineStack[]; markers?: TimelineMarker[]; steps?: Timeline['steps'] } = {}): Timeline {
  const labels = new LabelTable();
  const a = new AllocationsBuilder();
  rows.forEach((r, i) =>
    a.push({
      start: r.start,
      end: r.end ?? Infinity,
      size: r.size,
      address: r.address ?? 0x1000 * (i + 1),
      ...(r.label ? { label: labels.id(r.label) } : {}),
      ...(r.step !== undefined ? { step: r.step } : {}),
      ...(r.stack !== undefined ? { stack: r.stack } : {}),
    }),
  );
  return {
    version: 1,
    source: 'run',
    title: 'hand-made',
    device: 0,
    originUs: 0,
    durationUs: 100,
    counters: [],
    allocations: a.finish(),
    spans: emptySpans(),
    markers: extra.markers ?? [],
    labels: labels.labels,
    stacks: extra.stacks ?? [],
    steps: extra.steps ?? [],
  };
}

test('sortedIndex: already in order costs nothing; otherwise the order of a comparator sort, stable, negatives, -0 and Infinity included', () => {
  assert.deepEqual([...sortedIndex(Float64Array.from([1, 2, 2, 3]))], [0, 1, 2, 3]);
  const keys = Float64Array.from([5, -1, Infinity, 0, -0, 2 ** 50, 5, -(2 ** 40), 1e-300, 3.5]);
  const order = [...sortedIndex(keys)];
  const expected = [...keys.keys()].sort((x, y) => keys[x]! - keys[y]! || (Object.is(keys[x], -0) ? -1 : Object.is(keys[y], -0) ? 1 : x - y));
  assert.deepEqual(order, expected);
  assert.ok(order.indexOf(0) < order.indexOf(6), 'equal keys keep their index order');
  // A hundred thousand random keys with many repeats: the same order as a stable comparator sort.
  let seed = 7;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const many = Float64Array.from({ length: 100_000 }, () => Math.floor(rand() * 5000) * (rand() < 0.1 ? -1 : 1) + (rand() < 0.5 ? 0.25 : 0));
  assert.deepEqual(
    [...sortedIndex(many)],
    [...many.keys()].sort((x, y) => many[x]! - many[y]! || x - y),
  );
});

test('nothing allocated: no peak, nothing alive, no leaks, an empty address space, and a summary that says so', () => {
  const t = timeline([]);
  assert.equal(peakOf(t), null);
  assert.equal(aliveAtEnd(t).length, 0);
  assert.deepEqual(leaksOf(t), []);
  const picture = addressSpaceAt(t, 0);
  assert.deepEqual([picture.parts, picture.lowest, picture.highest, picture.usedBytes], [[], null, null, 0]);
  const s = summarizeTimeline(t);
  assert.equal(s.peak, null);
  assert.equal(s.atEnd.count, 0);
  assert.equal(s.addressSpace, null);
});

test('all freed: the peak is where the most were alive at once, nothing is left at the end', () => {
  const t = timeline([
    { start: 0, end: 30, size: 4 * KiB },
    { start: 10, end: 20, size: 8 * KiB },
    { start: 25, end: 40, size: 2 * KiB },
  ]);
  assert.deepEqual(peakOf(t), { bytes: 12 * KiB, timeUs: 10, allocations: 2 });
  assert.deepEqual([...aliveAt(t, 10)], [0, 1]);
  assert.equal(aliveAtEnd(t).length, 0);
  assert.deepEqual(leaksOf(t), []);
  const live = liveBytes(t);
  assert.deepEqual([...live.time], [0, 10, 20, 25, 30, 40]);
  assert.deepEqual(
    [...live.value],
    [4, 12, 4, 6, 2, 0].map((k) => k * KiB),
  );
});

test('alive at the end: leaks largest first, with the step or buffer that made them; leaksOf(limit) keeps the largest', () => {
  const t = timeline(
    [
      { start: 0, size: 1 * KiB, label: 'a', step: 0 },
      { start: 1, end: 5, size: 64 * KiB, label: 'tmp', step: 1 },
      { start: 2, size: 16 * KiB, step: 2 },
      { start: 3, size: 16 * KiB, label: 'c', step: 3 },
    ],
    { steps: [{ index: 2, label: 'alloc b' }] },
  );
  const leaks = leaksOf(t);
  assert.deepEqual(
    leaks.map((l) => [l.allocation, l.bytes, l.step, l.origin]),
    [
      [2, 16 * KiB, 2, 'step 3 (alloc b)'],
      [3, 16 * KiB, 3, 'c'],
      [0, 1 * KiB, 0, 'a'],
    ],
  );
  assert.deepEqual(
    leaksOf(t, 2).map((l) => l.allocation),
    [2, 3],
  );
  assert.deepEqual(leaksOf(t, 0), []);
  // A million candidates: the largest few in one pass (no sort of all of them).
  const rows: Row[] = Array.from({ length: 200_000 }, (_, i) => ({ start: i, size: (i * 7919) % 100_003 }));
  const big = timeline(rows);
  const top = leaksOf(big, 5);
  const expected = [...rows.keys()].sort((x, y) => rows[y]!.size - rows[x]!.size || x - y).slice(0, 5);
  assert.deepEqual(
    top.map((l) => l.allocation),
    expected,
  );
});

test('an OOM first: its holders are nothing, and the summary carries the marker', () => {
  const oom: TimelineMarker = { kind: 'oom', timeUs: 0, label: 'out of memory: asked 1 TiB', detail: '…' };
  const t = timeline([{ start: 5, size: KiB }], { markers: [oom] });
  const s = summarizeTimeline(t);
  assert.equal(s.ooms.length, 1);
  assert.deepEqual(s.ooms[0]!.holders, []);
  assert.equal(s.ooms[0]!.marker, oom);
});

test('equal timestamps: a block freed and another allocated at the same microsecond never count together', () => {
  const t = timeline([
    { start: 0, end: 10, size: 100 },
    { start: 10, end: 20, size: 60 },
  ]);
  assert.deepEqual(peakOf(t), { bytes: 100, timeUs: 0, allocations: 1 });
  assert.deepEqual([...aliveAt(t, 10)], [1]);
  assert.deepEqual([...liveBytes(t).value], [100, 60, 0]);
  // Two allocated at the same time count together from that time on.
  const same = timeline([
    { start: 5, end: 9, size: 10 },
    { start: 5, end: 9, size: 20 },
  ]);
  assert.deepEqual(peakOf(same), { bytes: 30, timeUs: 5, allocations: 2 });
});

test('allocated and freed at the same microsecond: alive for no time, never in the peak nor alive anywhere', () => {
  const t = timeline([
    { start: 7, end: 7, size: 1 << 30 },
    { start: 8, end: 12, size: 10 },
  ]);
  assert.deepEqual(peakOf(t), { bytes: 10, timeUs: 8, allocations: 1 });
  assert.equal(aliveAt(t, 7).length, 0);
  assert.equal(peakOf(timeline([{ start: 3, end: 3, size: 99 }])), null);
});

test('what is alive at the peak adds up to the peak, whatever the order of the columns', () => {
  let seed = 11;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const rows: Row[] = Array.from({ length: 5000 }, () => {
    const start = Math.floor(rand() * 1000);
    return { start, ...(rand() < 0.9 ? { end: start + Math.floor(rand() * 50) } : {}), size: 1 + Math.floor(rand() * 4096) };
  });
  const t = timeline(rows);
  const peak = peakOf(t)!;
  const alive = aliveAt(t, peak.timeUs);
  assert.equal(alive.length, peak.allocations);
  assert.equal(
    [...alive].reduce((s, i) => s + rows[i]!.size, 0),
    peak.bytes,
  );
  // No other moment holds more.
  for (const time of liveBytes(t).time) assert.ok([...aliveAt(t, time)].reduce((s, i) => s + rows[i]!.size, 0) <= peak.bytes);
});

test('the address space at a moment: blocks by address and the gaps between them; overlaps are counted, not hidden', () => {
  const t = timeline([
    { start: 0, size: 0x100, address: 0x3000 },
    { start: 0, size: 0x200, address: 0x1000 },
    { start: 0, end: 1, size: 0x100, address: 0x1200 },
    { start: 0, size: 0x80, address: 0x3080 },
  ]);
  const at0 = addressSpaceAt(t, 0);
  assert.deepEqual(
    at0.parts.map((p) => [p.kind, p.address, p.size]),
    [
      ['used', 0x1000, 0x200],
      ['used', 0x1200, 0x100],
      ['gap', 0x1300, 0x1d00],
      ['used', 0x3000, 0x100],
      ['used', 0x3080, 0x80],
    ],
  );
  assert.equal(at0.overlaps, 1);
  assert.equal(at0.largestGap, 0x1d00);
  assert.equal(at0.lowest, 0x1000);
  assert.equal(at0.highest, 0x3100);
  const at1 = addressSpaceAt(t, 1);
  assert.equal(at1.largestGap, 0x1e00, 'the freed block left a larger gap');
});

test('grouping: by stack (one group per whole stack), by user frame, by step, by buffer', () => {
  const frame = (file: string, line: number) => ({ file, line, name: 'f' });
  const shared = frame('/home/me/train.py', 42);
  const stacks: TimelineStack[] = [
    { frames: [frame('alloc.cpp', 1), shared, frame('/home/me/main.py', 3)], userFrame: 1 },
    { frames: [frame('alloc.cpp', 1), shared, frame('/home/me/main.py', 9)], userFrame: 1 },
  ];
  const t = timeline(
    [
      { start: 0, size: 10, stack: 0 },
      { start: 0, size: 20, stack: 1 },
      { start: 0, size: 30, stack: 0 },
      { start: 0, size: 5, label: 'x', step: 4 },
    ],
    { stacks },
  );
  const all = [0, 1, 2, 3];
  assert.deepEqual(
    groupAllocations(t, all).map((g) => [g.title, g.count, g.bytes, g.largestIndex]),
    [
      ['/home/me/train.py:42 f', 3, 60, 2],
      ['x', 1, 5, 3],
    ],
  );
  assert.deepEqual(
    groupAllocations(t, all, 'stack').map((g) => [g.title, g.count, g.bytes]),
    [
      ['/home/me/train.py:42 f', 2, 40],
      ['/home/me/train.py:42 f', 1, 20],
      ['x', 1, 5],
    ],
  );
  assert.deepEqual(
    groupAllocations(t, all, 'step').map((g) => [g.key, g.count]),
    [
      ['(no step)', 3],
      ['step 4', 1],
    ],
  );
  assert.deepEqual(
    groupAllocations(t, all, 'label').map((g) => [g.key, g.count]),
    [
      ['(no name)', 3],
      ['x', 1],
    ],
  );
  assert.equal(originOf(t, 3), 'x');
});

test('counters: the value at a time is the step function’s; the peak is the first time the highest value held', () => {
  const c = new CounterBuilder(counterHead('c', 'c', 'device'));
  c.push(0, 5);
  c.push(1, 5); // repeats the value: left out
  c.push(2, 9);
  c.push(3, 9);
  c.push(4, 1);
  const counter = c.finish();
  assert.deepEqual([...counter.time], [0, 2, 4]);
  assert.equal(counterValueAt(counter.time, counter.value, -1), NaN);
  assert.equal(counterValueAt(counter.time, counter.value, 1.5), 5);
  assert.equal(counterValueAt(counter.time, counter.value, 2), 9);
  assert.equal(counterValueAt(counter.time, counter.value, 1e9), 1);
  assert.deepEqual(counterPeak(counter), { value: 9, timeUs: 2 });
  assert.equal(counterPeak(new CounterBuilder(counterHead('e', 'e', 'device')).finish()), null);
});

test('addresses as the runner writes them are read exactly; anything else is unknown (NaN), not a wrong number', () => {
  assert.equal(parseAddress('0x7f3a0c800100'), 0x7f3a0c800100);
  assert.equal(parseAddress('0X10'), 16);
  assert.ok(Number.isNaN(parseAddress('7f3a')));
  assert.ok(Number.isNaN(parseAddress('0xffffffffffffffff')), 'past 2^53: not exact, so not a number');
  assert.ok(Number.isNaN(parseAddress('0x12g')));
});

test('groupings offered: by stack and line for a snapshot (never plan step or buffer), by buffer and step for a run', async () => {
  const { groupingsFor } = await import('../../core/memory/timeline-model');
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { buildSnapshotModel } = await import('../../core/memory/snapshot-model');
  const { timelineFromSnapshot } = await import('../../core/memory/snapshot-timeline');
  const { unpickle } = await import('../../core/memory/unpickle');
  const { timelineFromRun } = await import('../../core/memory/run-timeline');
  const { recordedRun } = await import('../helpers/run-log');
  const { ROOT } = await import('../helpers/cli');
  // leak.pickle has blocks from before the recording, labelled so: still no "buffer" grouping
  const snapshot = timelineFromSnapshot(buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(ROOT, 'test/fixtures/snapshots/h100/leak.pickle'))))), 0);
  assert.deepEqual(groupingsFor(snapshot), ['stack', 'origin']);
  const run = timelineFromRun(recordedRun('never-frees'));
  assert.deepEqual(groupingsFor(run), ['label', 'step']);
});
