import assert from 'node:assert/strict';
import { test } from 'node:test';

import { timelineFromRun } from '../../core/memory/run-timeline';
import { SPAN_LANES } from '../../core/memory/timeline';
import { announce } from '../../core/memory/timeline-describe';
import { timelineAction, TIMELINE_KEYS } from '../../core/memory/timeline-keys';
import { rangeAllocations, rangeFigures } from '../../core/memory/timeline-range';
import { recordedRun } from '../helpers/run-log';
import { timelineOf } from '../helpers/synthetic-timeline';

const MiB = 1024 ** 2;

test('never-frees recorded on the H100: the whole run allocates three 4 MiB buffers, frees none, and runs its kernel', () => {
  const t = timelineFromRun(recordedRun('never-frees'));
  const r = rangeFigures(t, 0, t.durationUs);
  assert.equal(r.allocated.count, t.allocations.count);
  assert.ok(r.allocated.bytes >= 12 * MiB, `${r.allocated.bytes}`);
  assert.equal(r.liveAtStartBytes, 0, 'nothing alive before the run’s first allocation');
  assert.equal(r.kernels.count, [...t.spans.lane].filter((l) => SPAN_LANES[l] === 'kernel').length);
  assert.ok(r.kernels.busyUs > 0);
  const said = announce(t, { kind: 'range', startUs: 0, endUs: t.durationUs });
  assert.match(said, /^Range 0.* to .*\. Lasts: .*\. Allocated: .* in \d+ allocations\. Freed: .*\. Net change: \+.*\. Alive: 0 B at its start/);
});

test('a stretch after the last allocation: nothing made, what is alive at both ends; the order of the ends does not matter', () => {
  const t = timelineFromRun(recordedRun('never-frees'));
  const lastMade = Math.max(...t.allocations.start);
  const from = lastMade + (t.durationUs - lastMade) / 2;
  const a = rangeFigures(t, from, t.durationUs);
  const b = rangeFigures(t, t.durationUs, from);
  assert.deepEqual(a, b);
  assert.equal(a.allocated.count, 0);
  assert.ok(a.liveAtStartBytes >= 12 * MiB, 'the three leaked buffers are alive');
  // Clamped to the timeline.
  assert.equal(rangeFigures(t, -5, t.durationUs * 2).endUs, t.durationUs);
  assert.equal(rangeFigures(t, -5, t.durationUs * 2).startUs, 0);
});

test('R selects the time shown as a range, and the keys help says so', () => {
  assert.deepEqual(timelineAction('r', false), { kind: 'range' });
  assert.deepEqual(timelineAction('R', true), { kind: 'range' });
  assert.ok(TIMELINE_KEYS.some((k) => k.keys === 'R' && /range/.test(k.what)));
});

test('a range lists its allocations, largest first: made in it, freed in it, alive across it; bounded, the rest counted', () => {
  const t = timelineOf([
    [0, 100, 1 * MiB], // alive across 10–20
    [12, 15, 8 * MiB], // made and freed in it
    [5, 14, 2 * MiB], // freed in it
    [18, Infinity, 4 * MiB], // made in it, never freed
    [30, 40, 64 * MiB], // after it: not listed
    [0, 9, 32 * MiB], // before it: not listed
  ]);
  const r = rangeAllocations(t, 20, 10);
  assert.equal(r.count, 4);
  assert.equal(r.bytes, 15 * MiB);
  assert.deepEqual(
    r.rows.map((x) => [x.index, x.role]),
    [
      [1, 'made and freed'],
      [3, 'made'],
      [2, 'freed'],
      [0, 'alive throughout'],
    ],
  );
  assert.equal(r.rows[0]!.address, t.allocations.address[1]);
  const two = rangeAllocations(t, 10, 20, 2);
  assert.deepEqual(
    two.rows.map((x) => x.index),
    [1, 3],
  );
  assert.equal(two.count, 4, 'the rest are counted');
  assert.equal(rangeAllocations(t, 200, 300).count, 1, 'only the one never freed is alive late');
});

test('a range over the recorded never-frees run lists a, b and c, 4 MiB each', () => {
  const t = timelineFromRun(recordedRun('never-frees'));
  const r = rangeAllocations(t, 0, t.durationUs);
  assert.deepEqual(r.rows.map((x) => t.labels[t.allocations.label[x.index]!]).sort(), ['a', 'b', 'c']);
  assert.ok(r.rows.every((x) => x.size === 4 * MiB && x.role === 'made'));
});
