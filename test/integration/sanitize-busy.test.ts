import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { SanitizerBusyError, SanitizerGate } from '../../main/services/sanitizer-gate';
import { locateComputeSanitizer } from '../../main/tools/compute-sanitizer';
import { createWorkbench } from '../../main/workbench';
import { ROOT } from '../helpers/cli';
import { sanitizerStandIn } from '../helpers/sanitizer-stand-in';

// One run under compute-sanitizer per host, whichever window asks: a second request is refused at once in words,
// never dropped or queued; the run goes on; once it ends (here: cancelled) the next one runs. The tool's process
// is a stand-in (as in sanitize-cli.test.ts): "slow.py" runs until stopped, anything else replays what the real
// tool wrote on an H100 for a clean synccheck run. What is tested is the host's handling of requests, not the tool.
const dir = mkdtempSync(join(tmpdir(), 'wb-sanitize-busy-'));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
const { tool, started } = sanitizerStandIn(dir, 'synccheck-clean', 0);
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
after(() => workbench.dispose());

type Reply = { ok: boolean; value?: unknown; error?: { code: string; message: string } };
const call = (
  handlers: ReturnType<typeof createHandlers>,
  channel: 'sanitize.program' | 'sanitize.plan',
  request: unknown,
  signal = new AbortController().signal,
) => dispatch(handlers, channel, request, { signal, emit: () => undefined }) as Promise<Reply>;
const program = (script: string, toolName = 'memcheck') => ({ command: ['python3', script], cwd: dir, tool: toolName });
const PLAN = join(ROOT, 'samples/oob-off-by-one/plan.json');

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !check();) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a second request while a program runs under the tool is refused at once, saying which runs, since when, and what to do; the first goes on', async () => {
  process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'] = tool;
  const handlers = createHandlers(workbench, 'serve', { runsPrograms: true });
  const first = new AbortController();
  const running = call(handlers, 'sanitize.program', program('slow.py'), first.signal);
  await until(() => readFileSync(started, 'utf8').includes('slow.py'));

  const t0 = performance.now();
  const second = await call(handlers, 'sanitize.program', program('quick.py', 'racecheck'));
  assert.ok(performance.now() - t0 < 2000, 'refused at once, not queued');
  assert.equal(second.ok, false);
  assert.equal(second.error?.code, 'SANITIZER_BUSY');
  assert.match(
    second.error!.message,
    /^Not started: compute-sanitizer was already running memcheck on python3 slow\.py \(since \d\d:\d\d:\d\d, for \d+ s\)\. The workbench runs one program under the tool at a time/,
  );
  assert.match(
    second.error!.message,
    /Wait for that run to finish, or cancel it \(Cancel in the Sanitizer tab of the window that started it; closing that window cancels it too/,
  );

  // A plan is refused alike (before anything compiles), and so is a request from another window of the same host.
  const plan = await call(handlers, 'sanitize.plan', { plan: JSON.parse(readFileSync(PLAN, 'utf8')), planPath: PLAN, tool: 'memcheck' });
  assert.equal(plan.error?.code, 'SANITIZER_BUSY');
  assert.match(plan.error!.message, /already running memcheck on python3 slow\.py/);
  assert.deepEqual(readFileSync(started, 'utf8').trim().split('\n'), ['slow.py'], 'nothing of the refused ones ran');

  // The first was not disturbed by them: cancelled by its own caller, it ends; then the next one runs and reports.
  first.abort();
  assert.equal((await running).error?.code, 'CANCELLED');
  const next = await call(handlers, 'sanitize.program', program('quick.py', 'synccheck'));
  assert.equal(next.ok, true, JSON.stringify(next.error));
  assert.equal((next.value as SanitizeReport).verdict, 'clean');
});

test('without compute-sanitizer every request says so, one after another: a failed run never leaves the host "busy"', async (t) => {
  const absent = join(dir, 'absent');
  process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'] = absent;
  if (locateComputeSanitizer().path) return t.skip(`compute-sanitizer is installed here (${locateComputeSanitizer().path})`);
  const handlers = createHandlers(workbench, 'serve', { runsPrograms: true });
  for (const [channel, request] of [
    ['sanitize.program', program('quick.py')],
    ['sanitize.plan', { plan: JSON.parse(readFileSync(PLAN, 'utf8')), planPath: PLAN, tool: 'memcheck' }],
    ['sanitize.program', program('quick.py', 'initcheck')],
  ] as const) {
    const reply = await call(handlers, channel, request);
    assert.equal(reply.error?.code, 'NO_SANITIZER', `${channel}: ${JSON.stringify(reply.error)}`);
    assert.match(reply.error!.message, /^compute-sanitizer was not found \(looked in .*absent.*\)\. It comes with the CUDA toolkit/);
  }
});

test('the gate: one at a time, its refusal read from the run under way with the clock given, and open again however a run ends', async () => {
  let now = Date.UTC(2026, 10, 23, 14, 0, 0);
  const gate = new SanitizerGate(() => now);
  let finish!: () => void;
  const a = gate.exclusive({ tool: 'synccheck', what: 'a plan (kernel k)' }, () => new Promise<string>((r) => (finish = () => r('a'))));
  assert.deepEqual(gate.current(), { tool: 'synccheck', what: 'a plan (kernel k)', startedAtMs: now });
  now += 65_000;
  await assert.rejects(
    gate.exclusive({ tool: 'memcheck', what: 'b' }, async () => 'b'),
    (e: unknown) => e instanceof SanitizerBusyError && e.running.what === 'a plan (kernel k)' && / for 1 min 5 s\)/.test(e.message),
  );
  finish();
  assert.equal(await a, 'a');
  assert.equal(gate.current(), null);
  await assert.rejects(
    gate.exclusive({ tool: 'memcheck', what: 'c' }, () => Promise.reject(new Error('the tool failed'))),
    /the tool failed/,
  );
  assert.equal(await gate.exclusive({ tool: 'memcheck', what: 'd' }, async () => 'd'), 'd', 'a failure left it open');
});
