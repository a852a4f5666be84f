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

test('a cancel whose stop outlasts the watchdog is still a cancel, not a timeout', async () => {
  const controller = new AbortController();
  const running = stubborn(controller.signal, 300);
  setTimeout(() => controller.abort(), 50);
  const run = await running;
  assert.deepEqual([run.cancelled, run.timedOut, run.signal], [true, false, 'SIGKILL']);
});

test('a timeout whose stop outlasts a later cancel is still a timeout', async () => {
  const controller = new AbortController();
  const running = stubborn(controller.signal, 50);
  setTimeout(() => controller.abort(), 300);
  const run = await running;
  assert.deepEqual([run.cancelled, run.timedOut, run.signal], [false, true, 'SIGKILL']);
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
