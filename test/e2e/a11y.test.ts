import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Page } from 'playwright-core';

import { findNvcc } from '../../main/compile/nvcc';
import { seriousViolations, unnamedOrDuplicateControls } from '../helpers/a11y';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { VIEWPORTS } from '../helpers/viewports';

// axe-core on every view, in both themes and both window sizes: no serious or critical violation
// (contrast, names, roles, nesting), and every control named, no two alike.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-a11y-'));
const hasCompiler = findNvcc().then((n) => n.found);
const app = serveWithBrowser(work);

async function check(page: Page, view: string, found: string[]) {
  for (const v of await seriousViolations(page)) found.push(`${view}: ${v}`);
  for (const c of await unnamedOrDuplicateControls(page)) found.push(`${view}: ${c}`);
}

for (const viewport of VIEWPORTS)
  for (const theme of ['dark', 'light'] as const) {
    test(`${viewport.width}×${viewport.height}, ${theme}: no serious or critical axe violation on any view, every control named once`, async () => {
      // The page's CSP refuses inline scripts, axe's included: this context alone bypasses it.
      const context = await app.browser.newContext({ viewport, colorScheme: theme, bypassCSP: true });
      const page = await context.newPage();
      const found: string[] = [];
      await page.goto(app.serve.url);
      await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).click();
      if (await hasCompiler) {
        await page.getByTestId('compile-status').filter({ hasText: '✓' }).waitFor({ timeout: 30_000 });
        await page.getByTestId('occupancy-chart').locator('canvas').waitFor();
      }
      await check(page, 'editor', found);

      // Run results: a recorded failure, with its diagnosis, steps and buffers.
      await page.getByTestId('output-tab-Run').click();
      await page.getByLabel('Result file').fill(join(ROOT, 'test/fixtures/runs/oob-off-by-one.json'));
      await page.getByRole('button', { name: 'Open result' }).click();
      await page.getByTestId('diagnosis-headline').waitFor();
      await page.getByTestId('maximize-output').click();
      await check(page, 'run results', found);

      // The memory timeline of a snapshot recorded on an H100, an allocation selected, what was alive at the OOM.
      await page.getByTestId('output-tab-Memory').click();
      await page.getByRole('button', { name: 'Open memory snapshot…' }).click();
      await page.getByLabel('Memory snapshot or result file').fill(join(ROOT, 'test/fixtures/snapshots/h100/oom.pickle'));
      await check(page, 'open memory snapshot dialog', found);
      await page.getByRole('button', { name: 'Open snapshot' }).click();
      await page.getByRole('application', { name: /Memory timeline of oom\.pickle/ }).focus();
      await page.keyboard.press(']');
      await page.getByTestId('memory-details').waitFor();
      await check(page, 'memory timeline, an allocation selected', found);
      await page.getByTestId('memory-marker').filter({ hasText: 'Out of memory' }).click();
      await page.getByTestId('memory-alive-at').waitFor();
      await check(page, 'memory timeline, alive at the OOM', found);
      await page.getByTestId('maximize-output').click();

      await page.keyboard.press('Control+O');
      await page.getByTestId('open-dialog').getByTestId('samples').locator('button').first().waitFor();
      await check(page, 'open dialog', found);
      await page.keyboard.press('Escape');

      await page.keyboard.press('Control+Shift+Slash');
      await page.getByTestId('shortcuts-dialog').waitFor();
      await check(page, 'shortcuts dialog', found);
      await page.keyboard.press('Escape');

      await page.getByTestId('devices-tab').click();
      await page.getByTestId('doctor').waitFor();
      await check(page, 'devices', found);

      await page.getByTestId('gallery-tab').click();
      await page.getByTestId('sample-block-too-large').waitFor();
      await check(page, 'gallery', found);

      await page.getByRole('tab', { name: 'Explain an error' }).click();
      await page.getByLabel('Paste an error').fill('CUDA error: an illegal memory access was encountered');
      await page.getByTestId('explanation').waitFor();
      await check(page, 'explain', found);

      assert.deepEqual(found, []);
      await context.close();
    });
  }
