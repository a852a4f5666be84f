import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { ExitClassification } from '../../core/runner/protocol';
import { distEntry } from '../../main/paths';
import { forkLauncher, type ProcessLauncher } from '../../main/process/launcher';
import { ChildRequestError, ProcessExitError, RequestCancelledError, SupervisedProcess } from '../../main/process/supervised-process';
import { RunnerPool, SPARES_AFTER_FAULT } from '../../main/runner/runner-pool';
import { hooked, probedRunner, testRunnerPool } from '../helpers/test-runner';

// The supervisor's contract, exercised with real runner processes. Without a GPU a runner starts with
// no context; with one it opens a context. Either way it must be supervised the same. The runners are the test
// build's (test/helpers/test-runner.ts), which also answer `block`, a request that hangs as a driver call can.
const pool = testRunnerPool({ launcher: forkLauncher, warmSpare: true });
after(() => pool.dispose());

/** A fault as the pool meets one: the runner is killed while a request of its is under way, and that request ends. */
async function killedMidRequest(runner: Awaited<ReturnType<RunnerPool['acquire']>>['runner']): Promise<void> {
  const pending = hooked(runner)
    .request('block', { ms: 10_000 }, 30_000)
    .catch(() => undefined);
  process.kill(runner.pid!, 'SIGKILL');
  await pending;
}

const exitOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ProcessExitError, String(error));
    return error.exit;
  }
  assert.fail('the request should have failed');
};

test('a runner starts, reports its status, and keeps a warm spare beside it', async () => {
  const { runner, status } = await pool.acquire(0);
  assert.equal(status.pid, runner.pid);
  assert.equal(typeof status.contextReady, 'boolean');
  if (!status.contextReady) assert.equal(status.error?.name, 'WORKBENCH_DRIVER_NOT_LOADED');
  const again = await runner.request('status', {}, 5000);
  assert.equal(again.pid, runner.pid);
  const roles = pool
    .status()
    .runners.map((r) => r.role)
    .sort();
  assert.deepEqual(roles, ['active', 'spare']);
});

test('a runner that hangs is killed by the watchdog; the spare takes over and answers', async () => {
  const { runner } = await pool.acquire(0);
  const spare = pool.status().runners.find((r) => r.role === 'spare')!;
  const exit = await exitOf(hooked(runner).request('block', { ms: 60_000 }, 500));
  assert.equal(exit.kind, 'watchdog');
  assert.match(exit.summary, /did not answer within 500 ms/);
  const next = await pool.acquire(0);
  assert.notEqual(next.runner.pid, runner.pid);
  assert.equal(next.runner.pid, spare.pid, 'the warm spare was promoted, not a cold start');
  assert.equal((await next.runner.request('status', {}, 5000)).pid, next.runner.pid);
});

test('a runner killed mid-job, or crashing with SIGSEGV, is classified and replaced', async () => {
  for (const [signal, kind, words] of [
    ['SIGKILL', 'killed', /SIGKILL/],
    ['SIGSEGV', 'crashed', /segmentation fault/],
  ] as const) {
    const { runner } = await pool.acquire(0);
    const pending = hooked(runner).request('block', { ms: 10_000 }, 30_000);
    await new Promise((r) => setTimeout(r, 100));
    process.kill(runner.pid!, signal);
    const exit = await exitOf(pending);
    assert.equal(exit.kind, kind);
    assert.match(exit.summary, words);
    const next = await pool.acquire(0);
    assert.notEqual(next.runner.pid, runner.pid);
    await next.runner.request('status', {}, 5000);
  }
  const exits = pool.status().recentExits.map((e) => e.kind);
  assert.deepEqual(exits.slice(-3), ['watchdog', 'killed', 'crashed']);
});

test('a runner sent garbage answers with an error and stays alive; the shipped one has no test request', async () => {
  const runner = probedRunner(forkLauncher, distEntry('runner.js'));
  after(() => runner.stop());
  await runner.ready;
  for (const garbage of [
    { id: 77, type: 'launch-missiles' },
    { id: 78, type: 'run', plan: { version: 1 }, modules: [] },
    { type: 'block', ms: 10 },
  ]) {
    await assert.rejects(runner.requestUnchecked(garbage, 5000), (e: unknown) => {
      assert.ok(e instanceof ChildRequestError);
      assert.equal(e.error.name, 'WORKBENCH_BAD_REQUEST');
      return true;
    });
  }
  runner.sendRaw('not even an object');
  runner.sendRaw(null);
  assert.ok(runner.alive);
  assert.equal((await runner.request('status', {}, 5000)).pid, runner.pid);
});

test('after a fault more spares stand ready: three faults in a row are each followed by a warm runner, never a cold start', async () => {
  const faulty = testRunnerPool({ launcher: forkLauncher, warmSpare: true });
  try {
    await faulty.acquire(0);
    for (let fault = 0; fault < 3; fault++) {
      const { runner } = await faulty.acquire(0);
      // Let the spares finish starting, as they would between a user's runs.
      const spares = () => faulty.status().runners.filter((r) => r.role === 'spare');
      for (let i = 0; i < 100 && !spares().every((s) => s.pid); i++) await new Promise((r) => setTimeout(r, 20));
      const warm = spares().map((s) => s.pid);
      await killedMidRequest(runner);
      const next = await faulty.acquire(0);
      assert.ok(warm.includes(next.runner.pid!), `fault ${fault + 1}: the next runner ${next.runner.pid} was one of the warm spares ${warm}`);
      const after = faulty.status().runners.filter((r) => r.role === 'spare').length;
      assert.equal(after, SPARES_AFTER_FAULT, `fault ${fault + 1}: ${SPARES_AFTER_FAULT} spares after a fault`);
    }
  } finally {
    await faulty.dispose();
  }
});

test('the extra spares go when the fault window closes, and a cancel is not a fault', async () => {
  const pool2 = testRunnerPool({ launcher: forkLauncher, warmSpare: true, faultWindowMs: 400 });
  try {
    const spares = () => pool2.status().runners.filter((r) => r.role === 'spare').length;
    const { runner } = await pool2.acquire(0);
    await killedMidRequest(runner);
    await pool2.acquire(0);
    assert.equal(spares(), SPARES_AFTER_FAULT, `${SPARES_AFTER_FAULT} spares inside the window`);
    await new Promise((r) => setTimeout(r, 700));
    assert.equal(spares(), 1, 'one spare once it closed');
    const { runner: next } = await pool2.acquire(0);
    const blocked = hooked(next)
      .request('block', { ms: 10_000 }, 30_000)
      .catch(() => undefined);
    next.cancel();
    await blocked;
    await pool2.acquire(0);
    assert.equal(spares(), 1, 'a cancel keeps one spare');
  } finally {
    await pool2.dispose();
  }
});

test('cancelling a request that waits behind another drops it only; cancelling the one under way stops the runner', async () => {
  const pool3 = testRunnerPool({ launcher: forkLauncher, warmSpare: true });
  try {
    const { runner } = await pool3.acquire(0);
    const first = hooked(runner).request('block', { ms: 600 }, 30_000);
    const queued = new AbortController();
    const second = hooked(runner).request('block', { ms: 600 }, 30_000, queued.signal);
    queued.abort();
    await assert.rejects(second, (e: unknown) => e instanceof RequestCancelledError);
    assert.equal((await first).blockedMs, 600, 'the request under way went on');
    const started = performance.now();
    // The dropped one never ran: the next request is answered at once, not after another 600 ms.
    assert.equal((await runner.request('status', {}, 5000)).pid, runner.pid);
    assert.ok(performance.now() - started < 400, `${performance.now() - started} ms`);
    assert.ok(runner.alive, 'the runner lives');
    assert.equal((await runner.request('status', {}, 5000)).pid, runner.pid);
    const underWay = new AbortController();
    const third = hooked(runner).request('block', { ms: 60_000 }, 0, underWay.signal);
    await new Promise((r) => setTimeout(r, 100));
    underWay.abort();
    const exit = await exitOf(third);
    assert.equal(exit.kind, 'cancelled');
  } finally {
    await pool3.dispose();
  }
});

/** A launcher that notes when each child was started and when it first spoke (its ready). */
function timedLauncher(log: { started: number; ready: number | null }[]): ProcessLauncher {
  return {
    ...forkLauncher,
    launch: (entry, args, name) => {
      const child = forkLauncher.launch(entry, args, name);
      const times: { started: number; ready: number | null } = { started: performance.now(), ready: null };
      log.push(times);
      child.onMessage(() => (times.ready ??= performance.now()));
      return child;
    },
  };
}

/** The most runners that were starting (launched, not yet ready) at any one time. */
const mostStartingAtOnce = (log: { started: number; ready: number | null }[]) =>
  Math.max(...log.map((a) => log.filter((b) => b.started <= a.started && (b.ready ?? Infinity) > a.started).length));

test('spares started one at a time: never two runners starting at once, cold or after a fault, and all of them there in the end', async () => {
  for (const spareStarts of ['one-at-a-time', 'together'] as const) {
    const log: { started: number; ready: number | null }[] = [];
    const pool = testRunnerPool({ launcher: timedLauncher(log), warmSpare: true, spareStarts });
    const spares = () => pool.status().runners.filter((r) => r.role === 'spare');
    const settled = async (count: number) => {
      for (let i = 0; i < 250 && !(spares().length === count && log.every((l) => l.ready !== null)); i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(spares().length, count, `${spareStarts}: ${count} spares`);
    };
    try {
      const { runner } = await pool.acquire(0);
      await settled(1);
      await killedMidRequest(runner);
      await pool.acquire(0);
      await settled(SPARES_AFTER_FAULT);
      assert.equal(log.length, 2 + SPARES_AFTER_FAULT, `${spareStarts}: the first runner, its spare, then the spares after the fault`);
      if (spareStarts === 'one-at-a-time') assert.equal(mostStartingAtOnce(log), 1, 'one at a time');
      else assert.ok(mostStartingAtOnce(log) >= 2, 'together: the first runner and its spare start at once');
    } finally {
      await pool.dispose();
    }
  }
});

test('spares started one at a time: one that fails to start is followed by the next, not by a pool short of spares', async () => {
  let launches = 0;
  const failingThird: ProcessLauncher = {
    ...forkLauncher,
    // The third runner (the first spare after the fault) is a process that exits before it is ready.
    launch: (entry, args, name) => forkLauncher.launch(++launches === 3 ? '/nonexistent/runner.js' : entry, args, name),
  };
  const pool = testRunnerPool({ launcher: failingThird, warmSpare: true, spareStarts: 'one-at-a-time' });
  const readySpares = () => pool.status().runners.filter((r) => r.role === 'spare' && r.startupMs !== null).length;
  try {
    const { runner } = await pool.acquire(0);
    for (let i = 0; i < 250 && readySpares() < 1; i++) await new Promise((r) => setTimeout(r, 20));
    await killedMidRequest(runner);
    await pool.acquire(0);
    for (let i = 0; i < 250 && readySpares() < SPARES_AFTER_FAULT; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(readySpares(), SPARES_AFTER_FAULT);
    assert.equal(launches, 2 + SPARES_AFTER_FAULT + 1, 'the failed start was followed by another');
  } finally {
    await pool.dispose();
  }
});

test('a child that said it leaves after a sticky error is ended by the host at once, and its exit is the sticky error', async () => {
  // As an Electron utility process would be: it cannot know when its last message was read, so it lingers.
  const entry = join(mkdtempSync(join(tmpdir(), 'wb-lingering-')), 'lingering-child.cjs');
  writeFileSync(
    entry,
    `process.send({ type: 'ready', status: {} });
process.on('message', (m) => process.send({ type: 'error', id: m.id, error: { library: 'cuda', api: 'cuCtxSynchronize', code: 700, name: 'CUDA_ERROR_ILLEGAL_ADDRESS', message: 'an illegal memory access was encountered' }, sticky: true }));
setInterval(() => undefined, 1000);
`,
  );
  const child = new SupervisedProcess({ launcher: forkLauncher, entry, args: [], name: 'lingering runner', readyTimeoutMs: 10_000, role: 'runner' });
  await child.ready;
  const exited = new Promise<ExitClassification>((resolve) => child.once('exit', resolve));
  const started = performance.now();
  await assert.rejects(child.request('status', {}, 10_000), (e: unknown) => e instanceof ChildRequestError && e.sticky);
  const late = new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000).unref());
  const exit = await Promise.race([exited, late]);
  if (!exit) await child.stop(100);
  assert.equal(exit?.kind, 'sticky-cuda-error', 'ended by the host, not left to linger');
  assert.ok(performance.now() - started < 2000, `ended after ${Math.round(performance.now() - started)} ms`);
});

/**
 * A stand-in for a runner (the pool's choice is under test, not CUDA): it says it is ready after `delayMs`, with its
 * context open or not, and answers a status request with its pid.
 */
function standInRunner(dir: string, name: string, delayMs: number, contextReady: boolean): string {
  const entry = join(dir, `${name}.cjs`);
  writeFileSync(
    entry,
    `setTimeout(() => process.send({ type: 'ready', status: { contextReady: ${contextReady}, startupMs: ${delayMs} } }), ${delayMs});
process.on('message', (m) => process.send({ type: 'ok', id: m.id, result: { pid: process.pid } }));
process.on('disconnect', () => process.exit(0));
`,
  );
  return entry;
}

/** A stand-in for a runner that exits before it is ready. */
function dyingRunner(dir: string, afterMs: number): string {
  const entry = join(dir, 'dying.cjs');
  writeFileSync(entry, `setTimeout(() => process.exit(1), ${afterMs});\n`);
  return entry;
}

/** A launcher whose n-th child is the n-th entry given (the last one again after those), each child's pid and exit noted. */
function launchInTurn(entries: string[], living = new Set<number>()): ProcessLauncher {
  let n = 0;
  return {
    ...forkLauncher,
    launch: (_entry, args, name) => {
      const child = forkLauncher.launch(entries[Math.min(n++, entries.length - 1)]!, args, name);
      const pid = child.pid!;
      living.add(pid);
      child.onExit(() => living.delete(pid));
      return child;
    },
  };
}

test('while the active runner is still starting, a spare that is ready first takes its place; one without a context does not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-first-ready-'));
  // Slow enough to be still starting whatever the load; dispose ends it.
  const slow = standInRunner(dir, 'slow', 15_000, true);
  const fast = standInRunner(dir, 'fast', 100, true);
  const noContext = standInRunner(dir, 'no-context', 50, false);
  // Ready first: the spare. The run goes to it, long before the active runner would have been ready.
  let racing = new RunnerPool({ launcher: launchInTurn([slow, fast]), warmSpare: true });
  try {
    const started = performance.now();
    const { runner, status } = await racing.acquire(0);
    const waited = performance.now() - started;
    assert.ok(waited < 2000, `the spare ready after 100 ms took the run after ${Math.round(waited)} ms`);
    assert.equal(status.startupMs, 100);
    assert.equal((await runner.request('status', {}, 5000)).pid, runner.pid);
    const roles = racing
      .status()
      .runners.map((r) => r.role)
      .sort();
    assert.deepEqual(roles, ['active', 'spare'], 'the slow one is kept as the spare');
    assert.equal(racing.status().runners.find((r) => r.role === 'active')?.pid, runner.pid);
    // The next run goes to the same runner, as the active one.
    assert.equal((await racing.acquire(0)).runner, runner);
  } finally {
    await racing.dispose();
  }
  // A spare ready while the device's runner is still starting (it took the place of one lost to a fault when no
  // spare was ready): the next run takes the ready one at once, and two runs at once take the same.
  const fast50 = standInRunner(dir, 'fast-50', 50, true);
  racing = new RunnerPool({ launcher: launchInTurn([fast50, slow, fast]), warmSpare: true });
  try {
    const { runner: first } = await racing.acquire(0);
    for (let i = 0; i < 100 && racing.status().runners.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    first.kill('SIGKILL');
    for (let i = 0; i < 100 && racing.status().runners.filter((r) => r.role === 'spare' && r.contextReady).length < SPARES_AFTER_FAULT; i++)
      await new Promise((r) => setTimeout(r, 20));
    const active = racing.status().runners.find((r) => r.role === 'active');
    assert.equal(active?.contextReady, false, "the slow spare took the lost runner's place, still starting");
    const started = performance.now();
    const [a, b] = await Promise.all([racing.acquire(0), racing.acquire(0)]);
    const waited = performance.now() - started;
    assert.ok(waited < 1000, `a ready spare took the run after ${Math.round(waited)} ms`);
    assert.equal(a.runner, b.runner);
    assert.equal(a.status.startupMs, 100);
  } finally {
    await racing.dispose();
  }
  // A spare ready first but without its context open wins nothing: the run waits for the active runner.
  racing = new RunnerPool({ launcher: launchInTurn([standInRunner(dir, 'slowish', 600, true), noContext]), warmSpare: true });
  try {
    const { status } = await racing.acquire(0);
    assert.equal(status.startupMs, 600);
  } finally {
    await racing.dispose();
  }
});

test("two runs at once while the device's runner dies before it is ready: both get the one runner that took its place, and none is lost", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-first-ready-'));
  const living = new Set<number>();
  const pool = new RunnerPool({ launcher: launchInTurn([dyingRunner(dir, 100), standInRunner(dir, 'spare', 1500, true)], living), warmSpare: true });
  try {
    const [a, b] = await Promise.all([pool.acquire(0), pool.acquire(0)]);
    assert.equal(a.runner, b.runner, 'one runner for the device');
    assert.equal(a.status.contextReady, true);
    const listed = pool.status().runners;
    assert.equal(listed.filter((r) => r.role === 'active').length, 1);
    assert.equal(new Set(listed.map((r) => r.pid)).size, listed.length, 'each runner listed once');
    // Every child still alive is the pool's, active or spare: none was left out of both.
    const outside = () => [...living].filter((pid) => !pool.status().runners.some((r) => r.pid === pid));
    for (let i = 0; i < 100 && outside().length; i++) await new Promise((r) => setTimeout(r, 20));
    const now = pool.status().runners.map((r) => r.pid);
    assert.deepEqual(
      [...living].filter((pid) => !now.includes(pid)),
      [],
      'no living runner outside the pool',
    );
  } finally {
    await pool.dispose();
  }
  assert.equal(living.size, 0, 'dispose stopped every runner');
});
