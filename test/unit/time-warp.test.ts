import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { timelineFromSnapshot } from '../../core/memory/snapshot-timeline';
import { activityOf, BREAK_SHARE, findWarp, toDisplay, toReal, warpedTicks, warpFor, warpTimeline } from '../../core/memory/time-warp';
import { SPAN_LANES } from '../../core/memory/timeline';
import { unpickle } from '../../core/memory/unpickle';
import { ROOT } from '../helpers/cli';
import { emptySpans, timelineOf } from '../helpers/synthetic-timeline';

const H100 = join(ROOT, 'test/fixtures/snapshots/h100');
const snapshot = (name: string) => timelineFromSnapshot(buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(H100, name))))), 0);

test('oom.pickle recorded on an H100: its allocations in the first 0.6 ms and its OOM at 47.9 ms — the idle stretches broken, the activity over most of the width', () => {
  const t = snapshot('oom.pickle');
  const w = warpFor([t]);
  assert.ok(w.breaks.length >= 1 && w.breaks.length <= 2, `${w.breaks.length} breaks`);
  const lastMade = Math.max(...t.allocations.start);
  assert.ok(lastMade < 0.02 * t.durationUs, 'drawn to scale, the allocations would take 2% of the width');
  // with the breaks, the allocations take most of it, and the OOM is still in view at the end
  assert.ok(toDisplay(w, lastMade) / w.displayDurationUs > 0.5, `${toDisplay(w, lastMade) / w.displayDurationUs}`);
  const oom = t.markers.find((m) => m.kind === 'oom')!;
  assert.equal(toDisplay(w, oom.timeUs), w.displayDurationUs);
  // each break is drawn BREAK_SHARE of the width and is at least 1/5 of it to scale
  for (const b of w.breaks) {
    assert.ok(Math.abs((b.displayEnd - b.displayStart) / w.displayDurationUs - BREAK_SHARE) < 1e-9);
    assert.ok(b.realEnd - b.realStart > 0.2 * w.displayDurationUs);
  }
  // the warped timeline: the same rows, times mapped
  const d = warpTimeline(t, w);
  assert.equal(d.allocations.count, t.allocations.count);
  assert.equal(d.durationUs, w.displayDurationUs);
  assert.equal(d.markers.find((m) => m.kind === 'oom')!.timeUs, w.displayDurationUs);
  assert.ok([...d.allocations.end].filter((e) => e === Infinity).length === 4, 'never freed stays never freed');
});

test('the warp maps both ways, monotonic, slope 1 outside the breaks', () => {
  // busy 0–10 and 1000–1010: one gap of 990
  const w = findWarp({ start: [0, 1000], end: [10, 1010] }, 1010);
  assert.equal(w.breaks.length, 1);
  const [b] = w.breaks;
  assert.deepEqual([b!.realStart, b!.realEnd, b!.displayStart], [10, 1000, 10]);
  let last = -Infinity;
  for (let us = -5; us <= 1015; us += 0.5) {
    const x = toDisplay(w, us);
    assert.ok(x > last, `monotonic at ${us}`);
    last = x;
    assert.ok(Math.abs(toReal(w, x) - us) < 1e-9, `round trip at ${us}`);
  }
  assert.equal(toDisplay(w, 5), 5);
  assert.equal(toDisplay(w, 1005) - toDisplay(w, 1000), 5);
  assert.equal(toDisplay(w, Infinity), Infinity);
});

test('no breaks where nothing is idle for long: a pause between allocations, and a long kernel (busy, however few its events)', () => {
  const even = timelineOf(Array.from({ length: 20 }, (_, i) => [i * 10, i * 10 + 5, 64] as [number, number, number]));
  assert.equal(warpFor([even]).breaks.length, 0);
  // made at 0 and 1000; a kernel runs 5 to 995: not idle
  const t = timelineOf([
    [0, 1, 64],
    [1000, 1001, 64],
  ]);
  t.spans = emptySpans(1);
  t.spans.start[0] = 5;
  t.spans.end[0] = 995;
  t.spans.lane[0] = SPAN_LANES.indexOf('kernel');
  const busy = activityOf(t);
  assert.ok(
    busy.start.some((s, i) => s <= 5 && busy.end[i]! >= 995),
    'the kernel’s whole length is busy',
  );
  assert.equal(warpFor([t]).breaks.length, 0);
  t.spans.count = 0;
  assert.equal(warpFor([t]).breaks.length, 1, 'without the kernel the gap is idle');
});

test('compared timelines share one warp: a gap is broken only where both are idle', () => {
  const a = timelineOf([
    [0, 10, 64],
    [1000, 1010, 64],
  ]);
  const b = timelineOf([
    [0, 10, 64],
    [500, 510, 64],
  ]);
  const both = warpFor([a, b]);
  assert.ok(
    both.breaks.every((x) => x.realEnd <= 500 || x.realStart >= 510),
    'b’s allocation at 500 is not inside a break',
  );
  assert.equal(both.realDurationUs, 1010);
});

test('the axis: each stretch between breaks gets its own ticks, in real time, and the breaks in view are listed', () => {
  const w = findWarp({ start: [0, 1_000_000], end: [100, 1_000_100] }, 1_000_100);
  const { ticks, breaks } = warpedTicks(w, { startUs: 0, endUs: w.displayDurationUs }, 800);
  assert.equal(breaks.length, 1);
  assert.equal(breaks[0]!.realUs, 1_000_000 - 100);
  assert.ok(ticks.some((t) => t.label === '0 µs'));
  assert.ok(
    ticks.some((t) => /^1(\.0+)? s$|^1000(\.0+)? ms$/.test(t.label)),
    ticks.map((t) => t.label).join(', '),
  );
  for (const t of ticks) assert.ok(t.us <= breaks[0]!.startUs || t.us >= breaks[0]!.endUs, `tick ${t.label} inside the break`);
});
