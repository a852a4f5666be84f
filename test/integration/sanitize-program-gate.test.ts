import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';

// A request never chooses a program on its own authority: serve runs the programs the browser names only when
// the person who started it said so (--allow-programs); Electron's user is at the machine.
const dir = mkdtempSync(join(tmpdir(), 'wb-program-gate-'));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
after(() => workbench.dispose());

type Reply = { ok: boolean; value?: unknown; error?: { code: string; message: string } };
const marker = join(dir, 'ran');
const request = { command: ['/bin/sh', '-c', `touch ${marker}`], cwd: dir, tool: 'memcheck' };

test('serve without --allow-programs refuses sanitize.program in words, and nothing runs', async () => {
  const reply = (await dispatch(createHandlers(workbench, 'serve'), 'sanitize.program', request)) as Reply;
  assert.equal(reply.ok, false);
  assert.equal(reply.error?.code, 'PROGRAMS_OFF');
  assert.match(reply.error!.message, /started without --allow-programs/);
  assert.equal(existsSync(marker), false);
  const info = (await dispatch(createHandlers(workbench, 'serve'), 'app.info', {})) as Reply;
  assert.equal((info.value as { runsPrograms: boolean }).runsPrograms, false);
});

test('serve without --allow-programs refuses diagnose.program in words, and nothing runs; with it, the same request runs', async () => {
  const program = { command: ['/bin/sh', '-c', `touch ${marker}`], cwd: dir, budgetMs: 30_000 };
  const refused = (await dispatch(createHandlers(workbench, 'serve'), 'diagnose.program', program)) as Reply;
  assert.equal(refused.ok, false);
  assert.equal(refused.error?.code, 'PROGRAMS_OFF');
  assert.match(refused.error!.message, /started without --allow-programs/);
  assert.equal(existsSync(marker), false);
  const ran = (await dispatch(createHandlers(workbench, 'serve', { runsPrograms: true }), 'diagnose.program', program)) as Reply;
  assert.ok(ran.ok, JSON.stringify(ran.error));
  assert.equal(existsSync(marker), true, 'the request the gate let through ran the program');
  rmSync(marker);
});

test('a host that runs programs still validates the request: names, counts, the folder', async () => {
  const handlers = createHandlers(workbench, 'serve', { runsPrograms: true });
  const bad = [
    { ...request, command: [] },
    { ...request, env: { '1X': 'y' } },
    { ...request, env: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`V${i}`, 'x'])) },
    { ...request, tool: 'valgrind' },
    { ...request, extra: true },
  ];
  for (const r of bad) assert.equal(((await dispatch(handlers, 'sanitize.program', r)) as Reply).error?.code, 'BAD_REQUEST', JSON.stringify(r).slice(0, 80));
  const missing = (await dispatch(handlers, 'sanitize.program', { ...request, cwd: join(dir, 'nowhere') })) as Reply;
  assert.match(missing.error!.message, /working folder .* does not exist/);
  assert.equal(existsSync(marker), false);
  assert.deepEqual(
    readdirSync(dir).sort(),
    ['state'].filter((d) => existsSync(join(dir, d))),
  );
});

test('sanitize.plan: a plan asking for a compiler option outside the allow-list is refused before anything runs', async () => {
  const previous = process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'];
  process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'] = '/bin/true'; // present, so the plan itself is what is judged
  try {
    const handlers = createHandlers(workbench, 'serve');
    const plan = {
      version: 1,
      kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(){}', options: { includePaths: [`$(touch ${marker})`], defines: ['X=1'] } }],
      buffers: [],
      steps: [{ op: 'sync' }],
    };
    const reply = (await dispatch(handlers, 'sanitize.plan', { plan, tool: 'memcheck' })) as Reply;
    assert.equal(reply.ok, true, JSON.stringify(reply.error));
    const { run } = reply.value as { run: { status: string; problem: { detail: string } | null } };
    assert.equal(run.status, 'invalid');
    assert.match(run.problem!.detail, /include/i);
    const flag = (await dispatch(handlers, 'sanitize.plan', {
      plan: { ...plan, kernels: [{ ...plan.kernels[0], options: { extra: ['-Xcompiler', '-fplugin=x'] } }] },
      tool: 'memcheck',
    })) as Reply;
    assert.equal((flag.value as { run: { status: string } }).run.status, 'invalid');
    assert.equal(existsSync(marker), false);
  } finally {
    if (previous === undefined) delete process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'];
    else process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'] = previous;
  }
});
