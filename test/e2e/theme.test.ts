import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Locator, Page } from 'playwright-core';

import { findNvcc } from '../../main/compile/nvcc';
import { serveWithBrowser } from '../helpers/serve';
import { VIEWPORTS, assertInsideWindow } from '../helpers/viewports';

// Light and dark themes: the system's by default, a chosen one remembered, Monaco with them; and
// (issue 12, item 10) fields drawn by the theme, never the browser's white boxes on the dark one.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-theme-'));
const hasCompiler = findNvcc().then((n) => n.found);
const app = serveWithBrowser(work);

/** Relative luminance (WCAG) of a computed CSS colour. */
function luminance(css: string): number {
  const [r, g, b] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

const colours = (l: Locator) =>
  l.evaluate((e) => {
    const s = getComputedStyle(e);
    return { background: s.backgroundColor, text: s.color };
  });
const pageBackground = (page: Page) => page.evaluate(() => getComputedStyle(document.body.parentElement!).backgroundColor);
const editorBackground = (page: Page) => page.locator('.monaco-editor .monaco-editor-background').evaluate((e) => getComputedStyle(e).backgroundColor);

async function openEditor(page: Page) {
  await page.goto(app.serve.url);
  await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).waitFor();
  await page.locator('.monaco-editor .monaco-editor-background').waitFor();
}

for (const viewport of VIEWPORTS) {
  const size = `${viewport.width}×${viewport.height}`;

  test(`${size}: the theme follows the system until one is chosen, the choice is remembered, and the editor follows it`, async () => {
    const context = await app.browser.newContext({ viewport, colorScheme: 'light' });
    const page = await context.newPage();
    await openEditor(page);
    const select = page.getByLabel('Theme');
    await assertInsideWindow(page, select, 'the theme switch');
    assert.equal(await select.locator('option:checked').innerText(), 'System (light)');
    assert.ok(luminance(await pageBackground(page)) > 0.9, 'a light page');
    assert.equal(await editorBackground(page), 'rgb(255, 255, 255)');

    // The system turns dark: so does the page, at once.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction(() => document.documentElement.dataset['theme'] === 'dark');
    assert.equal(await select.locator('option:checked').innerText(), 'System (dark)');
    assert.ok(luminance(await pageBackground(page)) < 0.02, 'a dark page');
    assert.equal(await editorBackground(page), 'rgb(22, 24, 28)');

    // Choosing Light wins over the system, and is still the choice after a reload.
    await select.selectOption({ label: 'Light' });
    assert.ok(luminance(await pageBackground(page)) > 0.9);
    assert.equal(await editorBackground(page), 'rgb(255, 255, 255)');
    await page.reload();
    await page.locator('.monaco-editor .monaco-editor-background').waitFor();
    assert.equal(await page.getByLabel('Theme').inputValue(), 'light');
    assert.ok(luminance(await pageBackground(page)) > 0.9, 'still light after a reload, on a dark system');
    assert.equal(await editorBackground(page), 'rgb(255, 255, 255)');

    // Back to System: dark again, as the system is.
    await page.getByLabel('Theme').selectOption('system');
    assert.ok(luminance(await pageBackground(page)) < 0.02);
    await context.close();
  });

  test(`${size}: text fields, selects, checkboxes and the paste box are drawn by the theme in both themes`, async () => {
    const context = await app.browser.newContext({ viewport, colorScheme: 'dark' });
    const page = await context.newPage();
    await openEditor(page);
    if (await hasCompiler) await page.getByTestId('launch-panel').waitFor({ timeout: 30_000 });
    const checkbox = page.getByRole('checkbox', { name: '-G' });
    const fields: [string, Locator][] = [
      ['the architecture select', page.getByLabel('Architecture')],
      ['the -D text field', page.getByLabel('Defines')],
      ['the maxrregcount number field', page.getByRole('spinbutton')],
      ['the -G checkbox', checkbox],
      ['the time limit field', page.getByLabel('Time limit')],
    ];
    if (await hasCompiler)
      fields.push(
        ['the launch panel’s Block field', page.getByLabel('Block', { exact: true })],
        ['the device select', page.getByRole('combobox', { name: 'Device', exact: true })],
      );

    for (const theme of ['dark', 'light'] as const) {
      await page.getByLabel('Theme').selectOption(theme);
      // On a narrow window the compile flags fold behind their button (issue 26, item 9): unfolded to be seen.
      const flags = page.getByTestId('compile-flags-toggle');
      if ((await flags.isVisible()) && (await flags.getAttribute('aria-expanded')) !== 'true') await flags.click();
      for (const [what, field] of fields) {
        const { background, text } = await colours(field);
        if (theme === 'dark') assert.ok(luminance(background) < 0.05, `${what} on the dark theme has background ${background}`);
        else assert.ok(luminance(background) > 0.8, `${what} on the light theme has background ${background}`);
        if (field !== checkbox) assert.ok(theme === 'dark' ? luminance(text) > 0.5 : luminance(text) < 0.1, `${what}'s text is ${text} on ${background}`);
      }
      // A ticked box shows the accent colour, in both themes.
      await checkbox.check();
      const ticked = (await colours(checkbox)).background;
      assert.ok(luminance(ticked) > 0.05 && luminance(ticked) < 0.5, `a ticked box is ${ticked}`);
      await checkbox.uncheck();
    }

    await page.getByRole('tab', { name: 'Explain an error' }).click();
    for (const theme of ['dark', 'light'] as const) {
      await page.getByLabel('Theme').selectOption(theme);
      const paste = await colours(page.getByLabel('Paste an error'));
      assert.ok(theme === 'dark' ? luminance(paste.background) < 0.05 : luminance(paste.background) > 0.8, `the paste box on ${theme}: ${paste.background}`);
    }
    await context.close();
  });
}
