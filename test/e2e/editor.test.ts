import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Page } from 'playwright-core';

import { findNvcc } from '../../main/compile/nvcc';
import { ROOT, SAMPLES } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';

// The editor against the real serve host and the real compiler (nvcc here: there is no NVRTC).
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-'));
const file = join(work, 'missing_semicolon.cu');
copyFileSync(join(SAMPLES, 'syntax-error/missing_semicolon.cu'), file);
const hasCompiler = findNvcc().then((n) => n.found);

const app = serveWithBrowser(work);

async function openByPath(page: Page, path: string) {
  await page.getByRole('button', { name: 'Open…' }).click();
  await page.getByLabel('Path', { exact: true }).fill(path);
  await page.getByRole('button', { name: 'Open', exact: true }).click();
  await page.getByTestId('open-dialog').waitFor({ state: 'detached' });
}

test('a syntax error shows as a marker on its line and column; fixing it clears it and shows the kernel facts', async (t) => {
  if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
  const page = await app.browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.serve.url);
  // With no drafts, the editor opens the vector-add sample and compiles it.
  await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).waitFor();
  await page.getByTestId('compile-status').filter({ hasText: '✓' }).waitFor({ timeout: 30_000 });

  await openByPath(page, file);
  await page.getByTestId('tab').filter({ hasText: 'missing_semicolon.cu' }).waitFor();
  const problem = page.getByTestId('problems').locator('li.problem-error').first();
  await problem.waitFor({ timeout: 30_000 });
  assert.equal(await problem.getAttribute('data-line'), '4');
  assert.equal(await problem.getAttribute('data-column'), '3');
  assert.match(await problem.innerText(), /expected a ";"/);
  await page.locator('.squiggly-error').first().waitFor();
  await page.screenshot({ path: join(ROOT, 'test-results/editor-error.png') });

  // Fix it where a developer would: at the end of line 3.
  await problem.click();
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('End');
  await page.keyboard.type(';');
  await page.getByTestId('dirty').first().waitFor();
  await page.getByTestId('compile-status').filter({ hasText: '✓' }).waitFor({ timeout: 30_000 });
  assert.equal(await page.locator('.squiggly-error').count(), 0);
  assert.equal(await page.getByTestId('problems').locator('li.problem-error').count(), 0);
  const facts = page.getByTestId('kernel-facts').locator('[data-kernel="scale"]');
  assert.match(await facts.locator('h3').innerText(), /scale\(float\*, float, int\)/);
  assert.ok(Number(await facts.getByTestId('registers').innerText()) > 0);
  assert.equal(await facts.getByTestId('shared').innerText(), '0 B');
  mkdirSync(join(ROOT, 'test-results'), { recursive: true });
  await page.screenshot({ path: join(ROOT, 'test-results/editor-fixed.png') });

  // Ctrl+S saves to disk, and the dirty marker goes.
  await page.keyboard.press('Control+S');
  await page.getByTestId('dirty').waitFor({ state: 'detached' });
  assert.match(readFileSync(file, 'utf8'), /threadIdx\.x;\n/);
  // Undo reaches across the save: the fix comes back off, the document is dirty and the error returns.
  await page.keyboard.press('Control+Z');
  await page.getByTestId('dirty').first().waitFor();
  await page.getByTestId('problems').locator('li.problem-error').first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('Control+Shift+Z');
  await page.getByTestId('dirty').waitFor({ state: 'detached' });

  // Unsaved edits survive a restart of the page (drafts live on the host).
  await page.keyboard.press('Control+End');
  await page.keyboard.type('// unsaved note');
  await page.getByTestId('dirty').first().waitFor();
  await page.waitForTimeout(800); // the draft is written 400 ms after the last keystroke
  await page.reload();
  await page.getByTestId('tab').filter({ hasText: 'missing_semicolon.cu' }).click();
  await page.getByTestId('dirty').first().waitFor();
  assert.match(await page.locator('.monaco-editor .view-lines').innerText(), /unsaved\snote/); // Monaco renders spaces as U+00A0
  assert.doesNotMatch(readFileSync(file, 'utf8'), /unsaved note/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('opening a file that does not exist, or a binary one, says so and keeps the editor usable', async () => {
  const page = await app.browser.newPage();
  await page.goto(app.serve.url);
  await page.getByTestId('tab').first().waitFor();
  // Open… says why in the dialog, which stays open with the path to correct; Escape leaves the editor as it was.
  const refused = async (path: string, why: RegExp) => {
    await page.getByRole('button', { name: 'Open…' }).click();
    const dialog = page.getByTestId('open-dialog');
    await dialog.getByLabel('Path', { exact: true }).fill(path);
    await dialog.getByRole('button', { name: 'Open', exact: true }).click();
    assert.match(await dialog.getByTestId('open-error').innerText(), why);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  };
  await refused(join(work, 'nope.cu'), /does not exist/);
  // A program's first bytes: the host is confined to its roots, so the binary lives in the test's own folder.
  writeFileSync(join(work, 'program.cu'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0]));
  await refused(join(work, 'program.cu'), /binary file/);
  await page.getByTestId('tab').first().click();
  assert.equal(await page.getByTestId('tab').filter({ hasText: 'program.cu' }).count(), 0);
  await page.close();
});

test('with the shipped H200 profile and no GPU, typing 64×32 threads shows the finding and its fix before any launch', async (t) => {
  if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
  const page = await app.browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.serve.url);
  await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).click();
  await page.getByTestId('compile-status').filter({ hasText: '✓' }).waitFor({ timeout: 30_000 });
  const panel = page.getByTestId('launch-panel');
  await panel.waitFor();
  await panel.getByLabel('Device').selectOption({ label: 'NVIDIA H200 (profile, driver 580.159.04)' });
  assert.match(await panel.getByLabel('Device').locator('option:checked').innerText(), /NVIDIA H200/);
  await panel.getByLabel('Block', { exact: true }).fill('64,32');
  const finding = panel.getByTestId('finding-threads-per-block');
  await finding.waitFor();
  const text = await finding.innerText();
  assert.match(text, /2048 threads per block; this device allows 1024/);
  assert.match(text, /CUDA_ERROR_INVALID_VALUE \(1\)/);
  assert.match(text, /Use \(64,16\) instead of \(64,32\) — 1024 threads is this device's limit/);
  assert.match(await panel.getByTestId('occupancy').innerText(), /would fail/);
  await page.screenshot({ path: join(ROOT, 'test-results/launch-panel.png') });
  // Fixing it clears the finding and shows the occupancy with its limiter, and the chart across block sizes.
  await panel.getByLabel('Block', { exact: true }).fill('64,16');
  await finding.waitFor({ state: 'detached' });
  assert.match(await panel.getByTestId('occupancy').innerText(), /would launch[\s\S]*Occupancy 100% · 2 blocks\/SM · limited by warps/);
  await panel.getByTestId('occupancy-chart').locator('canvas').waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});
