import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

import { forkLauncher } from '../../main/process/launcher';
import { listProcesses, processRuns } from '../../main/process/process-state';
import { loadSample } from '../../main/services/sample-service';
import { createWorkbench } from '../../main/workbench';

// Every child can be stopped, on a real GPU: a kernel that never ends is gone within 1 s of the watchdog
// firing, with no process left, and the next run succeeds; a host SIGKILLed mid-run (a kernel spinning on
// the GPU) and mid-compile leaves no process behind.

const alive = processRuns;
/** Processes in one of these groups, as "pid command". */
const inGroups = (groups: number[]): string[] => listProcesses().flatMap((p) => (groups.includes(p.pgrp) ? [`${p.pid} ${p.cmdline.slice(0, 80)}`] : []));

async function host(): Promise<void> {
  const workbench = createWorkbench(forkLauncher, { warmSpare: false });
  const { plan } = await loadSample('infinite-loop', 'broken');
  void workbench.runPlan(plan, { timeoutMs: 600_000 });
  await new Promise((r) => setTimeout(r, 4000)); // compiled, launched, spinning
  console.log(JSON.stringify({ runners: workbench.pool.status().runners.map((r) => r.pid) }));
  setInterval(() => undefined, 1000);
}

if (process.env['WB_GPU_LIFETIME_HOST']) {
  void host();
} else {
  test('a kernel that never ends: gone within 1 s of the watchdog firing, no process left, and the next run succeeds', async () => {
    const workbench = createWorkbench(forkLauncher);
    try {
      const broken = await loadSample('infinite-loop', 'broken');
      const fixed = await loadSample('infinite-loop', 'fixed');
      await workbench.runPlan(fixed.plan, { timeoutMs: 30_000 }); // compiled and warm
      const runner = workbench.pool.status().runners.find((r) => r.role === 'active')!.pid;
      const limit = 2000;
      const started = performance.now();
      const outcome = await workbench.runPlan(broken.plan, { timeoutMs: limit });
      const ms = performance.now() - started;
      assert.equal(outcome.exit?.kind, 'watchdog');
      const sinceWatchdog = ms - limit;
      console.log(`# the hung runner's exit was seen ${sinceWatchdog.toFixed(0)} ms after the watchdog fired`);
      assert.ok(sinceWatchdog < 1000, `${sinceWatchdog} ms`);
      assert.equal(alive(runner), false, 'the runner is gone');
      assert.deepEqual(inGroups([runner]), [], 'nothing of its group is left');
      const next = await workbench.runPlan(fixed.plan, { timeoutMs: 30_000 });
      assert.equal(next.diagnosis.kind, 'ok', next.diagnosis.headline);
    } finally {
      await workbench.dispose();
    }
  });

  test('a host SIGKILLed while a kernel spins on the GPU leaves no process behind', async () => {
    const child = spawn(process.execPath, [__filename], { env: { ...process.env, WB_GPU_LIFETIME_HOST: '1' }, stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.on('exit', (code) => reject(new Error(`the host exited (${code}) early: ${out}`)));
    });
    const groups = (JSON.parse(line) as { runners: number[] }).runners;
    assert.ok(groups.length > 0);
    child.kill('SIGKILL');
    const started = performance.now();
    while (inGroups(groups).length && performance.now() - started < 5000) await new Promise((r) => setTimeout(r, 25));
    console.log(`# after the host's SIGKILL its runners were gone in ${(performance.now() - started).toFixed(0)} ms`);
    assert.deepEqual(inGroups(groups), []);
  });
}
