import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { pidNamespaceOf } from '../../core/memory/process-flags';
import type { MemorySample } from '../../core/memory/samples';
import { CommandNotFoundError, locateProgram, MonitoredCommand } from '../../main/memory/monitored-command';
import { ProcReader } from '../../main/memory/proc-reader';
import { ProcessTracker } from '../../main/memory/process-tracker';
import { processRuns } from '../../main/process/process-state';

// The monitor's host side against this machine's real /proc and real processes (no GPU needed): the facts the
// flags are decided on, the command it starts and stops, and a tracker fed the PIDs NVML would list. The
// samples below carry no GPU measurement: they only name PIDs, as NVML's process list does.
const work = mkdtempSync(join(tmpdir(), 'wb-monitor-proc-'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const GiB = 2 ** 30;
const listing = (timeUs: number, pids: number[]): MemorySample => ({
  timeUs,
  devices: [],
  processes: pids.map((pid) => ({ device: 0, pid, usedBytes: GiB })),
});
async function until(condition: () => boolean, ms = 5000): Promise<boolean> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (condition()) return true;
    await sleep(20);
  }
  return condition();
}

test('ProcReader reads this process: its parent, its command line, its owner, and the PID namespace it is in', async () => {
  const proc = new ProcReader();
  const self = proc.stat(process.pid)!;
  assert.equal(self.ppid, process.ppid);
  assert.equal(self.state === 'R' || self.state === 'S', true);
  assert.match((await proc.cmdline(process.pid))!, /node/);
  assert.equal(proc.uid(process.pid), process.getuid!());
  assert.equal(proc.namespace, pidNamespaceOf(readlinkSync('/proc/self/ns/pid')));
  assert.equal(proc.stat(2 ** 22 + 1), null, 'no such pid');
  assert.equal(await proc.cmdline(2 ** 22 + 1), null);
});

test('locating the program: a path as given, else PATH; a missing one or one not executable is said', () => {
  assert.equal(locateProgram('sh', '/', '/nonexistent:/bin'), '/bin/sh');
  assert.equal(locateProgram('/bin/sh', '/'), '/bin/sh');
  assert.equal(locateProgram('./sh', '/bin'), '/bin/sh');
  const text = join(work, 'script.sh');
  writeFileSync(text, 'exit 0\n');
  chmodSync(text, 0o644);
  assert.throws(() => locateProgram(text, '/'), CommandNotFoundError);
  assert.throws(() => locateProgram('surely-not-a-program', '/', '/bin'), /was not found on PATH \(\/bin\)/);
  assert.throws(() => locateProgram('', '/'), /No program to run/);
});

test('the command runs with argv as given (no shell parsing); its pid is the program’s own', async () => {
  const out = join(work, 'argv.txt');
  const tricky = '$(touch pwned) `id` ; echo "x" > y';
  const command = MonitoredCommand.start(
    [process.execPath, '-e', 'require("fs").writeFileSync(process.argv[1], process.argv[2]); setTimeout(() => {}, 1000)', out, tricky],
    work,
  );
  // The shell in front execs the program: the pid the monitor holds becomes node's.
  assert.ok(await until(() => readFileSync(`/proc/${command.pid}/cmdline`, 'utf8').startsWith(`${process.execPath}\0-e\0`)));
  const exit = await command.exited;
  assert.deepEqual(exit, { code: 0, signal: null });
  assert.equal(readFileSync(out, 'utf8'), tricky);
  assert.throws(() => readFileSync(join(work, 'pwned')), /ENOENT/);
});

test('stop reaches the command’s whole group (SIGTERM, then SIGKILL past the grace), and what it left running is seen first', async () => {
  const pidFile = join(work, 'grandchild.pid');
  // sh ignores SIGTERM here (and so does its child, which inherits that), so only the SIGKILL after the grace ends them.
  const command = MonitoredCommand.start(['/bin/sh', '-c', `trap '' TERM; sleep 300 & echo $! > ${pidFile}; wait; wait`], work);
  assert.ok(await until(() => readFileSync(pidFile, { encoding: 'utf8', flag: 'a+' }).trim() !== ''));
  const grandchild = Number(readFileSync(pidFile, 'utf8'));
  assert.ok(processRuns(grandchild));
  const started = performance.now();
  await command.stop(500);
  const ms = performance.now() - started;
  assert.ok(ms >= 400, `stopped after ${ms.toFixed(0)} ms: SIGKILL came before the grace`);
  assert.ok(await until(() => !processRuns(grandchild), 3000), 'the grandchild outlived the stop');
  assert.equal(command.running, false);

  // A command that exits by itself leaving a child: onExit sees the child alive, then the group is killed.
  const leftFile = join(work, 'left.pid');
  let seenAlive: boolean | null = null;
  const leaver = MonitoredCommand.start(['/bin/sh', '-c', `sleep 300 & echo $! > ${leftFile}`], work, () => {
    seenAlive = processRuns(Number(readFileSync(leftFile, 'utf8')));
  });
  await leaver.exited;
  assert.equal(seenAlive, true);
  assert.ok(await until(() => !processRuns(Number(readFileSync(leftFile, 'utf8'))), 3000), 'the child it left outlived the group kill');
});

test('the tracker on real processes: the target and its descendants, this host, and PID 1 foreign; a process gone but still listed is flagged after the grace', async () => {
  const proc = new ProcReader();
  const pidFile = join(work, 'tracked.pid');
  const command = MonitoredCommand.start(['/bin/sh', '-c', `sleep 300 & echo $! > ${pidFile}; wait`], work);
  assert.ok(await until(() => readFileSync(pidFile, { encoding: 'utf8', flag: 'a+' }).trim() !== ''));
  const descendant = Number(readFileSync(pidFile, 'utf8'));
  const tracker = new ProcessTracker(proc, { targetPid: command.pid, hostPid: process.pid }, async () => null);
  const t0 = Date.now() * 1000;
  const pids = [command.pid, descendant, process.pid, 1];
  tracker.observe(listing(t0, pids));
  await sleep(100); // command lines are read off the JS thread
  tracker.refresh(Date.now() * 1000, t0);
  const relations = tracker.relations();
  assert.equal(relations.get(command.pid), 'target');
  assert.equal(relations.get(descendant), 'target-descendant');
  assert.equal(relations.get(process.pid), 'workbench');
  const byPid = new Map(tracker.all().map((p) => [p.pid, p]));
  assert.match(byPid.get(command.pid)!.command!, /^\/bin\/sh -c sleep 300/);
  assert.equal(byPid.get(command.pid)!.flag, null);
  assert.equal(byPid.get(process.pid)!.flag, null);
  if (proc.stat(1)) {
    assert.equal(relations.get(1), 'other');
    assert.equal(byPid.get(1)!.flag?.kind, 'foreign');
  }
  assert.deepEqual(
    tracker.liveDescendants().map((d) => d.pid),
    [descendant],
  );

  // The target is stopped (with its group); NVML would keep listing its PID: flagged only past the grace.
  await command.stop(200);
  assert.ok(await until(() => !processRuns(command.pid)));
  const t1 = Date.now() * 1000;
  tracker.observe(listing(t1, [command.pid]));
  tracker.refresh(Date.now() * 1000, t1);
  assert.equal(tracker.all().find((p) => p.pid === command.pid)!.flag, null, 'within the grace');
  const t2 = t1 + 1_500_000;
  tracker.observe(listing(t2, [command.pid]));
  tracker.refresh(t2, t2);
  const flag = tracker.all().find((p) => p.pid === command.pid)!.flag!;
  assert.equal(flag.kind, proc.namespace === 'initial' ? 'exited' : 'not-visible');
  if (flag.kind === 'exited') assert.match(flag.text, /has exited, yet the driver still counts 1 GiB on GPU 0 for it/);
  // NVML lets go of it within a normal teardown: the flag is dropped.
  tracker.observe(listing(t2 + 100_000, []));
  tracker.refresh(t2 + 100_000, t2 + 100_000);
  if (flag.kind === 'exited') assert.equal(tracker.all().find((p) => p.pid === command.pid)!.flag, null);
});

test('a process neither the target nor the workbench started is foreign, and its owner is named', async () => {
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const tracker = new ProcessTracker(new ProcReader(), { targetPid: null, hostPid: 999_999 }, async () => null);
    const t = Date.now() * 1000;
    tracker.observe(listing(t, [other.pid!]));
    await sleep(100);
    tracker.refresh(Date.now() * 1000, t);
    const p = tracker.all()[0]!;
    assert.equal(p.command, 'sleep 30');
    assert.equal(p.flag?.kind, 'foreign');
    assert.match(p.flag!.text, /it belongs to you \(this user\)/);
  } finally {
    other.kill('SIGKILL');
  }
});
