import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { approxBytes } from '../../core/approx-bytes';
import { ApiError } from '../../core/api/channels';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { HeldGoneError, HeldResults } from '../../main/services/held-results';

const ROOT = join(__dirname, '../../..');
const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/never-frees.json'), 'utf8')) as RunOutcome;

test('an outcome held is given back by its id, the same data, and the id is not in it', () => {
  const held = new HeldResults();
  const answered = held.holdOutcome(outcome);
  assert.match(answered.outcomeId, /^run-[0-9a-f-]{36}$/);
  const { outcomeId, ...rest } = answered;
  assert.deepEqual(rest, outcome, 'the answer is the outcome, with its id beside it');
  assert.equal(held.outcome(outcomeId, 'save it'), outcome);
  assert.equal('outcomeId' in held.outcome(outcomeId, 'save it'), false, 'what is saved or bundled carries no id');
});

test('past its bound the oldest go first, and an id that is gone is said in words: what it named, what to do', () => {
  const size = approxBytes({ kind: 'outcome', outcome });
  const held = new HeldResults({ outcome: size * 2.5, timeline: size * 1.5, samples: size, sanitizer: size, profile: size });
  const [a, b, c] = [0, 1, 2].map(() => held.holdOutcome(outcome).outcomeId);
  // Timelines opened meanwhile, past their own bound, push out timelines only: the newest run results stay.
  held.holdTimelines([outcome, outcome, outcome] as never);
  assert.throws(
    () => held.outcome(a!, 'save it'),
    (e: unknown) =>
      e instanceof HeldGoneError &&
      e instanceof ApiError &&
      e.code === 'HELD_GONE' &&
      /^The workbench no longer holds this run’s result \(it keeps the newest it made or opened, within [\d.]+ MiB, only while it runs\): run it again \(or open its result file again\), then save it\.$/.test(
        e.message,
      ),
  );
  assert.equal(held.outcome(b!, 'save it'), outcome);
  assert.equal(held.outcome(c!, 'save it'), outcome);

  // An id from another session (or never given out) is the same clear refusal, naming what kind of id it was.
  assert.throws(() => held.entry('timeline-0f', 'export'), /no longer holds this memory timeline .*: open its file again, then export\./);
  assert.throws(() => held.entry('monitor:ui-1', 'export'), /no longer holds this monitoring session’s samples .*: start monitoring again, then export\./);
});

test('a result larger than its kind’s whole bound is not held, and naming it says so (not that it is gone)', () => {
  const size = approxBytes({ kind: 'outcome', outcome });
  const held = new HeldResults({ outcome: size / 2, timeline: size, samples: size, sanitizer: size, profile: size });
  const { outcomeId } = held.holdOutcome(outcome);
  assert.throws(
    () => held.outcome(outcomeId, 'export the bundle'),
    (e: unknown) =>
      e instanceof ApiError &&
      e.code === 'HELD_TOO_LARGE' &&
      /^This run’s result is too large for the workbench to keep \(about \d+ MiB; it keeps \d+ MiB of them\), so it cannot be named to export the bundle\. Make it smaller .*then export the bundle\.$/.test(
        e.message,
      ),
  );
});

test('an id of another kind is refused as such, not misread', () => {
  const held = new HeldResults();
  const [timelineId] = held.holdTimelines([{ version: 1 } as never]);
  assert.throws(
    () => held.outcome(timelineId!, 'save it'),
    (e: unknown) => e instanceof ApiError && e.code === 'HELD_KIND',
  );
});

test('a sanitizer report and a kernel profile are held by the id answered with them; one that is gone says what brings it back', () => {
  const held = new HeldResults();
  const report = { verdict: 'clean', headline: 'No errors' } as never;
  const answered = held.holdReport(report);
  assert.match(answered.reportId, /^sanitizer-[0-9a-f-]{36}$/);
  assert.equal(held.report(answered.reportId, 'export the bundle'), report);
  assert.equal('reportId' in held.report(answered.reportId, 'export the bundle'), false, 'what is bundled carries no id');
  const profileId = held.holdProfile({ kind: 'gpu-workbench-profile' } as never);
  assert.match(profileId, /^profile-[0-9a-f-]{36}$/);
  assert.deepEqual(held.profile(profileId, 'export the bundle'), { kind: 'gpu-workbench-profile' });

  assert.throws(
    () => held.report('sanitizer-00000000-0000-4000-8000-000000000000', 'export the bundle'),
    /^HeldGoneError: The workbench no longer holds this sanitizer report .*: run the sanitizer again \(or open its report again\), then export the bundle\.$/,
  );
  assert.throws(
    () => held.profile('profile-0f', 'export the bundle'),
    /no longer holds this kernel profile .*: profile the kernel again, then export the bundle\.$/,
  );
  assert.throws(
    () => held.profile(answered.reportId, 'export the bundle'),
    (e: unknown) => e instanceof ApiError && e.code === 'HELD_KIND' && e.message === 'That id names a sanitizer report, not a kernel profile.',
  );
  assert.throws(() => held.samples(profileId, 'export the bundle'), /^ApiError: That id names a kernel profile, not a monitoring session’s samples\.$/);
});

test('a monitoring session is held under its own id, and what it holds follows the stream', () => {
  const held = new HeldResults();
  const live = { series: { intervalMs: 100, devices: [], processes: [], samples: [], dropped: 0 } };
  held.holdSamples('monitor:ui-1', live);
  live.series = { ...live.series, dropped: 3 };
  const entry = held.entry('monitor:ui-1', 'export');
  assert.equal(entry.kind === 'samples' && entry.live.series.dropped, 3);
});

test('approxBytes counts strings, numbers and typed arrays, and stops where asked', () => {
  assert.ok(approxBytes('x'.repeat(1000)) >= 2000);
  assert.ok(approxBytes(new Float64Array(1000)) >= 8000);
  assert.ok(approxBytes({ a: [1, 2, 3] }) > approxBytes({ a: [] }));
  assert.ok(
    approxBytes(
      Array.from({ length: 100_000 }, () => 'abc'),
      1000,
    ) < 10_000,
    'the walk ends past stopAt',
  );
});
