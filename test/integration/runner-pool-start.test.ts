import assert from 'node:assert/strict';
import { test } from 'node:test';

import { forkLauncher, type ProcessLauncher } from '../../main/process/launcher';
import { NO_WARM_UP } from '../../main/runner/warm-up';
import { testRunnerPool } from '../helpers/test-runner';

// A runner makes its warm-up run unless its pool says not to: the pools under compute-sanitizer and Nsight Compute
// do (main/services/sanitize-plan-service.ts, kernel-profile-service.ts), so the tool never checks or profiles it.

const recording = (seen: string[][]): ProcessLauncher => ({
  ...forkLauncher,
  launch: (entry, args, name) => {
    seen.push([...args]);
    return forkLauncher.launch(entry, args, name);
  },
});

test('a pool whose runners must not warm up starts them with the flag; by default they are started without it', async () => {
  for (const [warmUp, expected] of [
    [undefined, ['0']],
    [false, ['0', NO_WARM_UP]],
  ] as const) {
    const seen: string[][] = [];
    const pool = testRunnerPool({ launcher: recording(seen), warmSpare: false, ...(warmUp === undefined ? {} : { warmUp }) });
    try {
      await pool.acquire(0);
      assert.deepEqual(seen, [expected]);
    } finally {
      await pool.dispose();
    }
  }
});

test('prestart starts the runner the next run then takes: one process, started before it was asked for; a second prestart starts none', async () => {
  const seen: string[][] = [];
  const pool = testRunnerPool({ launcher: recording(seen), warmSpare: false });
  try {
    pool.prestart(0);
    pool.prestart(0);
    assert.equal(seen.length, 1, 'started at once, not at the run');
    const started = pool.status().runners.map((r) => r.pid);
    const { runner } = await pool.acquire(0);
    assert.deepEqual([seen.length, started], [1, [runner.pid]]);
  } finally {
    await pool.dispose();
  }
  pool.prestart(0);
  assert.equal(seen.length, 1, 'a pool shut down starts nothing');
});
