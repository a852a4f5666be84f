import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';
import { ROOT } from '../helpers/cli';

// The host's side of issue 12: the chosen device kept for the workspace beside the drafts, writes that
// name their full path, and a file that is not a result told apart in words.
const dir = mkdtempSync(join(tmpdir(), 'wb-workspace-'));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
const handlers = createHandlers(workbench, 'serve');
after(() => workbench.dispose());

type Reply = { ok: boolean; value?: unknown; error?: { code: string; message: string } };
const call = (channel: string, request: unknown) => dispatch(handlers, channel, request) as Promise<Reply>;

test('the chosen device or profile is kept on the host for the workspace, the last choice winning', async () => {
  assert.deepEqual((await call('workspace.get', {})).value, { profileId: null });
  // Choices made in quick succession land in order.
  await Promise.all(['shipped:nvidia-h100.json', 'shipped:nvidia-h200.json'].map((profileId) => call('workspace.set', { profileId })));
  assert.deepEqual((await call('workspace.get', {})).value, { profileId: 'shipped:nvidia-h200.json' });
  const file = join(dir, 'state', 'workspace.json');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { profileId: 'shipped:nvidia-h200.json' });
  assert.equal((await call('workspace.set', { profileId: 7 })).error?.code, 'BAD_REQUEST');
  assert.equal((await call('workspace.set', { theme: 'dark' })).error?.code, 'BAD_REQUEST');
});

test('writes from the UI name a full path: a relative one is refused, saying which folder it would have gone to', async () => {
  for (const [channel, request] of [
    ['files.write', { path: 'k.cu', text: 'x', expectedMtimeMs: null }],
    ['run.save', { path: 'result.json', outcomeId: 'run-gone' }],
    ['plans.write', { path: 'sub/plan.json', plan: {} }],
  ] as const) {
    const reply = await call(channel, request);
    assert.equal(reply.error?.code, 'RELATIVE_PATH', channel);
    assert.match(
      reply.error!.message,
      /Give a full path to save to \(starting with \/\): ".*" is relative, and would be written into the folder the workbench host was started in/,
    );
  }
  assert.equal(existsSync(join(process.cwd(), 'k.cu')), false);
  const full = join(dir, 'plan.json');
  assert.deepEqual((await call('plans.write', { path: full, plan: { version: 1 } })).value, { path: full });
});

test('opening a JSON file that is not a result says what it is instead', async () => {
  const reply = await call('run.open', { path: join(ROOT, 'samples/vector-add/plan.json') });
  assert.equal(reply.error?.code, 'FILE');
  assert.match(reply.error!.message, /plan\.json is a launch plan, not a run result\. Load it with Load plan/);
  assert.ok(typeof ((await call('app.info', {})).value as { homeDir: string }).homeDir === 'string');
});
