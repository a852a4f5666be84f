import assert from 'node:assert/strict';
import { test } from 'node:test';

import { clockTime, formatElapsed, sanitizerBusyMessage } from '../../core/sanitizer/sanitizer-busy';

// A second run under compute-sanitizer is refused in words: which run, since when, and what to do.

test('how long, as a person says it', () => {
  assert.deepEqual([0, 999, 45_000, 60_000, 125_400, 3_600_000, 3_780_000, -5].map(formatElapsed), [
    '0 s',
    '0 s',
    '45 s',
    '1 min',
    '2 min 5 s',
    '1 h',
    '1 h 3 min',
    '0 s',
  ]);
  assert.match(clockTime(Date.now()), /^\d\d:\d\d:\d\d$/);
});

test('the refusal names the tool, what runs, since when and for how long, why one at a time, and where its Cancel is', () => {
  const text = sanitizerBusyMessage(
    { tool: 'memcheck', what: 'the plan /work/samples/oob-off-by-one/plan.json', startedAtMs: 1_000_000 },
    1_000_000 + 125_000,
    'the Cancel button beside its progress, in the Sanitizer tab',
    () => '14:03:12',
  );
  assert.equal(
    text,
    'Not started: compute-sanitizer was already running memcheck on the plan /work/samples/oob-off-by-one/plan.json (since 14:03:12, for 2 min 5 s). ' +
      'The workbench runs one program under the tool at a time: it slows every kernel 10 to 100 times, and a second run would share the GPU with it. ' +
      'Wait for that run to finish, or cancel it (the Cancel button beside its progress, in the Sanitizer tab), then start this one again.',
  );
});

test('a command line of any length is quoted within a bound', () => {
  const text = sanitizerBusyMessage({ tool: 'racecheck', what: `python3 ${'x'.repeat(10_000)}.py`, startedAtMs: 0 }, 1000, 'there', () => '00:00:00');
  assert.ok(text.length < 700, `${text.length} characters`);
  assert.match(text, /running racecheck on python3 x+… \(since 00:00:00, for 1 s\)/);
});
