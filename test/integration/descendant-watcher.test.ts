import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { MemorySample } from '../../core/memory/samples';
import { DescendantWatcher } from '../../main/memory/descendant-watcher';
import { MonitoredCommand } from '../../main/memory/monitored-command';
import { ProcReader } from '../../main/memory/proc-reader';
import { ProcessTracker } from '../../main/memory/process-tracker';
import { processRuns } from '../../main/process/process-state';

// The descendant watcher on this machine's real /proc and a real process tree (no GPU needed): a program that starts
// a child living a quarter of a second, which starts a grandchild of its own. NVML's listings reach the tracker about
// a second late; here the tracker is handed the child's pid (as a listing would name it, with no GPU measurement)
// only once the child is gone from /proc, and must still name it, as the program's child.
const work = mkdtempSync(join(tmpdir(), 'wb-descendants-'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const node = process.execPath;
const CHILD_MARK = 'wb-watched-child';
// The child: starts `sleep 0.15` (its own child), lives 250 ms, and leaves. The program waits for it, then a little more.
const CHILD = `require('child_process').spawn('sleep', ['0.15'], { stdio: 'ignore' }); setTimeout(() => {}, 250)`;
const PROGRAM = `
const { spawn } = require('child_process');
setTimeout(() => spawn(process.argv[1], ['-e', process.argv[2], '${CHILD_MARK}'], { stdio: 'ignore' }).on('exit', () => setTimeout(() => {}, 150)), 50);
`;

/**
 * Run as its own process (this file, with WB_WATCHER_SCENARIO set): watches a tree and leaves it to the watcher to
 * stop ('ends': the tree ends by itself; 'stop': stop() while it still runs). The process must then exit by itself:
 * a timer or a read left running would hold it. Prints what was recorded.
 */
async function scenario(kind: string): Promise<void> {
  const tree = spawn('/bin/sh', ['-c', kind === 'ends' ? 'sleep 0.2 & wait' : 'sleep 30 & wait'], { stdio: 'ignore', detached: true });
  tree.unref();
  const watcher = new DescendantWatcher(tree.pid!, new ProcReader(), { periodMs: 20 }).start();
  await sleep(100);
  if (kind === 'stop') watcher.stop();
  const stopped = performance.now();
  await new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if (watcher.running && performance.now() - stopped < 3000) return;
      clearInterval(poll);
      resolve();
    }, 20);
  });
  process.stdout.write(JSON.stringify({ tree: tree.pid, running: watcher.running, commands: watcher.log.all().map((r) => r.command) }));
}

if (process.env['WB_WATCHER_SCENARIO']) void scenario(process.env['WB_WATCHER_SCENARIO']);
else tests();

function tests(): void {
  test('the watcher records a short-lived child and grandchild (command line, parent, ancestry) before they die, and stops', async () => {
    const proc = new ProcReader();
    const command = MonitoredCommand.start([node, '-e', PROGRAM, node, CHILD], work);
    const watcher = new DescendantWatcher(command.pid, proc, { periodMs: 20 }).start();
    assert.equal(watcher.running, true);
    // Its period, and each command-line read's time limit (ProcReader's) while one runs.
    await command.exited;

    const child = watcher.log.all().find((r) => r.command?.endsWith(CHILD_MARK));
    assert.ok(child, `the child was recorded: ${JSON.stringify(watcher.log.all())}`);
    assert.equal(child.command, `${node} -e ${CHILD} ${CHILD_MARK}`);
    assert.equal(child.ppid, command.pid);
    assert.deepEqual(child.ancestors, [command.pid]);
    const grandchild = watcher.log.all().find((r) => r.ppid === child.pid);
    assert.ok(grandchild, 'the grandchild was recorded');
    assert.equal(grandchild.command, 'sleep 0.15');
    assert.deepEqual(grandchild.ancestors, [child.pid, command.pid]);
    assert.equal(grandchild.comm, 'sleep');
    assert.ok(child.lastSeenUs - child.firstSeenUs >= 100_000, 'followed while it ran');
    // The shell's reaper beside the program (main/process/sanitizer-launcher.ts) is its child too: recorded, harmless.
    assert.ok(watcher.log.size <= 6, `nothing else: ${watcher.log.size}`);

    // Everything is gone now; the record still answers for the pid, and the tracker names it from the record.
    assert.equal(processRuns(child.pid), false);
    assert.equal(proc.stat(child.pid), null);
    assert.equal(watcher.recordOf(child.pid, null), child);
    const tracker = new ProcessTracker(proc, { targetPid: null, hostPid: process.pid }, async () => null);
    tracker.followDescendants(watcher);
    tracker.setTarget(command.pid, `${node} -e …`);
    const t = Date.now() * 1000;
    const listing: MemorySample = { timeUs: t, devices: [], processes: [child.pid, command.pid].map((pid) => ({ device: 0, pid, usedBytes: 2 ** 30 })) };
    tracker.observe(listing);
    await tracker.named();
    tracker.refresh(Date.now() * 1000, t);
    const byPid = new Map(tracker.all().map((p) => [p.pid, p]));
    assert.equal(byPid.get(child.pid)!.command, child.command);
    assert.equal(tracker.relations().get(child.pid), 'target-descendant');
    assert.deepEqual(tracker.parents().get(child.pid), [command.pid]);
    assert.equal(byPid.get(command.pid)!.command, `${node} -e …`, 'the target carries the command it was started with');
    assert.equal(tracker.relations().get(command.pid), 'target');

    // The program is gone: the watcher stopped by itself.
    assert.ok(!processRuns(command.pid));
    await sleep(60);
    assert.equal(watcher.running, false);
    const walks = watcher.cost.walks;
    await sleep(60);
    assert.equal(watcher.cost.walks, walks, 'no walk after it stopped');
    console.log(`# ${walks} walks, ${(watcher.cost.totalUs / walks).toFixed(0)} µs a walk on average`);
  });

  test('the watcher stops, when the program ends and with stop(): nothing is left to hold the process (it exits by itself)', () => {
    for (const kind of ['ends', 'stop']) {
      const started = performance.now();
      const r = spawnSync(process.execPath, [__filename], { env: { ...process.env, WB_WATCHER_SCENARIO: kind }, encoding: 'utf8', timeout: 10_000 });
      assert.equal(r.status, 0, `${kind}: ${r.stderr}`);
      const out = JSON.parse(r.stdout) as { tree: number; running: boolean; commands: string[] };
      if (kind === 'stop') process.kill(-out.tree, 'SIGKILL');
      assert.equal(out.running, false, kind);
      assert.deepEqual(out.commands, [kind === 'ends' ? 'sleep 0.2' : 'sleep 30'], kind);
      assert.ok(performance.now() - started < 5000, `${kind}: the process exited by itself`);
    }
  });

  test('a pid that was never a descendant has no record; the log holds at most its bound', async () => {
    const command = MonitoredCommand.start(['/bin/sh', '-c', 'for i in 1 2 3 4 5 6; do sleep 300 & done; wait'], work);
    try {
      const watcher = new DescendantWatcher(command.pid, new ProcReader(), { periodMs: 20, maxRecords: 3 }).start();
      await sleep(150);
      watcher.stop();
      assert.equal(watcher.log.size, 3);
      assert.ok(watcher.log.dropped > 0, 'the others were counted, not kept');
      assert.equal(watcher.recordOf(process.pid, null), null);
      assert.equal(watcher.recordOf(1, null), null);
      await watcher.settled();
    } finally {
      await command.stop(200);
    }
  });
}
