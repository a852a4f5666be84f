import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

import { startedByThisTest } from '../helpers/own-processes-tag';

// The GPU suite's "nothing left behind" checks count only what their own test process started (and what that left).

test('a process this test started, and one that process started and left to init, carry the tag; others do not', async () => {
  // A shell that starts a sleeper in the background and exits: the sleeper is orphaned to init, still carrying the tag.
  const shell = spawn('/bin/sh', ['-c', 'sleep 5 & echo $!'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const orphan = Number((await new Promise<string>((resolve) => shell.stdout.once('data', (d: Buffer) => resolve(d.toString())))).trim());
  await new Promise((resolve) => shell.once('exit', resolve));
  try {
    assert.equal(startedByThisTest(orphan), true);
    assert.equal(startedByThisTest(process.ppid), false, 'the process that started this test');
    assert.equal(startedByThisTest(1), false);
    assert.equal(startedByThisTest(2 ** 22 + 7), false, 'no such process');
  } finally {
    process.kill(orphan, 'SIGKILL');
  }
});
