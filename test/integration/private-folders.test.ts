import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { keepNewest } from '../../main/services/kept-files';
import { sweepAbandoned } from '../../main/services/private-folder';
import { processRuns } from '../../main/process/process-state';
import { ROOT, runCli } from '../helpers/cli';
import { sanitizerStandIn } from '../helpers/sanitizer-stand-in';

// The private folders of a diagnosis and of a run under compute-sanitizer carry their host's pid: a host killed with
// SIGKILL cannot remove its own, and the next start removes it (issue 25's "a SIGKILLed sanitize leaves its folder").

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > ms) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

test('a sweep removes the folders of hosts that are gone, of both kinds, and keeps a live host’s and everything else', async () => {
  const root = mkdtempSync(join(tmpdir(), 'wb-private-'));
  const names = [
    'gpu-workbench-diagnose-999999999-a',
    'gpu-workbench-sanitize-999999998-b',
    `gpu-workbench-sanitize-${process.pid}-c`,
    'gpu-workbench-sanitize-Xy12ab',
    'other',
  ];
  for (const n of names) mkdirSync(join(root, n));
  assert.deepEqual((await sweepAbandoned(root)).sort(), ['gpu-workbench-diagnose-999999999-a', 'gpu-workbench-sanitize-999999998-b']);
  assert.deepEqual(readdirSync(root).sort(), [`gpu-workbench-sanitize-${process.pid}-c`, 'gpu-workbench-sanitize-Xy12ab', 'other']);
});

test('gpu-workbench sanitize killed with SIGKILL leaves its folder; the next run under the tool removes it', async () => {
  const work = mkdtempSync(join(tmpdir(), 'wb-private-kill-'));
  const tmp = join(work, 'tmp');
  mkdirSync(tmp);
  const { tool } = sanitizerStandIn(work, 'memcheck-oob', 99);
  const env = { ...process.env, TMPDIR: tmp, GPU_WORKBENCH_COMPUTE_SANITIZER: tool };
  const cli = spawn(process.execPath, [join(ROOT, 'bin/gpu-workbench.js'), 'sanitize', '--', 'python3', 'slow.py'], { cwd: work, env, stdio: 'ignore' });
  const folder = () => readdirSync(tmp).filter((n) => n.startsWith(`gpu-workbench-sanitize-${cli.pid}-`));
  assert.ok(await until(() => folder().length === 1, 20_000), `its folder appears: ${readdirSync(tmp).join(', ')}`);
  const left = join(tmp, folder()[0]!);
  cli.kill('SIGKILL');
  assert.ok(await until(() => !processRuns(cli.pid!), 5_000));
  assert.ok(existsSync(left), 'a SIGKILLed host cannot remove its own folder');
  const next = await runCli(['sanitize', '--', 'python3', 'prog.py'], { env: { TMPDIR: tmp, GPU_WORKBENCH_COMPUTE_SANITIZER: tool } });
  assert.ok(next.code !== null, next.stderr);
  assert.equal(existsSync(left), false, 'the next run removed it');
  assert.deepEqual(
    readdirSync(tmp).filter((n) => n.startsWith('gpu-workbench-sanitize-')),
    [],
    'and its own',
  );
});

test('the snapshots the host keeps for the Memory tab are the newest only', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-kept-'));
  for (let i = 0; i < 25; i++) {
    const file = join(dir, `s${String(i).padStart(2, '0')}.pickle`);
    writeFileSync(file, 'x');
    utimesSync(file, 1_700_000_000 + i, 1_700_000_000 + i);
  }
  writeFileSync(join(dir, 'keep.txt'), 'not a snapshot');
  const removed = await keepNewest(dir, 20);
  assert.deepEqual(removed.sort(), ['s00.pickle', 's01.pickle', 's02.pickle', 's03.pickle', 's04.pickle']);
  assert.equal(readdirSync(dir).length, 21);
});
