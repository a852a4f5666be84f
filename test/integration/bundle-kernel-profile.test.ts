import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { BundleView } from '../../core/bundle/bundle-view';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { bundleHandlers } from '../../main/handlers/bundle-handlers';
import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { HeldResults } from '../../main/services/held-results';
import { loadSample } from '../../main/services/sample-service';
import { createWorkbench } from '../../main/workbench';
import { ROOT } from '../helpers/cli';

// A kernel profile is data, like the run it was made with: it goes into the bundle (profile.json, schema 4), named by
// the id the host holds it under (profile.run answers it), and comes back out of it read-only, checked on the way out.
const dir = mkdtempSync(join(tmpdir(), 'wb-bundle-profile-'));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
// profile.run needs a GPU and Nsight Compute: here the run and its profile are held as profile.run holds them, and
// the bundle channels are the host's own, over the same holder.
const held = new HeldResults();
const handlers = { ...createHandlers(workbench, 'serve'), ...bundleHandlers(workbench, held) };
after(() => workbench.dispose());
type Reply<T> = { ok: true; value: T } | { ok: false; error: { code: string; message: string } };

const profile = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/ncu/profile-broken.json'), 'utf8')) as Record<string, unknown>;
const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/oob-off-by-one.json'), 'utf8')) as RunOutcome;

async function request() {
  const plan = (await loadSample('oob-off-by-one', 'broken')).plan;
  const { outcomeId } = held.holdOutcome(outcome);
  const profileId = held.holdProfile(profile as never);
  return { plan, outcomeId, origin: 'sample oob-off-by-one (broken)', includeSources: false, redact: true, profileId };
}

test('a profile goes into the bundle as profile.json and opens from it as it went in', async () => {
  const path = join(dir, 'with-profile.zip');
  const exported = (await dispatch(handlers, 'bundle.export', { ...(await request()), path })) as Reply<{ files: { name: string }[] }>;
  assert.ok(exported.ok, JSON.stringify(exported));
  assert.ok(exported.value.files.some((f) => f.name === 'profile.json'));
  const opened = (await dispatch(handlers, 'bundle.open', { path })) as Reply<BundleView>;
  assert.ok(opened.ok, JSON.stringify(opened));
  assert.equal(opened.value.manifest.schema, 4);
  assert.equal(opened.value.manifest.contents.profile, 'profile.json');
  assert.deepEqual(opened.value.profile, profile);
});

test('a bundle without a profile says none; a profile id the host does not hold, or of another kind, is refused in words before anything is written', async () => {
  const path = join(dir, 'without.zip');
  const exported = (await dispatch(handlers, 'bundle.export', { ...(await request()), profileId: null, path })) as Reply<unknown>;
  assert.ok(exported.ok);
  const opened = (await dispatch(handlers, 'bundle.open', { path })) as Reply<BundleView>;
  assert.ok(opened.ok);
  assert.equal(opened.value.profile, null);
  assert.equal(opened.value.manifest.contents.profile, null);

  const gonePath = join(dir, 'gone.zip');
  const gone = (await dispatch(handlers, 'bundle.export', {
    ...(await request()),
    profileId: 'profile-00000000-0000-4000-8000-000000000000',
    path: gonePath,
  })) as Reply<unknown>;
  assert.ok(!gone.ok);
  assert.equal(gone.error.code, 'HELD_GONE');
  assert.match(
    gone.error.message,
    /^The workbench no longer holds this kernel profile \(it keeps the newest it made or opened, within \d+ MiB, only while it runs\): profile the kernel again, then export the bundle\.$/,
  );
  assert.equal(existsSync(gonePath), false, 'nothing was written');

  // The data itself is no longer taken: a profile sent back is refused before any handler sees it.
  const sent = (await dispatch(handlers, 'bundle.preview', { ...(await request()), profile })) as Reply<unknown>;
  assert.ok(!sent.ok);
  assert.equal(sent.error.code, 'BAD_REQUEST');

  const asked = await request();
  const otherKind = (await dispatch(handlers, 'bundle.preview', { ...asked, profileId: asked.outcomeId })) as Reply<unknown>;
  assert.ok(!otherKind.ok);
  assert.equal(otherKind.error.code, 'HELD_KIND');
  assert.equal(otherKind.error.message, 'That id names a run’s result, not a kernel profile.');
});
