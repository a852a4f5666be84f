import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { findNvcc } from '../../main/compile/nvcc';
import { ROOT, SAMPLES } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { activeTab, assertInViewport, chooseDevice, openApp, openResult, openSample, sizeName, VIEWPORTS, waitForCompile } from '../helpers/ui';

// Issue 12, items 1 and 6: the launch plan drives the UI. A sample's plan fills the launch panel of its own
// file, the validator checks the launch that would run, Run refuses it with the findings, and the device
// chosen stays chosen (kept on the host for the workspace).
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-plan-'));
const hasCompiler = findNvcc().then((n) => n.found);
const app = serveWithBrowser(work);

for (const viewport of VIEWPORTS) {
  test(`1 (${sizeName(viewport)}): a sample's plan fills its file's launch panel; the validator and Run check the launch that would run`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).click();
    await waitForCompile(page);
    const panel = page.getByTestId('launch-panel');
    await chooseDevice(page, /NVIDIA H100.*profile/);
    // A plan an earlier test loaded for vector_add.cu is kept with the file (plans are part of the workspace): back to the form.
    const unload = page.getByTestId('run-panel').getByTestId('unload-plan');
    if (await unload.count()) await unload.click();

    await openSample(page, 'block-too-large');
    await waitForCompile(page);
    assert.match(await activeTab(page).innerText(), /kernel\.cu/);
    // The panel shows the plan's launch, not the form's 4 × 256.
    assert.equal(await panel.getByLabel('Grid').inputValue(), '8,16');
    assert.equal(await panel.getByLabel('Block', { exact: true }).inputValue(), '64,32');
    assert.equal(await panel.getByLabel('Dynamic shared memory').inputValue(), '0');
    assert.match(await panel.getByTestId('plan-launch').innerText(), /Step 6 of the plan block-too-large \(broken\): addMatrices/);
    const finding = panel.getByTestId('finding-threads-per-block');
    assert.match(await finding.innerText(), /2048 threads per block; this device allows 1024/);
    assert.match(await panel.getByTestId('occupancy').innerText(), /✗ would fail on NVIDIA H100/);
    await assertInViewport(page, panel.getByLabel('Block', { exact: true }), 'the Block field');

    // Run refuses the launch with the validator's findings, before anything starts.
    const run = page.getByTestId('run-panel');
    assert.equal(await run.getByTestId('run-button').isDisabled(), true);
    const blockers = run.getByTestId('run-blockers');
    const said = await blockers.innerText();
    assert.match(said, /The launch would fail on NVIDIA H100 80GB HBM3 \(profile/);
    assert.match(said, /Step 6 \(launch addMatrices<<<\(8,16\), \(64,32\)>>>\): .*2048 threads per block; this device allows 1024/);
    assert.match(said, /Fix: Use \(64,16\) instead of \(64,32\)/);
    assert.match((await run.getByTestId('run-button').getAttribute('title')) ?? '', /2048 threads per block/);
    await assertInViewport(page, blockers, 'why Run is off');

    // The plan belongs to kernel.cu: vector_add.cu keeps its own launch and its run form.
    await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).click();
    assert.equal(await panel.getByLabel('Block', { exact: true }).inputValue(), '256');
    assert.equal(await run.getByTestId('attached-plan').count(), 0);
    await run.getByLabel('a count').waitFor();
    assert.doesNotMatch(await run.getByTestId('run-blockers').innerText(), /addMatrices/);

    // Back on kernel.cu, editing the panel edits the plan that would run.
    await page.getByTestId('tab').filter({ hasText: 'kernel.cu' }).click();
    assert.equal(await panel.getByLabel('Block', { exact: true }).inputValue(), '64,32');
    await panel.getByLabel('Block', { exact: true }).fill('32,32');
    await finding.waitFor({ state: 'detached' });
    assert.match(await panel.getByTestId('occupancy').innerText(), /✓ would launch on NVIDIA H100/);
    assert.doesNotMatch(await blockers.innerText(), /would fail/);
    const saved = join(work, `plan-${viewport.width}.json`);
    await run.getByLabel('Plan file').fill(saved);
    await run.getByRole('button', { name: 'Save plan' }).click();
    await run.getByText(`Plan saved to ${saved}`).waitFor();
    const plan = JSON.parse(readFileSync(saved, 'utf8')) as { steps: { op: string; block?: number[]; grid?: number[] }[] };
    assert.deepEqual(plan.steps[5], { ...plan.steps[5], op: 'launch', grid: [8, 16, 1], block: [32, 32, 1] });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`1 (${sizeName(viewport)}): a plan file and a recorded result load their launch into the panel of the kernel's own file`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await waitForCompile(page);
    const panel = page.getByTestId('launch-panel');
    const run = page.getByTestId('run-panel');

    // Load plan: the plan opens with its kernel's file (beside it), and its launch fills that file's panel.
    await run.getByLabel('Plan file').fill(join(SAMPLES, 'vector-add/plan.json'));
    await run.getByRole('button', { name: 'Load plan' }).click();
    await run.getByTestId('attached-plan').filter({ hasText: 'vector_add.cu' }).waitFor();
    assert.match(await activeTab(page).innerText(), /vector_add\.cu/);
    assert.equal(await panel.getByLabel('Grid').inputValue(), '3907');
    assert.equal(await panel.getByLabel('Block', { exact: true }).inputValue(), '256');
    assert.match(await panel.getByTestId('plan-launch').innerText(), /Step \d+ of the plan .*vector-add\/plan\.json: vecAdd/);

    // A recorded result: its launch, checked against the device that recorded it, in the file that defines its kernel.
    await openResult(page, join(ROOT, 'test/fixtures/runs/block-too-large.json'));
    const recorded = page.getByTestId('recorded-launch');
    assert.match(await recorded.innerText(), /Recorded launch: addMatrices<<<\(8,16\), \(64,32\)>>> on NVIDIA H100 80GB HBM3/);
    await assertInViewport(page, recorded.getByRole('button'), 'the button that checks the recorded launch');
    await recorded.getByRole('button').click();
    const dialog = page.getByTestId('locate-dialog');
    assert.match(await dialog.locator('h2').innerText(), /Which file defines addMatrices\?/);
    await dialog.getByLabel('Path of the file').fill(join(SAMPLES, 'block-too-large/kernel.cu'));
    await dialog.getByRole('button', { name: 'Open', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.match(await activeTab(page).innerText(), /kernel\.cu/);
    await waitForCompile(page);
    assert.equal(await panel.getByLabel('Grid').inputValue(), '8,16');
    assert.equal(await panel.getByLabel('Block', { exact: true }).inputValue(), '64,32');
    assert.match(await panel.getByLabel('Device').locator('option:checked').innerText(), /NVIDIA H100 80GB HBM3/);
    assert.match(await panel.getByTestId('finding-threads-per-block').innerText(), /2048 threads per block/);
    assert.match(
      await page.locator('.banner[role=alert]').innerText(),
      /The recorded launch of addMatrices is in the launch panel of kernel\.cu, checked against NVIDIA H100 80GB HBM3/,
    );
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`6 (${sizeName(viewport)}): the device or profile chosen stays chosen when a sample opens, and after a reload`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).click();
    await waitForCompile(page);
    const device = page.getByTestId('launch-panel').getByLabel('Device');
    await chooseDevice(page, /NVIDIA H100.*profile/);
    await chooseDevice(page, /NVIDIA H200.*profile/);

    await openSample(page, 'grid-too-large');
    await waitForCompile(page);
    assert.match(await device.locator('option:checked').innerText(), /NVIDIA H200/);
    assert.match(await page.getByTestId('occupancy').innerText(), /on NVIDIA H200/);
    await assertInViewport(page, device, 'the Device choice');

    // The choice is the workspace's, kept on the host: a reload (or a new tunnel port) still has it.
    await page.reload();
    await page.getByTestId('tab').first().waitFor();
    await waitForCompile(page);
    await page.getByTestId('launch-panel').waitFor();
    assert.match(await device.locator('option:checked').innerText(), /NVIDIA H200/);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('opening a sample while the drafts of an earlier visit are still being restored: one tab for the file, showing the plan', async (t) => {
  if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
  const viewport = VIEWPORTS[0]!;
  const first = await openApp(app.browser, app.serve.url, viewport);
  await openSample(first.page, 'grid-too-large');
  await waitForCompile(first.page);
  await first.page.waitForTimeout(800); // its draft is written
  await first.page.close();
  // A second visit that opens the same sample straight from the gallery, before the drafts come back.
  const { page, errors } = await openApp(app.browser, app.serve.url, viewport, '&view=gallery');
  await openSample(page, 'grid-too-large');
  await waitForCompile(page);
  await page.waitForTimeout(1000); // the drafts have been restored by now
  const tabs = page.getByTestId('tab').filter({ hasText: 'broken.cu' });
  assert.equal(await tabs.count(), 1, 'one tab for the file');
  assert.match(await activeTab(page).innerText(), /broken\.cu/);
  // The sample's plan launches 1 × 70000 blocks: its panel shows that, not the form's 4.
  assert.equal(await page.getByTestId('launch-panel').getByLabel('Grid').inputValue(), '1,70000');
  assert.deepEqual(errors, []);
  await page.close();
});
