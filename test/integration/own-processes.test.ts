import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { readProcessTable, workbenchPids } from '../../main/process/own-processes';
import { processRuns } from '../../main/process/process-state';
import { sanitizerLauncher } from '../../main/process/sanitizer-launcher';
import { RunnerPool } from '../../main/runner/runner-pool';

// Which processes are the workbench's own, read from this machine's /proc, and the runner pool under a stand-in for
// compute-sanitizer's process: like the tool, it starts its target (the real runner entry) as its child, passes the
// IPC channel through, and writes its report only after the target has left. What is tested is the host's handling
// of that process tree; the GPU suite runs the real tool (test/gpu/sanitizer.test.ts).
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-own-processes-'));
const log = join(work, 'tool.log');
/** The stand-in; `closesChannel`: it lets go of its own copy of the target's IPC channel (fd 4) once the target runs. */
const standIn = (closesChannel: boolean) => {
  const path = join(work, closesChannel ? 'compute-sanitizer-closing' : 'compute-sanitizer');
  writeFileSync(
    path,
    `#!/bin/bash
trap 'echo TERM >> "${log}"; exit 143' TERM
"$@" &
runner=$!
${closesChannel ? 'exec 4>&-' : ''}
wait $runner
code=$?
sleep 0.5
echo "report written after the runner left ($code)" >> "${log}"
exit $code
`,
    { mode: 0o755 },
  );
  return path;
};

const pools: RunnerPool[] = [];
after(async () => {
  await Promise.all(pools.map((p) => p.dispose()));
});
const underTool = (closesChannel = false) => {
  const pool = new RunnerPool({
    launcher: sanitizerLauncher(standIn(closesChannel), [], () => undefined),
    warmSpare: false,
    readyTimeoutMs: 30_000,
    stopGraceMs: 10_000,
  });
  pools.push(pool);
  return pool;
};

test("under the tool the pool holds the tool's pid; the runner that holds the context is its child, and counts as the workbench's own", async () => {
  const pool = underTool();
  const { runner, status } = await pool.acquire(0);
  const known = pool.status().runners.map((r) => r.pid);
  assert.deepEqual(known, [runner.pid]);
  // The runner says its own pid: not the one the pool knows. Before, only `known` was counted as the workbench's.
  assert.notEqual(status.pid, runner.pid);
  assert.ok(!known.includes(status.pid));
  assert.equal(readProcessTable().find((p) => p.pid === status.pid)?.ppid, runner.pid, "the runner is the tool's child");
  const own = workbenchPids(known);
  assert.ok(own.includes(runner.pid!), 'the tool');
  assert.ok(own.includes(status.pid), 'the runner under it');
  assert.ok(!own.includes(process.pid), 'not the host itself: it never holds a context');
  assert.ok(!own.includes(1));
  await pool.dispose();
  assert.ok(!workbenchPids([]).includes(status.pid), 'gone once it exited');
});

for (const closesChannel of [false, true])
  test(`a runner that left under the tool (crashed), the tool ${closesChannel ? 'closing' : 'keeping'} its copy of the channel: dispose waits for its report, sending it no signal`, async () => {
    writeFileSync(log, '');
    const pool = underTool(closesChannel);
    const { runner, status } = await pool.acquire(0);
    process.kill(status.pid, 'SIGKILL');
    // Until the host has seen the channel close, where it closes: a stop then finds the runner gone, not leaving.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(runner.alive, 'the tool is still finishing');
    const started = performance.now();
    await pool.dispose();
    const waited = performance.now() - started;
    assert.equal(readFileSync(log, 'utf8'), 'report written after the runner left (137)\n');
    assert.ok(!runner.alive);
    assert.ok(waited < 5000, `dispose waited ${Math.round(waited)} ms, not its 10 s grace`);
  });

test('the process table from /proc: each stat read bounded, a name that is not a pid or a stat that is not one skipped, zombies out, at most N entries', () => {
  const proc = join(work, 'proc');
  const entry = (name: string, text: string) => {
    mkdirSync(join(proc, name), { recursive: true });
    writeFileSync(join(proc, name, 'stat'), text);
  };
  const line = (pid: number, comm: string, state: string, ppid: number) =>
    `${pid} (${comm}) ${state} ${ppid} ${pid} ${pid} 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0`;
  entry('10', line(10, 'node', 'S', 1));
  entry('11', line(11, 'node', 'S', 10));
  entry('12', line(12, 'gone', 'Z', 10));
  entry('13', 'not a stat line');
  entry('14', `${line(14, 'x'.repeat(10_000), 'S', 10)}`);
  entry('self', line(10, 'node', 'S', 1));
  mkdirSync(join(proc, '15'));
  const table = readProcessTable(proc);
  assert.deepEqual(
    table.sort((a, b) => a.pid - b.pid),
    [
      { pid: 10, ppid: 1 },
      { pid: 11, ppid: 10 },
    ],
  );
  assert.equal(readProcessTable(proc, 1).length <= 1, true);
  assert.deepEqual(readProcessTable(join(work, 'no-such-proc')), []);
  assert.deepEqual(
    workbenchPids([], () => table, 10),
    [11],
  );
});

test("this host's own children and theirs, from the real /proc: counted while they run, not after", async () => {
  const child = spawn('/bin/sh', ['-c', 'sleep 30 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const grandchild = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
  const own = workbenchPids([]);
  assert.ok(own.includes(child.pid!), 'the child');
  assert.ok(own.includes(grandchild), 'its child');
  process.kill(grandchild, 'SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  for (let i = 0; i < 50 && processRuns(grandchild); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  const after = workbenchPids([]);
  assert.ok(!after.includes(child.pid!) && !after.includes(grandchild));
  assert.ok(existsSync('/proc/self/stat'));
});
