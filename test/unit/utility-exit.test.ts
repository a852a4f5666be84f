import assert from 'node:assert/strict';
import { test } from 'node:test';

import { classifyExit, STICKY_EXIT_CODE, type ExitFacts } from '../../core/runner/protocol';
import {
  decodeWaitStatus,
  exitFromCode,
  exitFromGone,
  GoneRouter,
  watchUtilityExit,
  type ExitStatus,
  type GoneDetails,
} from '../../main/electron/utility-exit';

// The utility launcher's decisions, without Electron: what `exit` and `child-process-gone` say is told as the fork
// launcher's (code, signal), so a utility child's end is classified in the same words as a forked one's.

const facts = (status: ExitStatus, f: Partial<ExitFacts> = {}): ExitFacts => ({
  ...status,
  watchdogMs: null,
  stickyError: null,
  requested: false,
  beforeReady: false,
  ...f,
});

/** A raw POSIX wait status, as waitpid writes it. */
const exitedWith = (code: number) => code << 8;
const killedBy = (signal: number, core = false) => signal | (core ? 0x80 : 0);

test('a POSIX wait status is an exit code or a signal, the core-dump bit set aside', () => {
  assert.deepEqual(decodeWaitStatus(0), { code: 0, signal: null });
  assert.deepEqual(decodeWaitStatus(exitedWith(3)), { code: 3, signal: null });
  assert.deepEqual(decodeWaitStatus(exitedWith(STICKY_EXIT_CODE)), { code: STICKY_EXIT_CODE, signal: null });
  assert.deepEqual(decodeWaitStatus(killedBy(9)), { code: null, signal: 'SIGKILL' });
  assert.deepEqual(decodeWaitStatus(killedBy(11, true)), { code: null, signal: 'SIGSEGV' });
  assert.deepEqual(decodeWaitStatus(killedBy(6)), { code: null, signal: 'SIGABRT' });
  assert.equal(decodeWaitStatus(0x137f), null, 'a stopped process has not ended');
  assert.equal(decodeWaitStatus(-1), null);
  assert.equal(decodeWaitStatus(1.5), null);
});

test('every child-process-gone reason is classified as the fork launcher’s exit of the same kind', () => {
  const cases: [GoneDetails['reason'], number, ExitStatus, string][] = [
    ['clean-exit', 0, { code: 0, signal: null }, 'clean'],
    ['abnormal-exit', exitedWith(3), { code: 3, signal: null }, 'crashed'],
    ['killed', killedBy(9), { code: null, signal: 'SIGKILL' }, 'killed'],
    ['killed', killedBy(15), { code: null, signal: 'SIGTERM' }, 'killed'],
    ['crashed', killedBy(11, true), { code: null, signal: 'SIGSEGV' }, 'crashed'],
    ['crashed', killedBy(7), { code: null, signal: 'SIGBUS' }, 'crashed'],
    ['oom', killedBy(9), { code: null, signal: 'SIGKILL' }, 'killed'],
    ['memory-eviction', 0, { code: null, signal: 'SIGKILL' }, 'killed'],
    ['integrity-failure', exitedWith(1), { code: 1, signal: null }, 'crashed'],
  ];
  for (const [reason, exitCode, status, kind] of cases) {
    const told = exitFromGone({ reason, exitCode }, 'linux');
    assert.deepEqual(told, status, `${reason} ${exitCode}`);
    assert.equal(classifyExit(facts(told)).kind, kind, `${reason} ${exitCode}`);
    assert.deepEqual(classifyExit(facts(told)), classifyExit(facts(status)), 'the same words as a forked child that ended so');
  }
  // A signal no one counts as a crash or a kill is still that signal.
  assert.deepEqual(exitFromGone({ reason: 'abnormal-exit', exitCode: killedBy(10) }, 'linux'), { code: null, signal: 'SIGUSR1' });
});

test('a child that could not start is a failed start, in its own words; the sticky exit stays the sticky exit', () => {
  const launch = exitFromGone({ reason: 'launch-failed', exitCode: 1003 }, 'linux');
  assert.deepEqual(launch, { code: 1003, signal: null });
  const exit = classifyExit(facts(launch, { beforeReady: true }));
  assert.deepEqual([exit.kind, exit.reason], ['startup-failed', 'launch-failed']);
  assert.deepEqual(exitFromGone({ reason: 'launch-failed', exitCode: 0 }, 'linux'), { code: 1, signal: null }, 'never a clean code');
  assert.deepEqual(exitFromGone({ reason: 'abnormal-exit', exitCode: exitedWith(STICKY_EXIT_CODE) }, 'linux'), { code: STICKY_EXIT_CODE, signal: null });
});

test('on Windows the exit code is the process’s own: a crash keeps its exception code, a kill is a kill', () => {
  assert.deepEqual(exitFromGone({ reason: 'crashed', exitCode: 0xc0000005 }, 'win32'), { code: 0xc0000005, signal: null });
  assert.equal(classifyExit(facts(exitFromGone({ reason: 'crashed', exitCode: 0xc0000005 }, 'win32'))).kind, 'crashed');
  assert.deepEqual(exitFromGone({ reason: 'killed', exitCode: 1 }, 'win32'), { code: null, signal: 'SIGKILL' });
  assert.deepEqual(exitFromCode(768, 'win32'), { code: 768, signal: null });
});

test('the exit code alone: its own code, unless it can only be a wait status', () => {
  assert.deepEqual(exitFromCode(0, 'linux'), { code: 0, signal: null });
  assert.deepEqual(exitFromCode(9, 'linux'), { code: 9, signal: null }, 'exit(9), as far as anyone can tell');
  assert.deepEqual(exitFromCode(exitedWith(3), 'linux'), { code: 3, signal: null });
});

/** A watch with a timer run by hand. */
function harness() {
  const reports: ExitStatus[] = [];
  let pending: (() => void) | null = null;
  let waitedMs = 0;
  const watch = watchUtilityExit((s) => reports.push(s), {
    platform: 'linux',
    waitMs: 250,
    setTimer: (run, ms) => {
      pending = run;
      waitedMs = ms;
      return () => (pending = null);
    },
  });
  return { watch, reports, fire: () => pending?.(), waiting: () => pending !== null, waitedMs: () => waitedMs };
}

test('exit and child-process-gone, in either order, give one report; the gone event decides', () => {
  const exitFirst = harness();
  exitFirst.watch.exited(killedBy(9));
  assert.deepEqual(exitFirst.reports, [], 'a non-zero exit waits for its gone event');
  assert.equal(exitFirst.waitedMs(), 250);
  exitFirst.watch.gone({ reason: 'killed', exitCode: killedBy(9) });
  assert.deepEqual(exitFirst.reports, [{ code: null, signal: 'SIGKILL' }], 'not exit(9): SIGKILL');
  assert.equal(exitFirst.waiting(), false, 'the wait was cancelled');

  const goneFirst = harness();
  goneFirst.watch.gone({ reason: 'crashed', exitCode: killedBy(11) });
  goneFirst.watch.exited(11);
  assert.deepEqual(goneFirst.reports, [{ code: null, signal: 'SIGSEGV' }]);

  const clean = harness();
  clean.watch.exited(0);
  assert.deepEqual(clean.reports, [{ code: 0, signal: null }], 'a clean exit has no gone event to wait for');
  assert.equal(clean.waiting(), false);

  const noGone = harness();
  noGone.watch.exited(STICKY_EXIT_CODE);
  noGone.fire();
  assert.deepEqual(noGone.reports, [{ code: STICKY_EXIT_CODE, signal: null }], 'no gone event: the exit code as it came');
  noGone.watch.gone({ reason: 'abnormal-exit', exitCode: exitedWith(STICKY_EXIT_CODE) });
  assert.equal(noGone.reports.length, 1, 'reported once');
});

test('gone events go to the utility child they are about, by a service name no other child has', () => {
  const router = new GoneRouter();
  const runner = router.serviceName('runner for device 0');
  const worker = router.serviceName('compile worker');
  const spare = router.serviceName('runner for device 0');
  assert.equal(new Set([runner, worker, spare]).size, 3);
  const got: string[] = [];
  const watchOf = (name: string) => ({ exited: () => undefined, gone: (d: Pick<GoneDetails, 'reason'>) => got.push(`${name}:${d.reason}`) });
  router.watch(runner, watchOf('runner'));
  router.watch(worker, watchOf('worker'));
  assert.equal(router.route({ type: 'GPU', reason: 'crashed', exitCode: 11, name: runner }), false, 'not a utility process');
  assert.equal(router.route({ type: 'Utility', reason: 'crashed', exitCode: 11, name: 'Network Service' }), false, 'not ours');
  assert.equal(router.route({ type: 'Utility', reason: 'killed', exitCode: 9, name: worker, serviceName: 'node.mojom.NodeService' }), true);
  assert.equal(router.route({ type: 'Utility', reason: 'killed', exitCode: 9, name: worker }), false, 'delivered once');
  router.forget(runner);
  assert.equal(router.route({ type: 'Utility', reason: 'crashed', exitCode: 11, name: runner }), false, 'a child whose end was told is forgotten');
  assert.deepEqual(got, ['worker:killed']);
});
