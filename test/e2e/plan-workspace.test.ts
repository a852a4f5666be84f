import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { findNvcc } from '../../main/compile/nvcc';
import { seriousViolations, unnamedOrDuplicateControls } from '../helpers/a11y';
import { launchChromium, openWorkbenchPage } from '../helpers/browser';
import { ROOT } from '../helpers/cli';
import { startServe, type ServeProcess } from '../helpers/serve';
import { assertInViewport, chooseDevice, openResult, openSample, sizeName, VIEWPORTS, waitForCompile, type Viewport } from '../helpers/ui';

// Issue 26, items 1, 2 and 11: the plan is part of the workspace. A sample's plan and its verdict survive a reload
// and a restart of serve; the plan's buffers, scalars and steps are shown and editable (steps added, removed and
// moved), and the validator checks the whole plan — its steps' order, every allocation against the device's memory —
// before Run; the shared-memory limits are said the same way by the
// compile and by the launch panel. The device is the shipped H100 profile (this machine has no GPU).
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-plan-ws-'));
const hasCompiler = findNvcc().then((n) => n.found);
const app = {} as { browser: Browser; serve: ServeProcess };
/** One serve per viewport's state folder, so that a restart starts from what that viewport's tests left. */
const stateOf = (viewport: Viewport) => ({ GPU_WORKBENCH_STATE_DIR: join(work, `state-${viewport.width}`), GPU_WORKBENCH_CACHE_DIR: join(work, 'cache') });
before(async () => {
  app.browser = await launchChromium();
});
after(async () => {
  await app.browser?.close();
  await app.serve?.stop();
});

/** A page of the app, its errors collected; in a context axe can be loaded into (the page's CSP refuses inline scripts). */
const openPage = (url: string, viewport: Viewport) => openWorkbenchPage(app.browser, url, { viewport, ready: false });

/** The tab of a sample's file (several samples have a kernel.cu: the tab's title says which). */
const sampleTab = (page: Page, sample: string, file = 'kernel.cu') => page.locator(`[data-testid="tab"][title*="${sample}/${file}"]`);

/** The plan's steps in the Run section, as they read (without their buttons). */
const stepLabels = (page: Page) => page.getByTestId('run-panel').getByTestId('plan-steps').getByTestId('plan-step-label').allInnerTexts();

async function axeClean(page: Page, view: string): Promise<void> {
  assert.deepEqual([...(await seriousViolations(page)), ...(await unnamedOrDuplicateControls(page))], [], view);
}

/** What the 64 × 32 sample's launch panel shows: its plan's launch, refused on the H100. */
async function assertBlockTooLarge(page: Page, when: string): Promise<void> {
  await sampleTab(page, 'block-too-large').click();
  const panel = page.getByTestId('launch-panel');
  await waitForCompile(page);
  assert.equal(await panel.getByLabel('Grid').inputValue(), '8,16', when);
  assert.equal(await panel.getByLabel('Block', { exact: true }).inputValue(), '64,32', when);
  assert.match(await panel.getByTestId('plan-launch').innerText(), /Step 6 of the plan block-too-large \(broken\): addMatrices/, when);
  assert.match(await panel.getByTestId('finding-threads-per-block').innerText(), /2048 threads per block; this device allows 1024/, when);
  assert.match(await panel.getByTestId('occupancy').innerText(), /✗ would fail on NVIDIA H100/, when);
  await assertInViewport(page, panel.getByTestId('occupancy'), `the verdict ${when}`);
  assert.equal(await page.getByTestId('run-panel').getByTestId('run-button').isDisabled(), true, when);
}

for (const viewport of VIEWPORTS) {
  test(`1 (${sizeName(viewport)}): the 64 × 32 sample's plan and its ✗ verdict are still there after a reload and after restarting serve`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    await app.serve?.stop();
    app.serve = await startServe(stateOf(viewport));
    const { page, errors } = await openPage(app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await openSample(page, 'block-too-large');
    await chooseDevice(page, /NVIDIA H100.*profile/);
    await assertBlockTooLarge(page, 'when opened');
    await page.waitForTimeout(800); // the draft, and the plan with it, is written

    await page.reload();
    await page.getByTestId('tab').first().waitFor();
    await assertBlockTooLarge(page, 'after a reload');
    assert.equal(await page.locator('.banner[role=alert]').count(), 0, 'nothing was dropped, so nothing is said to be');
    assert.deepEqual(errors, []);
    await page.context().close();

    // A new serve on the same state folder: a new port, so a new origin; the plan is the workspace's, on the host.
    await app.serve.stop();
    app.serve = await startServe(stateOf(viewport));
    const again = await openPage(app.serve.url, viewport);
    await again.page.getByTestId('tab').first().waitFor();
    await assertBlockTooLarge(again.page, 'after restarting serve');
    assert.deepEqual(again.errors, []);
    await again.page.context().close();
  });

  test(`2 (${sizeName(viewport)}): the 256 GiB buffer is refused before Run, named with the figures; the buffers table edits the plan that runs`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    app.serve ??= await startServe(stateOf(viewport));
    const { page, errors } = await openPage(app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await openSample(page, 'allocation-too-large');
    await chooseDevice(page, /NVIDIA H100.*profile/);
    await waitForCompile(page);
    const panel = page.getByTestId('launch-panel');
    const run = page.getByTestId('run-panel');

    // The launch itself is fine; the allocation is not, and the verdict says so.
    const finding = panel.getByTestId('finding-buffer-larger-than-device');
    assert.match(await finding.innerText(), /Buffer x asks for 256 GiB; the NVIDIA H100 80GB HBM3 has 79\.18 GiB in all: 3\.2× too large\./);
    assert.match(await finding.innerText(), /CUDA_ERROR_OUT_OF_MEMORY \(2\)/);
    assert.match(await panel.getByTestId('occupancy').innerText(), /✗ would fail on NVIDIA H100/);
    await assertInViewport(page, finding, 'the buffer that does not fit');

    // Run is off, for that reason, before anything starts.
    const button = run.getByTestId('run-button');
    assert.equal(await button.isDisabled(), true);
    const blockers = await run.getByTestId('run-blockers').innerText();
    assert.match(blockers, /The plan asks for more memory than there is \(checked against NVIDIA H100 80GB HBM3 \(profile/);
    assert.match(blockers, /Buffer x asks for 256 GiB; the NVIDIA H100 80GB HBM3 has 79\.18 GiB in all: 3\.2× too large/);
    assert.match((await button.getAttribute('title')) ?? '', /Buffer `x` asks for 256 GiB/);

    // The plan's buffers, scalars and steps, as they will run.
    const buffers = run.getByTestId('plan-buffers');
    const x = buffers.getByTestId('plan-buffer-x');
    await assertInViewport(page, x, 'the buffer x in the plan table');
    assert.equal(await x.getByLabel('Type of x').inputValue(), 'f32');
    assert.equal(await x.getByLabel('Count of x').inputValue(), '68719476736');
    assert.equal(await x.getByTestId('plan-buffer-bytes').innerText(), '256 GiB');
    assert.equal(await x.getByLabel('Initializer of x').inputValue(), 'none');
    assert.match(await run.getByTestId('plan-scalars').innerText(), /n\s+fill, step 2\s+u64/);
    assert.equal(await run.getByLabel('Value of step 2 argument 3 (n)').inputValue(), '68719476736');
    assert.deepEqual(await stepLabels(page), ['alloc x', 'launch fill<<<1024, 256>>> — in the launch panel', 'free x']);
    await axeClean(page, 'the launch panel refusing the buffer, and the plan table');

    // One truth: a smaller count is the plan that would run, and the verdict follows.
    await x.getByLabel('Count of x').fill('268435456');
    await finding.waitFor({ state: 'detached' });
    assert.equal(await x.getByTestId('plan-buffer-bytes').innerText(), '1 GiB');
    assert.match(await panel.getByTestId('occupancy').innerText(), /✓ would launch on NVIDIA H100/);
    assert.doesNotMatch(await run.getByTestId('run-blockers').innerText(), /memory/);
    // A count being typed is not taken until it is one.
    await x.getByLabel('Count of x').fill('12x');
    assert.equal(await x.getByLabel('Count of x').getAttribute('aria-invalid'), 'true');
    assert.equal(await x.getByTestId('plan-buffer-bytes').innerText(), '1 GiB');
    await x.getByLabel('Count of x').fill('274877906944'); // 1 TiB of f32
    await finding.waitFor();
    assert.match(await finding.innerText(), /Buffer x asks for 1 TiB; the NVIDIA H100 80GB HBM3 has 79\.18 GiB in all: 12\.9× too large/);
    await x.getByLabel('Count of x').fill('268435456');
    await finding.waitFor({ state: 'detached' });

    // The edit is the plan's: kept with the file across a reload.
    await page.waitForTimeout(800);
    await page.reload();
    await sampleTab(page, 'allocation-too-large').click();
    await waitForCompile(page);
    assert.equal(await page.getByTestId('plan-buffer-x').getByLabel('Count of x').inputValue(), '268435456');
    assert.match(await page.getByTestId('occupancy').innerText(), /✓ would launch on NVIDIA H100/);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test(`1 (${sizeName(viewport)}): the plan's steps are added, removed and moved in the Run section; the verdict checks the whole plan after each edit; the steps survive a reload`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    app.serve ??= await startServe(stateOf(viewport));
    const { page, errors } = await openPage(app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await openSample(page, 'allocation-too-large');
    await chooseDevice(page, /NVIDIA H100.*profile/);
    await waitForCompile(page);
    const panel = page.getByTestId('launch-panel');
    const run = page.getByTestId('run-panel');
    const verdict = panel.getByTestId('occupancy');
    // A buffer that fits, so that what the steps do is all the verdict says.
    await run.getByLabel('Count of x').fill('1048576');
    await verdict.filter({ hasText: '✓ would launch' }).waitFor();
    assert.deepEqual(await stepLabels(page), ['alloc x', 'launch fill<<<1024, 256>>> — in the launch panel', 'free x']);

    // The launch moved above its buffer's alloc: refused before Run, naming the step, the buffer and the fix.
    const launchUp = run.getByRole('button', { name: 'Move step 2 (launch fill<<<1024, 256>>>) up' });
    await assertInViewport(page, launchUp, 'the button that moves the launch up');
    await launchUp.click();
    assert.deepEqual(await stepLabels(page), ['launch fill<<<1024, 256>>> — in the launch panel', 'alloc x', 'free x']);
    await verdict.filter({ hasText: '✗ would fail' }).waitFor();
    const order = panel.getByTestId('finding-used-before-alloc');
    assert.match(
      await order.innerText(),
      /Step 1 \(launch fill<<<1024, 256>>>\) passes x before any step allocates it\.\s+Fix: Move an alloc step for x before step 1\./,
    );
    assert.equal(await run.getByTestId('run-button').isDisabled(), true);
    assert.match(await run.getByTestId('run-blockers').innerText(), /The plan uses a buffer where no step has allocated it:\s+Step 1 \(launch fill/);
    // The moved step keeps the focus (on its other button: it cannot go higher), so the keyboard can move it back.
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Move step 1 (launch fill<<<1024, 256>>>) down');
    await page.keyboard.press('Enter');
    await verdict.filter({ hasText: '✓ would launch' }).waitFor();
    assert.equal(await order.count(), 0);
    assert.deepEqual(await stepLabels(page), ['alloc x', 'launch fill<<<1024, 256>>> — in the launch panel', 'free x']);

    // Removed, then added back elsewhere: a read-back before the free.
    await run.getByRole('button', { name: 'Remove step 3 (free x)' }).click();
    assert.deepEqual(await stepLabels(page), ['alloc x', 'launch fill<<<1024, 256>>> — in the launch panel']);
    const add = run.getByTestId('plan-add-step');
    await add.getByLabel('The new step', { exact: true }).selectOption('download');
    await add.getByLabel('The buffer it works on').selectOption('x');
    await add.getByRole('button', { name: 'Add step' }).click();
    await add.getByLabel('The new step', { exact: true }).selectOption('free');
    await add.getByRole('button', { name: 'Add step' }).click();
    assert.deepEqual(await stepLabels(page), ['alloc x', 'launch fill<<<1024, 256>>> — in the launch panel', 'download x', 'free x']);
    // A launch added before the first launch copies it; the launch panel stays on the step it showed.
    await add.getByLabel('The new step', { exact: true }).selectOption('launch');
    assert.deepEqual(await add.getByLabel('The kernel it launches').locator('option').allInnerTexts(), ['fill']);
    await add.getByLabel('Where the new step goes').selectOption({ label: 'before step 2' });
    await add.getByRole('button', { name: 'Add step' }).click();
    assert.deepEqual(await stepLabels(page), [
      'alloc x',
      'launch fill<<<1024, 256>>>',
      'launch fill<<<1024, 256>>> — in the launch panel',
      'download x',
      'free x',
    ]);
    assert.match(await panel.getByTestId('plan-launch').innerText(), /Step 3 of the plan allocation-too-large \(broken\): fill/);
    // An upload of a buffer with no initializer is no plan: refused, with the schema's reason, and nothing changes.
    await add.getByLabel('The new step', { exact: true }).selectOption('upload');
    await add.getByRole('button', { name: 'Add step' }).click();
    assert.match(await run.getByTestId('plan-edit-error').innerText(), /That would make the plan invalid: .*uploads buffer "x", which has no initializer/);
    assert.equal((await stepLabels(page)).length, 5);
    await axeClean(page, 'the plan’s steps with their buttons, and the add-a-step form');
    await assertInViewport(page, add, 'the add-a-step form');

    // The steps are the plan's: kept with the file across a reload, and checked the same.
    await page.waitForTimeout(800);
    await page.reload();
    await sampleTab(page, 'allocation-too-large').click();
    await waitForCompile(page);
    assert.deepEqual(await stepLabels(page), [
      'alloc x',
      'launch fill<<<1024, 256>>>',
      'launch fill<<<1024, 256>>> — in the launch panel',
      'download x',
      'free x',
    ]);
    assert.match(await page.getByTestId('occupancy').innerText(), /✓ would launch on NVIDIA H100/);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test(`11 (${sizeName(viewport)}): the compile and the launch panel say the same shared-memory limits, and a compile failure says its error once`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    app.serve ??= await startServe(stateOf(viewport));
    const { page, errors } = await openPage(app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await openSample(page, 'static-shared-too-large');
    await chooseDevice(page, /NVIDIA H100.*profile/);
    await waitForCompile(page, '✗');
    const limits =
      /static __shared__ arrays are limited to 48 KiB per block; only dynamic shared memory \(extern __shared__\) goes past that, up to 227 KiB per block in all on/;

    const finding = page.getByTestId('launch-panel').getByTestId('finding-static-shared-too-large');
    const said = await finding.innerText();
    assert.match(said, limits);
    assert.match(said, /227 KiB per block in all on NVIDIA H100 80GB HBM3/);
    assert.doesNotMatch(said, /\b(?!48|227)\d+ KiB per block/);

    await page.getByTestId('output-tab-Problems').click();
    const problem = page.getByTestId('problems').locator('li.problem-error').first();
    const compiled = await problem.innerText();
    assert.match(compiled, /blockSum uses 390\.63 KiB \(400,000 bytes\) of static shared memory, so it can never launch/);
    assert.match(compiled, limits);
    assert.match(compiled, /227 KiB per block in all on sm_90/);
    assert.equal(await page.getByTestId('problems').locator('li.problem-error').count(), 1, 'said once, not again in ptxas’ words');
    await assertInViewport(page, problem, 'the compile error');

    // A recorded compile failure: its error once (The compiler said), the rest of the log below it.
    await openResult(page, join(ROOT, 'test/fixtures/runs/static-shared-too-large.json'));
    const diagnosis = page.getByTestId('diagnosis');
    await diagnosis.getByTestId('diagnosis-compile').waitFor();
    const text = await diagnosis.innerText();
    assert.equal(text.match(/of static shared memory/g)?.length, 1, text);
    assert.match(await diagnosis.getByTestId('diagnosis-specifics').innerText(), /ptxas info\s*: Used 22 registers/);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
}
