import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { tmpdir } from 'node:os';
import { test } from 'node:test';

import { runInOwnGroup } from '../../main/process/group-program';

// The one spawn the diagnosis and the CUDA tools share: how its stop is reported when a cancel and the watchdog meet.

/** A program that ignores SIGTERM, so that a stop lasts its whole grace (SIGKILL ends it). */
const stubborn = (signal: AbortSignal, timeoutMs: number) =>
  runInOwnGroup({
    name: 'gpu-workbench-test',
    argv: ['/bin/sh', '-c', 'trap "" TERM; sleep 5 & wait; sleep 5'],
    cwd: tmpdir(),
    env: process.env,
    timeoutMs,
    stopGraceMs: 600,
    pipesAfterExitMs: 200,
    signal,
  });

for (const { first, cancelAtMs, timeoutMs, expected } of [
  { first: 'a cancel', cancelAtMs: 50, timeoutMs: 300, expected: { cancelled: true, timedOut: false } },
  { first: 'a timeout', cancelAtMs: 300, timeoutMs: 50, expected: { cancelled: false, timedOut: true } },
])
  test(`${first} whose stop outlasts the other cause is still reported as ${first}`, async () => {
    const controller = new AbortController();
    const running = stubborn(controller.signal, timeoutMs);
    setTimeout(() => controller.abort(), cancelAtMs);
    const run = await running;
    assert.deepEqual({ cancelled: run.cancelled, timedOut: run.timedOut, signal: run.signal }, { ...expected, signal: 'SIGKILL' });
  });

test('the caller’s signal keeps no listener once the run is over (a diagnosis’s signal outlives each of its runs)', async () => {
  const controller = new AbortController();
  const run = await runInOwnGroup({
    name: 'gpu-workbench-test',
    argv: ['/bin/true'],
    cwd: tmpdir(),
    env: process.env,
    timeoutMs: 10_000,
    stopGraceMs: 600,
    pipesAfterExitMs: 200,
    signal: controller.signal,
  });
  assert.deepEqual([run.code, run.cancelled, run.timedOut], [0, false, false]);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
});
