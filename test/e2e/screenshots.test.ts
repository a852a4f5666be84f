import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { findNvcc } from '../../main/compile/nvcc';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { openByPath } from '../helpers/ui';
import { assertInsideWindow } from '../helpers/viewports';

// The README's pictures, taken from the real app, in both themes. They go to test-results/ on every
// run, and to docs/ (where the README shows them) when GPU_WORKBENCH_UPDATE_SCREENSHOTS=1.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-shots-'));
const hasCompiler = findNvcc().then((n) => n.found);
const app = serveWithBrowser(work);
const folder = process.env['GPU_WORKBENCH_UPDATE_SCREENSHOTS'] === '1' ? join(ROOT, 'docs') : join(ROOT, 'test-results');
mkdirSync(folder, { recursive: true });

for (const theme of ['dark', 'light'] as const) {
  test(`${theme}: the gallery's 64×32 sample opened, its failing launch found before any run; a recorded fault diagnosed`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const context = await app.browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: theme });
    const page = await context.newPage();
    await page.goto(app.serve.url);
    await page.getByTestId('tab').first().waitFor();
    await page.getByTestId('gallery-tab').click();
    await page.getByRole('button', { name: 'Open broken: 64 × 32 threads per block' }).click();
    await page.getByTestId('tab').filter({ hasText: 'kernel.cu' }).waitFor();
    const panel = page.getByTestId('launch-panel');
    await panel.waitFor({ timeout: 30_000 });
    await panel.getByLabel('Device').selectOption({ label: 'NVIDIA H200 (profile, driver 580.159.04)' });
    await panel.getByLabel('Grid', { exact: true }).fill('8,16');
    await panel.getByLabel('Block', { exact: true }).fill('64,32');
    const finding = panel.getByTestId('finding-threads-per-block');
    await finding.waitFor();
    assert.match(await finding.innerText(), /2048 threads per block; this device allows 1024/);
    await assertInsideWindow(page, finding, 'the finding');
    await page.getByTestId('occupancy-chart').locator('canvas').waitFor();
    await page.mouse.move(0, 0);
    await page.screenshot({ path: join(folder, `screenshot-launch-${theme}.png`) });

    // The diagnosis of a fault recorded on an H200, with the output panel taking the whole height.
    await page.getByTestId('output-tab-Run').click();
    await page.getByLabel('Result file').fill(join(ROOT, 'test/fixtures/runs/device-assert.json'));
    await page.getByRole('button', { name: 'Open result' }).click();
    await page.getByTestId('diagnosis-headline').filter({ hasText: 'device-side assert' }).waitFor();
    await page.getByTestId('maximize-output').click();
    await assertInsideWindow(page, page.getByTestId('diagnosis-source'), 'the faulting line');
    await page.screenshot({ path: join(folder, `screenshot-run-${theme}.png`) });
    await context.close();
  });
}

for (const theme of ['dark', 'light'] as const) {
  test(`${theme}: the memory timeline of a PyTorch snapshot recorded on an H100, an allocation selected, the side panel hidden`, async () => {
    const context = await app.browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: theme });
    const page = await context.newPage();
    await page.goto(app.serve.url);
    await page.getByTestId('tab').first().waitFor();
    await page.getByTestId('output-tab-Memory').click();
    await page.getByRole('button', { name: 'Open memory snapshot…' }).click();
    await page.getByLabel('Memory snapshot or result file').fill(join(ROOT, 'test/fixtures/snapshots/h100/leak.pickle'));
    await page.getByRole('button', { name: 'Open snapshot' }).click();
    await page.getByTestId('maximize-output').click();
    // the whole width for the Memory tab: the details beside the timeline
    await page.getByRole('button', { name: 'Side panel' }).click();
    const canvas = page.getByTestId('memory-timeline').getByRole('application');
    await canvas.focus();
    // the last few milliseconds, where line 16 kept its 50 blocks; one of them selected
    for (let i = 0; i < 4; i++) await page.keyboard.press('+');
    await page.keyboard.press('End');
    for (let i = 0; i < 20; i++) await page.keyboard.press('[');
    await page.getByTestId('memory-details').waitFor();
    await page.locator('[data-testid="memory-timeline"] canvas[data-tiles-settled="yes"]').waitFor();
    await assertInsideWindow(page, page.getByTestId('memory-details-title'), 'the selected allocation’s details');
    await page.mouse.move(0, 0);
    await page.screenshot({ path: join(folder, `screenshot-memory-${theme}.png`) });
    await context.close();
  });
}

test('light, 1024×700: an OOM snapshot in the Memory tab beside the side panel, its activity spread out, the idle stretch broken', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1024, height: 700 }, colorScheme: 'light' });
  const page = await context.newPage();
  await page.goto(app.serve.url);
  await page.getByTestId('tab').first().waitFor();
  await page.getByTestId('output-tab-Memory').click();
  await page.getByRole('button', { name: 'Open memory snapshot…' }).click();
  await page.getByLabel('Memory snapshot or result file').fill(join(ROOT, 'test/fixtures/snapshots/h100/oom.pickle'));
  await page.getByRole('button', { name: 'Open snapshot' }).click();
  // Not maximised: the output panel grows for the timeline by itself, the editor keeping a few lines.
  await page.locator('[data-testid="memory-timeline"] canvas[data-tiles-settled="yes"]').waitFor();
  await assertInsideWindow(page, page.getByTestId('memory-timeline').getByRole('application'), 'the timeline');
  await page.mouse.move(0, 0);
  await page.screenshot({ path: join(folder, 'screenshot-memory-1024-light.png') });
  await context.close();
});

test('dark: a kernel profile recorded on an H100 on its own lines: the heat margin, line 7 uncoalesced, the Profile tab', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'dark' });
  const page = await context.newPage();
  await page.goto(app.serve.url);
  await page.getByTestId('tab').first().waitFor();
  await openByPath(page, join(ROOT, 'samples/uncoalesced-access/broken.cu'));
  await openByPath(page, join(ROOT, 'test/fixtures/ncu/profile-broken.json'));
  await page.getByTestId('profile-view').getByTestId('profile-finding').first().waitFor();
  await page.mouse.move(0, 0);
  await page.screenshot({ path: join(folder, 'screenshot-profile-dark.png') });
  await context.close();
});

test('the no-driver page, dark', async () => {
  const context = await app.browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'dark' });
  const page = await context.newPage();
  await page.goto(`${app.serve.url}&view=devices`);
  const panel = page.getByTestId('no-driver').or(page.getByTestId('device-panel'));
  await panel.first().waitFor();
  await page.screenshot({ path: join(folder, 'screenshot-no-driver.png') });
  await context.close();
});
