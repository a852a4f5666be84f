import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { CheckEvent, CheckReport } from '../../core/check/check-model';
import { CHECK_NAMES } from '../../core/check/check-model';
import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { discoverLibraries } from '../../main/services/discovery-service';
import { readPlanFile } from '../../main/services/plan-files';
import { createWorkbench } from '../../main/workbench';
import { SAMPLES } from '../helpers/cli';
import { sanitizerStandIn } from '../helpers/sanitizer-stand-in';

// The app's Check everything, through the host's check.plan (what the button calls), on this machine without a GPU:
// every check streamed as it ends, each could not run with its reason, the report nothing-ran; the settings beside
// the plan's file used; and refused in words while another run holds compute-sanitizer, as sanitize.plan is.
const dir = mkdtempSync(join(tmpdir(), 'wb-check-channel-'));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
after(() => workbench.dispose());
const skip = { skip: discoverLibraries().cuda.loaded && 'this machine has a driver' };

type Reply = { ok: boolean; value?: unknown; error?: { code: string; message: string } };
const PLAN = join(SAMPLES, 'oob-off-by-one/plan.json');
/** A plan as the app sends it: its kernels' sources read in (readPlanFile). */
const planOf = async (path: string) => (await readPlanFile(path)).plan;

test('check.plan without a GPU: each check streamed as it ends, could not run with its reason; the report says nothing ran', skip, async () => {
  const handlers = createHandlers(workbench, 'serve');
  const events: CheckEvent[] = [];
  const reply = (await dispatch(
    handlers,
    'check.plan',
    { plan: await planOf(PLAN), planPath: PLAN, label: 'oob-off-by-one (broken)', timeoutMs: 3000 },
    { signal: new AbortController().signal, emit: (e) => events.push(e as CheckEvent) },
  )) as Reply;
  assert.equal(reply.ok, true, JSON.stringify(reply.error));
  const report = reply.value as CheckReport;
  assert.equal(report.verdict, 'nothing-ran');
  assert.match(report.headline, /This is not a pass\.$/);
  assert.equal(report.plans[0]!.label, 'oob-off-by-one (broken)');
  assert.equal(report.plans[0]!.configPath, null);
  const checks = events.flatMap((e) => (e.kind === 'check' ? [e.result] : []));
  assert.deepEqual(checks.map((c) => c.check).sort(), [...CHECK_NAMES].sort());
  for (const c of checks) {
    assert.equal(c.status, 'could-not-run');
    assert.match(c.summary, /^No NVIDIA driver found: /);
  }
  assert.deepEqual(
    events.filter((e) => e.kind === 'plan').map((e) => [e.kind === 'plan' && e.done, e.kind === 'plan' && e.total]),
    [[1, 1]],
  );
});

test('check.plan reads the gpu-workbench-check.json beside the plan, and refuses one with a mistake in words', skip, async () => {
  const folder = mkdtempSync(join(dir, 'plans-'));
  const plan = join(folder, 'plan.json');
  copyFileSync(join(SAMPLES, 'vector-add/plan.json'), plan);
  copyFileSync(join(SAMPLES, 'vector-add/vector_add.cu'), join(folder, 'vector_add.cu'));
  writeFileSync(join(folder, 'gpu-workbench-check.json'), JSON.stringify({ checks: ['run', 'memcheck'] }));
  const handlers = createHandlers(workbench, 'serve');
  const ctx = { signal: new AbortController().signal, emit: () => undefined };
  const reply = (await dispatch(handlers, 'check.plan', { plan: await planOf(plan), planPath: plan }, ctx)) as Reply;
  const report = reply.value as CheckReport;
  assert.equal(report.plans[0]!.configPath, join(folder, 'gpu-workbench-check.json'));
  assert.deepEqual(
    report.plans[0]!.checks.filter((c) => c.status !== 'off').map((c) => c.check),
    ['run', 'memcheck'],
  );
  writeFileSync(join(folder, 'gpu-workbench-check.json'), '{"uncoalescedRatio": "two"}');
  const bad = (await dispatch(handlers, 'check.plan', { plan: await planOf(plan), planPath: plan }, ctx)) as Reply;
  assert.equal(bad.error?.code, 'CHECK_CONFIG');
  assert.match(bad.error!.message, /^The check config is not valid:\n {2}.*gpu-workbench-check\.json, uncoalescedRatio: /);
});

test('check.plan while another run holds compute-sanitizer: refused at once, in words; nothing of it ran', skip, async () => {
  const { tool, started } = sanitizerStandIn(dir, 'synccheck-clean', 0);
  process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'] = tool;
  const handlers = createHandlers(workbench, 'serve', { runsPrograms: true });
  const first = new AbortController();
  const running = dispatch(
    handlers,
    'sanitize.program',
    { command: ['python3', 'slow.py'], cwd: dir, tool: 'memcheck' },
    { signal: first.signal, emit: () => undefined },
  ) as Promise<Reply>;
  for (const end = Date.now() + 10_000; !readFileSync(started, 'utf8').includes('slow.py');) {
    if (Date.now() > end) throw new Error('the stand-in did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
  const reply = (await dispatch(
    handlers,
    'check.plan',
    { plan: await planOf(PLAN), planPath: PLAN },
    { signal: new AbortController().signal, emit: () => undefined },
  )) as Reply;
  assert.equal(reply.error?.code, 'SANITIZER_BUSY');
  assert.match(reply.error!.message, /^Not started: compute-sanitizer was already running memcheck on python3 slow\.py/);
  first.abort();
  assert.equal((await running).error?.code, 'CANCELLED');
  // And the other way round: a check under way holds the tool for its four runs at once.
  const handlersAgain = createHandlers(workbench, 'serve', { runsPrograms: true });
  // Both asked for in the same turn: the check holds the gate from its first step.
  const plan = await planOf(PLAN);
  const check = dispatch(handlersAgain, 'check.plan', { plan, planPath: PLAN }, { signal: new AbortController().signal, emit: () => undefined });
  const meanwhile = (await dispatch(
    handlersAgain,
    'sanitize.plan',
    { plan, planPath: PLAN, tool: 'racecheck' },
    { signal: new AbortController().signal, emit: () => undefined },
  )) as Reply;
  assert.equal(meanwhile.error?.code, 'SANITIZER_BUSY');
  assert.match(meanwhile.error!.message, /Check everything, with its four tools at once; its Cancel is in the Check tab/);
  assert.equal(((await check) as Reply).ok, true);
});
