import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { checksAnswers, createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';

// Issue 27: each channel declares its answer, and the host checks every answer against it in development and tests.
process.env['GPU_WORKBENCH_STATE_DIR'] = join(mkdtempSync(join(tmpdir(), 'wb-answers-')), 'state');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
const real = createHandlers(workbench, 'serve');
after(() => workbench.dispose());

type Reply = { ok: boolean; value?: unknown; error?: { code: string; message: string } };
type Handlers = Parameters<typeof dispatch>[0];
const context = () => ({ signal: new AbortController().signal, emit: () => undefined });
/** The host's table with one handler answering what it is given instead. */
const answering = (channel: string, answer: unknown): Handlers => ({ ...real, [channel]: async () => answer }) as Handlers;

test(
  'the test runner (scripts/run-tests.mjs) runs with the answers checked',
  { skip: process.env['NODE_ENV'] !== 'test' && 'not run by scripts/run-tests.mjs' },
  () => {
    assert.equal(checksAnswers(), true);
  },
);

test('a handler answering a shape its channel does not declare is refused, naming the channel and the field', async () => {
  const reply = (await dispatch(answering('workspace.get', { profileId: 42 }), 'workspace.get', {}, context(), true)) as Reply;
  assert.equal(reply.ok, false);
  assert.equal(reply.error?.code, 'BAD_ANSWER');
  assert.match(reply.error!.message, /workspace\.get/);
  assert.match(reply.error!.message, /profileId/);

  const files = (await dispatch(
    answering('files.list', { dir: '/', parent: null, entries: [{ name: 'a', kind: 'folder', size: 1 }] }),
    'files.list',
    { dir: null },
    context(),
    true,
  )) as Reply;
  assert.equal(files.error?.code, 'BAD_ANSWER');
  assert.match(files.error!.message, /files\.list.*entries\.0\.kind/);

  const nothing = (await dispatch(answering('app.info', undefined), 'app.info', {}, context(), true)) as Reply;
  assert.equal(nothing.error?.code, 'BAD_ANSWER', 'an answer of nothing is not an answer');
  assert.match(nothing.error!.message, /app\.info.*the answer/);
});

test('a deep field of a large answer is checked too: a run outcome whose diagnosis has no headline', async () => {
  const outcome = (await dispatch(real, 'run.plan', { plan: { version: 1 } }, context())) as Reply;
  assert.equal(outcome.ok, true, 'the real answer passes its own declaration');
  const { diagnosis, ...rest } = outcome.value as { diagnosis: Record<string, unknown> };
  const broken = { ...rest, diagnosis: { ...diagnosis, headline: undefined } };
  const reply = (await dispatch(answering('run.plan', broken), 'run.plan', { plan: {} }, context(), true)) as Reply;
  assert.equal(reply.error?.code, 'BAD_ANSWER');
  assert.match(reply.error!.message, /run\.plan.*diagnosis\.headline/);
});

test('the real handlers’ answers pass their declarations, with or without a GPU and a compiler', async () => {
  const kernel = '__global__ void k(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }\n';
  for (const [channel, request] of [
    ['app.info', {}],
    ['discovery.get', {}],
    ['devices.list', {}],
    ['doctor.get', {}],
    ['profiles.list', {}],
    ['workspace.get', {}],
    ['drafts.list', {}],
    ['gallery.list', {}],
    ['samples.list', {}],
    ['files.list', { dir: tmpdir() }],
    ['runners.status', {}],
    ['compile.run', { source: kernel, sourceName: 'k.cu', options: {} }],
  ] as const) {
    const reply = (await dispatch(real, channel, request, context(), true)) as Reply;
    // Without a driver or a compiler some answer with an error in words; none answers what it does not declare.
    assert.notEqual(reply.error?.code, 'BAD_ANSWER', `${channel}: ${reply.error?.message}`);
    if (!channel.startsWith('compile.')) assert.equal(reply.ok, true, `${channel}: ${reply.error?.message}`);
  }
});

test('without the check (production) the answer is passed on as the handler gave it', async () => {
  const reply = (await dispatch(answering('workspace.get', { profileId: 42 }), 'workspace.get', {}, context(), false)) as Reply;
  assert.deepEqual(reply, { ok: true, value: { profileId: 42 } });
});

test('the check is on in development and tests only; GPU_WORKBENCH_CHECK_RESPONSES decides it outright', () => {
  assert.equal(checksAnswers({}), false, "a user's serve or CLI");
  assert.equal(checksAnswers({ NODE_ENV: 'development' }), true);
  assert.equal(checksAnswers({ NODE_ENV: 'test' }), true);
  assert.equal(checksAnswers({ NODE_ENV: 'production' }), false);
  assert.equal(checksAnswers({ NODE_ENV: 'production', GPU_WORKBENCH_CHECK_RESPONSES: '1' }), true);
  assert.equal(checksAnswers({ GPU_WORKBENCH_CHECK_RESPONSES: '0' }), false);
});
