import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Page } from 'playwright-core';

import { findNvcc } from '../../main/compile/nvcc';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';

// Failed runs as the UI shows them, from results the GPU suite recorded on an H200
// (test/fixtures/runs), and the run form and the gallery against the real serve host (no GPU here).
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-run-'));
const RUNS = join(ROOT, 'test/fixtures/runs');
const hasCompiler = findNvcc().then((n) => n.found);

const app = serveWithBrowser(work);

async function openResult(page: Page, name: string, headline: RegExp) {
  await page.getByTestId('output-tab-Run').click();
  await page.getByLabel('Result file').fill(join(RUNS, name));
  await page.getByRole('button', { name: 'Open result' }).click();
  await page.getByTestId('diagnosis-headline').filter({ hasText: headline }).waitFor();
}
const text = async (page: Page, testId: string) => (await page.getByTestId(testId).textContent()) ?? '';

test('a failed run (recorded on the GPU) shows the decoded error, its explanation and the step', async () => {
  const page = await app.browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.serve.url);

  await openResult(page, 'null-pointer.json', /CUDA_ERROR_ILLEGAL_ADDRESS at step 1 \(launch writeThrough<<<1, 32>>>\)/);
  assert.match(await text(page, 'diagnosis-error'), /CUDA_ERROR_ILLEGAL_ADDRESS \(700\) .* cudaErrorIllegalAddress in the runtime API · sticky/);
  assert.match(await text(page, 'diagnosis-step'), /Step 1: launch writeThrough<<<1, 32>>> · kernel writeThrough/);
  assert.match(await text(page, 'diagnosis-explanation'), /Likely causes/);
  assert.match(await text(page, 'diagnosis-sanitizer'), /gpu-workbench sanitize --tool memcheck --plan/);
  assert.ok(await page.locator('tr.failed-step').count(), 'the failing step is marked in the steps table');
  await page.screenshot({ path: join(ROOT, 'test-results/run-failed.png') });

  // A launch the driver refused: the validator's finding says which limit and the fix.
  await openResult(page, 'block-too-large.json', /addMatrices could not be launched with this configuration: CUDA_ERROR_INVALID_VALUE/);
  assert.match(await text(page, 'diagnosis-finding-threads-per-block'), /2048 threads/);

  // Out of memory: the request beside free and total, and who holds the device.
  await openResult(page, 'allocation-too-large.json', /Out of device memory at step 1/);
  assert.match(await text(page, 'diagnosis-memory'), /Requested 256 GiB · free [\d.]+ GiB of 79\.18 GiB/);

  // No CUDA error at all: the guard bytes found the write one past the end.
  await openResult(page, 'oob-off-by-one.json', /scale wrote past the end of buffer x at step 3/);
  assert.match(await text(page, 'diagnosis-specifics'), /elements 1000 of a 1000-element buffer/);

  // A race: the comparison names the first wrong element.
  await openResult(page, 'shared-memory-race.json', /Wrong result in out/);
  assert.match(await text(page, 'compare-out'), /differ from buffer expected; first at \[\d+\]/);

  // A failed device-side assert: its line and condition, from the runtime's own message in the device output.
  // The condition is shown as code, not between backticks.
  await openResult(page, 'device-assert.json', /A device-side assert failed at broken.cu:9: i < n/);
  assert.equal(await page.getByTestId('diagnosis-headline').locator('code').innerText(), 'i < n');
  assert.match(await text(page, 'diagnosis-source'), /Source: broken.cu:9/);
  assert.match(
    await text(page, 'diagnosis-specifics'),
    /24 threads failed i < n at broken.cu:9 in void fill\(float \*, int\); the first: block \(3,0,0\), thread \(232,0,0\)/,
  );
  assert.match(await text(page, 'device-output'), /broken.cu:9: void fill\(float \*, int\): block: \[3,0,0\], thread: \[232,0,0\] Assertion `i < n` failed./);

  // A file that is not a result gets a message, not a blank panel.
  await page.getByLabel('Result file').fill(join(ROOT, 'package.json'));
  await page.getByRole('button', { name: 'Open result' }).click();
  await page.getByRole('alert').filter({ hasText: 'is not a GPU Workbench run result' }).waitFor();
  assert.deepEqual(errors, []);
});

test('the gallery opens a sample into the editor and the run form; without a GPU, Run is off and says why', async (t) => {
  if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
  const page = await app.browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(app.serve.url);
  await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).waitFor();
  await page.getByTestId('compile-status').filter({ hasText: '✓' }).waitFor({ timeout: 30_000 });

  // The run form is built from the compiled kernel's parameters.
  const form = page.getByTestId('run-panel');
  for (const name of ['a', 'b', 'c']) await form.getByLabel(`${name} count`).waitFor();
  assert.equal(await form.getByLabel('n value').inputValue(), '1024');
  await form.getByLabel('c expect').selectOption('iota');
  assert.equal(await form.getByTestId('run-button').isDisabled(), true);
  assert.match(await form.getByTestId('run-blockers').innerText(), /Run needs an NVIDIA GPU, and this machine has none: No NVIDIA driver found/);

  await page.getByTestId('gallery-tab').click();
  await page.getByTestId('sample-oob-off-by-one').waitFor();
  assert.ok((await page.locator('[data-testid^="sample-"]').count()) >= 16);
  await page.getByTestId('sample-oob-off-by-one').getByRole('button', { name: 'Open broken' }).click();
  await page.getByTestId('tab').filter({ hasText: 'broken.cu' }).waitFor();
  await page.getByTestId('run-panel').getByText('oob-off-by-one (broken)').waitFor();
  assert.equal(await page.getByTestId('run-button').isDisabled(), true);
  assert.match(await page.getByTestId('run-blockers').innerText(), /No NVIDIA driver found/);
  await page.screenshot({ path: join(ROOT, 'test-results/gallery-open.png') });
});
