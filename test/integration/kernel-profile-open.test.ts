import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { Profile } from '../../core/kernel-profile/profile';
import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';

// A saved kernel profile is a file from outside, like a result: profile.open reads it in a reader process, checks it
// against the profile's schema, and refuses anything else in words. profile.run without a GPU says why it cannot run.
const dir = mkdtempSync(join(tmpdir(), 'wb-kernel-profile-'));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
const handlers = createHandlers(workbench, 'serve');
after(() => workbench.dispose());
type Reply = { ok: boolean; value?: unknown; error?: { code: string; message: string } };
const FIXTURES = join(process.cwd(), 'test/fixtures/ncu');

test('a recorded profile opens as it was saved; its counters and lines come back checked', async () => {
  const reply = (await dispatch(handlers, 'profile.open', { path: join(FIXTURES, 'profile-broken.json') })) as Reply;
  assert.ok(reply.ok, reply.error?.message);
  const profile = reply.value as Profile;
  assert.deepEqual(profile, JSON.parse(readFileSync(join(FIXTURES, 'profile-broken.json'), 'utf8')));
  assert.equal(profile.counters?.lines.find((l) => l.line === 7)?.stores?.sectors, 4194304);
});

test('what is not a profile is refused in words, and the host goes on', async () => {
  const cases: [string, string, RegExp][] = [
    ['plan.json', readFileSync(join(process.cwd(), 'samples/uncoalesced-access/plan-broken.json'), 'utf8'), /is not a profile \(/],
    ['bad-line.json', readFileSync(join(FIXTURES, 'profile-broken.json'), 'utf8').replace('"line": 7', '"line": -7'), /is not a profile \(counters\.lines/],
    ['text.json', 'not json', /is not valid JSON/],
  ];
  for (const [name, data, expected] of cases) {
    writeFileSync(join(dir, name), data);
    const reply = (await dispatch(handlers, 'profile.open', { path: join(dir, name) })) as Reply;
    assert.equal(reply.ok, false, name);
    assert.equal(reply.error!.code, 'FILE', name);
    assert.match(reply.error!.message, expected, `${name}: ${reply.error!.message}`);
  }
  assert.ok(((await dispatch(handlers, 'app.info', {})) as Reply).ok, 'the host still answers');
});

test('profile.run checks its request like run.plan', async () => {
  const reply = (await dispatch(handlers, 'profile.run', { plan: {}, step: -1 })) as Reply;
  assert.equal(reply.ok, false);
  assert.equal(reply.error!.code, 'BAD_REQUEST');
});

test('without a GPU, profile.run answers the run that could not happen, and no profile', async () => {
  const planPath = join(process.cwd(), 'samples/uncoalesced-access/plan-broken.json');
  const read = (await dispatch(handlers, 'plans.read', { path: planPath })) as Reply;
  const { plan } = read.value as { plan: unknown };
  const reply = (await dispatch(handlers, 'profile.run', { plan, planPath })) as Reply;
  assert.ok(reply.ok, reply.error?.message);
  const { outcome, profile } = reply.value as { outcome: { status: string; diagnosis: { headline: string } }; profile: Profile | null };
  assert.equal(profile, null);
  assert.equal(outcome.status, 'unavailable');
  assert.match(outcome.diagnosis.headline, /No NVIDIA driver found/);
});
