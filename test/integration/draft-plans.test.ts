import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { DraftStore } from '../../main/services/draft-store';
import { loadSample } from '../../main/services/sample-service';

// Issue 26: the plan is part of the workspace. The host keeps it in the document's draft and, reading the state
// folder back, checks the draft and then its plan on its own: a damaged plan costs the plan, never the file's text.
const dir = () => join(mkdtempSync(join(tmpdir(), 'wb-draft-plans-')), 'drafts');

const draftWith = async (plan: unknown) => ({
  id: 'k1',
  path: '/w/kernel.cu',
  name: 'kernel.cu',
  text: '__global__ void addMatrices() {}',
  savedText: null,
  savedMtimeMs: null,
  order: 0,
  plan: {
    label: 'block-too-large (broken)',
    planPath: '/w/plan.json',
    sourcePaths: [],
    plan: plan ?? (await loadSample('block-too-large', 'broken')).plan,
    launch: { kernel: 'addMatrices', grid: '8,16', block: '64,32', smem: '0' },
  },
});

test('a draft keeps its plan: saved, listed back checked, with the launch as typed', async () => {
  const d = dir();
  const store = new DraftStore(d);
  await store.save(await draftWith(null));
  const [back] = await new DraftStore(d).list();
  assert.equal(back?.planProblem, undefined);
  assert.equal(back?.plan?.label, 'block-too-large (broken)');
  assert.deepEqual(back?.plan?.launch.block, '64,32');
  assert.equal(back?.plan?.plan.buffers.length, 3);
});

test('a plan damaged or planted in the state folder is dropped with its reason; the draft’s text comes back', async () => {
  const d = dir();
  const store = new DraftStore(d);
  await store.save(await draftWith(null));
  const file = join(d, 'k1.json');
  const stored = JSON.parse(readFileSync(file, 'utf8')) as { plan: { plan: { buffers: { count: unknown }[] } } };
  stored.plan.plan.buffers[0]!.count = -5;
  writeFileSync(file, JSON.stringify(stored));
  const [back] = await new DraftStore(d).list();
  assert.equal(back?.text, '__global__ void addMatrices() {}');
  assert.equal(back?.plan, null);
  assert.match(back?.planProblem ?? '', /buffers\.0\.count: must be at least 1 element/);

  // Nested past what any plan is, counted before it is parsed: that file is skipped, the others still listed.
  writeFileSync(join(d, 'deep.json'), `{"id":"deep","plan":${'['.repeat(5000)}${']'.repeat(5000)}}`);
  const listed = await new DraftStore(d).list();
  assert.deepEqual(
    listed.map((x) => x.id),
    ['k1'],
  );
});
