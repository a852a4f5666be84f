import assert from 'node:assert/strict';
import { test } from 'node:test';

import { timelineFromRun } from '../../core/memory/run-timeline';
import { SPAN_LANES } from '../../core/memory/timeline';
import { announce } from '../../core/memory/timeline-describe';
import { timelineAction, TIMELINE_KEYS } from '../../core/memory/timeline-keys';
import { rangeFigures } from '../../core/memory/timeline-range';
import { recordedRun } from '../helpers/run-log';

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
