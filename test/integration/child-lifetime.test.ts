import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { test } from 'node:test';

import { CompileService } from '../../main/compile/compile-service';
import { findNvcc } from '../../main/compile/nvcc';
import { forkLauncher, type ProcessLauncher } from '../../main/process/launcher';
import { listProcesses, processRuns } from '../../main/process/process-state';
import { inHostGroupLauncher } from '../helpers/launchers';
import { hooked, testRunnerPool } from '../helpers/test-runner';

// Every child can be stopped: a runner whose JavaScript thread is blocked ends within the grace when
// told, and when the host itself is SIGKILLed its runners, compile workers, nvcc and nvcc's children
// all go. Both launchers: fork (own group, lifeline pipe) and the utilityProcess placement (in the
// host's group, no pipe: the child makes its own group and its reaper polls).
const LAUNCHERS: Record<string, ProcessLauncher> = { fork: forkLauncher, utility: inHostGroupLauncher };

// nvcc runs for minutes on this (2^16 force-inlined calls the optimiser cannot fold).
const SLOW = `template <int N> __device__ __forceinline__ float f(float x) { return f<N - 1>(x * 1.0001f) + f<N - 1>(x + 1.0f); }
template <> __device__ __forceinline__ float f<0>(float x) { return x; }
__global__ void k(float* o) { o[threadIdx.x] = f<16>(o[threadIdx.x]); }`;

const alive = processRuns;
/** Processes in one of these groups, as "pid command". */
const inGroups = (groups: number[]): string[] => listProcesses().flatMap((p) => (groups.includes(p.pgrp) ? [`${p.pid} ${p.cmdline.slice(0, 80)}`] : []));

async function until(check: () => boolean, ms: number): Promise<number> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > ms) return -1;
    await new Promise((r) => setTimeout(r, 25));
  }
  return performance.now() - started;
}

/** The host side, when this file is started as a host by the test below: a blocked runner and a slow compile. */
async function host(kind: string): Promise<void> {
  const launcher = LAUNCHERS[kind]!;
  const pool = testRunnerPool({ launcher, warmSpare: false });
  const compiler = new CompileService(launcher, null);
  const { runner } = await pool.acquire(0);
  void hooked(runner)
    .request('block', { ms: 600_000 }, 0)
    .catch(() => undefined);
  const nvcc = await findNvcc();
  if (nvcc.found) void compiler.compile({ source: SLOW, sourceName: 'slow.cu', options: { arch: 'sm_90' }, backend: 'nvcc' }, 600_000).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 1500)); // nvcc is running by now
  console.log(JSON.stringify({ runner: runner.pid, nvcc: nvcc.found }));
  setInterval(() => undefined, 1000);
}

if (process.env['WB_LIFETIME_HOST']) {
  void host(process.env['WB_LIFETIME_HOST']);
} else {
  for (const [kind, launcher] of Object.entries(LAUNCHERS)) {
    test(`${kind}: a runner blocked in a native call is gone within 1 s of stop(), its group with it`, async () => {
      const pool = testRunnerPool({ launcher, warmSpare: false });
      const { runner } = await pool.acquire(0);
      const pid = runner.pid!;
      void hooked(runner)
        .request('block', { ms: 60_000 }, 0)
        .catch(() => undefined);
      await new Promise((r) => setTimeout(r, 200));
      const started = performance.now();
      await runner.stop();
      const ms = performance.now() - started;
      console.log(`# ${kind}: stopped a blocked runner in ${ms.toFixed(0)} ms`);
      assert.ok(ms < 1000, `${ms} ms`);
      assert.equal(alive(pid), false);
      assert.ok((await until(() => inGroups([pid]).length === 0, 1000)) >= 0, inGroups([pid]).join('\n'));
      await pool.dispose();
    });

    test(`${kind}: a host killed with SIGKILL mid-run and mid-compile leaves no process behind`, async () => {
      const child = spawn(process.execPath, [__filename], { env: { ...process.env, WB_LIFETIME_HOST: kind }, stdio: ['ignore', 'pipe', 'inherit'] });
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          if (out.includes('\n')) resolve(out.split('\n')[0]!);
        });
        child.on('exit', (code) => reject(new Error(`the host exited (${code}) before it was ready: ${out}`)));
      });
      const { runner } = JSON.parse(line) as { runner: number };
      // Every group the host's children lead, and the compilers in them.
      const groups = listProcesses()
        .filter((p) => p.ppid === child.pid)
        .map((p) => p.pid);
      assert.ok(groups.includes(runner), `the runner ${runner} is among the host's children ${groups}`);
      const before = inGroups(groups);
      console.log(`# ${kind}: before the kill, ${before.length} processes in the children's groups:\n${before.map((b) => `#   ${b}`).join('\n')}`);
      assert.ok(before.some((p) => /cicc|nvcc|ptxas|gcc|cc1plus/.test(p)) || !existsSync('/usr/local/cuda/bin/nvcc'), 'a compiler is running');
      child.kill('SIGKILL');
      const ms = await until(() => inGroups(groups).length === 0, 5000);
      console.log(`# ${kind}: every child process gone ${ms.toFixed(0)} ms after the host's SIGKILL`);
      assert.ok(ms >= 0, `left behind:\n${inGroups(groups).join('\n')}`);
      // The killed worker's folder (the user's source in it) goes when the next worker starts.
      const folders = () => readdirSync(tmpdir()).filter((f) => groups.some((g) => f.startsWith(`gpu-workbench-nvcc-${g}-`)));
      if (existsSync('/usr/local/cuda/bin/nvcc')) {
        assert.ok(folders().length > 0, 'the killed compile left its folder');
        const next = new CompileService(launcher, null);
        await next.status();
        assert.ok((await until(() => folders().length === 0, 3000)) >= 0, folders().join(', '));
        await next.dispose();
      }
    });
  }
}
