import assert from 'node:assert/strict';

import type { Browser, Locator, Page } from 'playwright-core';

/** The two screens issue 12 was found on. */
export const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 1024, height: 700 },
] as const;
export type Viewport = (typeof VIEWPORTS)[number];
export const sizeName = (v: Viewport) => `${v.width}×${v.height}`;

/** A page of the app at a viewport, collecting the page's errors (each test ends asserting there were none). */
export async function openApp(browser: Browser, url: string, viewport: Viewport, query = ''): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${url}${query}`);
  return { page, errors };
}

/** Scrolls the element into view, as a person would, and asserts all of it is inside the viewport. */
export async function assertInViewport(page: Page, locator: Locator, what: string): Promise<void> {
  await locator.scrollIntoViewIfNeeded();
  const box = await locator.boundingBox();
  assert.ok(box, `${what} is not on screen`);
  const view = page.viewportSize()!;
  assert.ok(
    box.x >= 0 && box.y >= 0 && box.x + box.width <= view.width + 0.5 && box.y + box.height <= view.height + 0.5,
    `${what} at ${JSON.stringify(box)} is not inside the ${view.width}×${view.height} viewport`,
  );
}

export async function waitForCompile(page: Page, mark: '✓' | '✗' = '✓'): Promise<void> {
  await page.getByTestId('compile-status').filter({ hasText: mark }).waitFor({ timeout: 60_000 });
}

/** Opens a gallery sample's variant: its kernel in the editor, its plan in the Run section. */
export async function openSample(page: Page, name: string, variant: 'broken' | 'fixed' = 'broken'): Promise<void> {
  await page.getByTestId('gallery-tab').click();
  await page
    .getByTestId(`sample-${name}`)
    .getByRole('button', { name: variant === 'broken' ? 'Open broken' : 'Open fixed' })
    .click();
  await page.getByTestId('launch-panel').waitFor();
}

/** Opens a saved run result from the Run tab. */
/** Opens a result file from the Run tab and waits until it is the result on screen (not the one opened before it). */
export async function openResult(page: Page, path: string): Promise<void> {
  await page.getByTestId('output-tab-Run').click();
  await page.getByLabel('Result file').fill(path);
  await page.getByRole('button', { name: 'Open result' }).click();
  await page.getByText(`opened from ${path}`, { exact: true }).or(page.getByTestId('run-error')).first().waitFor();
}

export async function openByPath(page: Page, path: string): Promise<void> {
  await page.getByRole('button', { name: 'Open…' }).click();
  await page.getByLabel('Path', { exact: true }).fill(path);
  await page.getByRole('button', { name: 'Open', exact: true }).click();
  await page.getByTestId('open-dialog').waitFor({ state: 'detached' });
}

/** The tab on screen, as its label reads (name and folder). */
export const activeTab = (page: Page): Locator => page.locator('[data-testid="tab"][aria-selected="true"]');

/** The marked line as Monaco shows it (its number in the gutter and its text), and whether the editor has the focus. */
export async function markedLine(
  page: Page,
  /** The line expected: an earlier mark may still be on screen until Monaco redraws, so wait (up to 5 s) for this one. */
  expected?: number,
): Promise<{ line: number; text: string; focused: boolean; box: { x: number; y: number; width: number; height: number } }> {
  if (expected !== undefined) {
    let shown = await markedLine(page);
    for (const started = Date.now(); shown.line !== expected && Date.now() - started < 5_000; shown = await markedLine(page)) await page.waitForTimeout(50);
    return shown;
  }
  const mark = page.locator('.monaco-editor .source-mark-line').first();
  let box = null;
  // The editor draws the mark once the document is on screen: wait until it is laid out.
  for (const started = Date.now(); !box && Date.now() - started < 10_000; await page.waitForTimeout(50)) box = await mark.boundingBox().catch(() => null);
  assert.ok(box, 'no line is marked in the editor');
  const numbers = page.locator('.monaco-editor .line-numbers');
  let line = -1;
  for (let i = 0; i < (await numbers.count()); i++) {
    const b = await numbers.nth(i).boundingBox();
    if (b && Math.abs(b.y - box.y) < 3) line = Number(await numbers.nth(i).innerText());
  }
  let text = '';
  const views = page.locator('.monaco-editor .view-line');
  for (let i = 0; i < (await views.count()); i++) {
    const b = await views.nth(i).boundingBox();
    if (b && Math.abs(b.y - box.y) < 3) text = (await views.nth(i).innerText()).replace(/\u00a0/g, ' ');
  }
  const focused = await page.evaluate(() => !!document.activeElement?.closest('.monaco-editor'));
  return { line, text, focused, box };
}

/** Picks the device or profile whose label matches, in the launch panel's Device list. */
export async function chooseDevice(page: Page, label: RegExp): Promise<void> {
  const select = page.getByTestId('launch-panel').getByLabel('Device');
  const options = await select.locator('option').allInnerTexts();
  const wanted = options.find((o) => label.test(o));
  assert.ok(wanted, `no device or profile like ${label} among ${options.join(', ')}`);
  await select.selectOption({ label: wanted });
}

/** The lines whose gutter shows a sanitizer glyph, found as a person sees them: beside that line's number. */
export async function sanitizerGlyphLines(page: Page): Promise<number[]> {
  const glyphs = page.locator('.monaco-editor .sanitizer-glyph');
  const numbers = page.locator('.monaco-editor .line-numbers');
  const lines: number[] = [];
  for (let i = 0; i < (await glyphs.count()); i++) {
    const g = await glyphs.nth(i).boundingBox();
    if (!g) continue;
    for (let j = 0; j < (await numbers.count()); j++) {
      const b = await numbers.nth(j).boundingBox();
      if (b && Math.abs(b.y + b.height / 2 - (g.y + g.height / 2)) < 4) lines.push(Number(await numbers.nth(j).innerText()));
    }
  }
  return lines.sort((a, b) => a - b);
}

/** Open bundle… in the Run tab, as a person does: the bundle's path typed, the dialog gone once it opened. */
export async function openBundleDialog(page: Page, path: string): Promise<void> {
  await page.getByRole('tab', { name: 'Editor' }).click();
  await page.getByTestId('output-tab-Run').click();
  await page.getByTestId('open-bundle').click();
  const dialog = page.getByTestId('bundle-open-dialog');
  await dialog.getByLabel('Bundle file').fill(path);
  await dialog.getByTestId('bundle-open-submit').click();
  await dialog.waitFor({ state: 'detached' });
}
