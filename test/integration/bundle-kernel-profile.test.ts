import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { BundleView } from '../../core/bundle/bundle-view';
import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { loadSample } from '../../main/services/sample-service';
import { createWorkbench } from '../../main/workbench';
import { ROOT } from '../helpers/cli';

// A kernel profile is data, like the run it was made with: it goes into the bundle (profile.json, schema 4) and comes
// back out of it read-only, checked against its schema on the way in and on the way out.
const dir = mkdtempSync(join(tmpdir(), 'wb-bundle-profile-'));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
const handlers = createHandlers(workbench, 'serve');
after(() => workbench.dispose());
type Reply<T> = { ok: true; value: T } | { ok: false; error: { code: string; message: string } };

const profile = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/ncu/profile-broken.json'), 'utf8')) as Record<string, unknown>;

async function request() {
  const plan = (await loadSample('oob-off-by-one', 'broken')).plan;
  // The run is the host's own: the result it opened, named by the id it answered.
  const opened = (await dispatch(handlers, 'run.open', { path: join(ROOT, 'test/fixtures/runs/oob-off-by-one.json') })) as Reply<{ outcomeId: string }>;
  assert.ok(opened.ok, JSON.stringify(opened));
  return { plan, outcomeId: opened.value.outcomeId, origin: 'sample oob-off-by-one (broken)', includeSources: false, redact: true, profile };
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

test('a bundle without a profile says none; a profile that is not one is refused before anything is written', async () => {
  const path = join(dir, 'without.zip');
  const exported = (await dispatch(handlers, 'bundle.export', { ...(await request()), profile: null, path })) as Reply<unknown>;
  assert.ok(exported.ok);
  const opened = (await dispatch(handlers, 'bundle.open', { path })) as Reply<BundleView>;
  assert.ok(opened.ok);
  assert.equal(opened.value.profile, null);
  assert.equal(opened.value.manifest.contents.profile, null);

  const fake = (await dispatch(handlers, 'bundle.preview', { ...(await request()), profile: { ...profile, version: 2 } })) as Reply<unknown>;
  assert.ok(!fake.ok);
  assert.equal(fake.error.code, 'BUNDLE_INPUT');
  assert.match(fake.error.message, /The kernel profile is not one the workbench wrote/);
});
