import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Page } from 'playwright-core';

import { findNvcc } from '../../main/compile/nvcc';
import { discoverLibraries } from '../../main/services/discovery-service';
import { openWorkbenchPage } from '../helpers/browser';
import { seriousViolations } from '../helpers/a11y';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { openBundleDialog } from '../helpers/ui';
import { VIEWPORTS, assertInsideWindow, box, waitForSize } from '../helpers/viewports';

// Issue 12, item 4: a layout to live in. Panels resize by mouse and keyboard, hide, take the whole
// height, follow the window as it changes, and come back as they were after a reload.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-layout-'));
const hasCompiler = findNvcc().then((n) => n.found);
const hasDriver = discoverLibraries().cuda.loaded;
const app = serveWithBrowser(work);

async function openEditor(page: Page) {
  await page.goto(app.serve.url);
  await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).waitFor();
  if (await hasCompiler) await page.getByTestId('compile-status').filter({ hasText: '✓' }).waitFor({ timeout: 30_000 });
}

async function assertWholeLayoutInside(page: Page) {
  for (const [id, what] of [
    ['source-pane', 'the editor'],
    ['output-pane', 'the output panel'],
    ['side-panel', 'the side panel'],
    ['status-bar', 'the status bar'],
  ] as const)
    await assertInsideWindow(page, page.getByTestId(id), what);
  await assertInsideWindow(page, page.getByTestId('shortcuts-button'), 'the top bar’s last button');
}

for (const viewport of VIEWPORTS) {
  const size = `${viewport.width}×${viewport.height}`;

  test(`${size}: every panel is inside the window, and stays inside as the window is resized without a reload`, async () => {
    const page = await app.browser.newPage({ viewport });
    await openEditor(page);
    await assertWholeLayoutInside(page);
    if (await hasCompiler) await assertInsideWindow(page, page.getByLabel('Block', { exact: true }), 'the launch panel’s Block field');

    // The window changes size under the page: the right column follows it, to the window's edge.
    for (const width of viewport.width === 1440 ? [1200, 1024, 1440] : [1440, 1200, 1024]) {
      await page.setViewportSize({ width, height: viewport.height });
      await page.waitForFunction((w) => {
        const side = document.querySelector('[data-testid="side-panel"]')!.getBoundingClientRect();
        return Math.abs(side.right - w) < 2;
      }, width);
      await assertWholeLayoutInside(page);
      const editor = await box(page.getByTestId('source-pane'));
      assert.ok(editor.width > 300, `at ${width} wide the editor is ${editor.width}px wide`);
    }
    await page.close();
  });

  test(`${size}: the side panel and the output panel resize by dragging and by the keyboard, and the sizes are remembered`, async () => {
    const page = await app.browser.newPage({ viewport });
    await openEditor(page);
    const side = page.getByTestId('side-panel');
    const before = (await box(side)).width;

    // Drag the separator 120 px to the left: the side panel grows by as much.
    const separator = await box(page.getByTestId('side-separator'));
    await page.mouse.move(separator.x + separator.width / 2, separator.y + separator.height / 2);
    await page.mouse.down();
    await page.mouse.move(separator.x + separator.width / 2 - 60, separator.y + separator.height / 2, { steps: 4 });
    await page.mouse.move(separator.x + separator.width / 2 - 120, separator.y + separator.height / 2, { steps: 4 });
    await page.mouse.up();
    const dragged = (await box(side)).width;
    assert.ok(Math.abs(dragged - before - 120) < 6, `the side panel went from ${before} to ${dragged}px`);

    // The output panel's separator takes the arrow keys.
    const output = page.getByTestId('output-pane');
    const outputBefore = (await box(output)).height;
    await page.getByTestId('output-separator').focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowUp');
    const outputTaller = (await box(output)).height;
    assert.ok(outputTaller > outputBefore + 20, `the output panel went from ${outputBefore} to ${outputTaller}px`);

    // A reload brings the same layout back.
    await page.waitForTimeout(200);
    await page.reload();
    await page.getByTestId('tab').first().waitFor();
    await waitForSize(page, 'side-panel', (b) => b.width > 0, 'the side panel after a reload');
    const afterReload = await box(side);
    assert.ok(Math.abs(afterReload.width - dragged) < 3, `after a reload the side panel is ${afterReload.width}px, was ${dragged}px`);
    assert.ok(Math.abs((await box(output)).height - outputTaller) < 3, 'the output panel keeps its height after a reload');
    await page.close();
  });

  test(`${size}: the output takes the whole height, panels hide and come back, and a run's result shows even when hidden`, async () => {
    const page = await app.browser.newPage({ viewport });
    await openEditor(page);
    const output = page.getByTestId('output-pane');
    const editor = page.getByTestId('source-pane');
    const workbench = await box(page.locator('.workbench'));

    // Maximize: problems, results and output take the whole height between the toolbar and the status bar.
    await page.getByTestId('maximize-output').click();
    await waitForSize(page, 'source-pane', (b) => b.height < 1, 'Maximize collapses the editor');
    const tall = await box(output);
    assert.ok(Math.abs(tall.height - workbench.height) < 2, `the maximized output is ${tall.height}px of ${workbench.height}px`);
    await assertInsideWindow(page, output, 'the maximized output panel');
    assert.equal(await page.getByTestId('maximize-output').innerText(), 'Restore');
    await page.getByTestId('maximize-output').click();
    await waitForSize(page, 'source-pane', (b) => b.height > 100, 'Restore brings the editor back');

    // Hide the output: the editor takes its place; the status bar's switch says so and brings it back.
    await page.getByTestId('hide-output').click();
    await waitForSize(page, 'output-pane', (b) => b.height < 1, 'Hide hides the output');
    assert.ok(Math.abs((await box(editor)).height - workbench.height) < 2, 'the editor takes the whole height');
    const outputSwitch = page.getByTestId('status-bar').getByRole('button', { name: 'Output panel' });
    assert.equal(await outputSwitch.getAttribute('aria-pressed'), 'false');

    // What Run says while the output is hidden brings it back, on the Run tab (here, without a GPU: why it did not start).
    if (await hasCompiler) {
      await page.keyboard.press('Control+Enter');
      const said = page.getByTestId(hasDriver ? 'diagnosis-headline' : 'run-refused');
      await said.waitFor({ timeout: 30_000 });
      await assertInsideWindow(page, said, 'what Run says');
      await page.getByTestId('status-bar').getByRole('button', { name: 'Output panel', pressed: true }).waitFor({ timeout: 5000 });
    } else {
      await outputSwitch.click();
    }
    await waitForSize(page, 'output-pane', (b) => b.height > 100, 'the output comes back');

    // Ctrl+B hides the side panel: the editor gets the window's whole width.
    await page.getByTestId('problem-count').focus();
    await page.keyboard.press('Control+B');
    await waitForSize(page, 'panel-side', (b) => b.width < 1, 'Ctrl+B hides the side panel');
    assert.ok((await box(editor)).width > viewport.width - 12, 'the editor spans the window');
    // The switch says so (it may follow the panel's collapse by a frame).
    await page.getByTestId('status-bar').getByRole('button', { name: 'Side panel', pressed: false }).waitFor({ timeout: 5000 });
    // Hidden panels take no keyboard focus: Tab from the status bar never lands in them.
    assert.equal(await page.locator('[data-testid="side-panel"][inert]').count(), 1);
    await page.keyboard.press('Control+B');
    await waitForSize(page, 'side-panel', (b) => b.width > 300, 'Ctrl+B brings the side panel back');
    await assertWholeLayoutInside(page);
    await page.close();
  });
}

/** Whether the page's focus is in the editor (Monaco's text area), waited for up to 5 s. */
async function focusInEditor(page: Page): Promise<boolean> {
  return page
    .waitForFunction(() => !!document.activeElement?.closest('.monaco-editor'), undefined, { timeout: 5000 })
    .then(() => true)
    .catch(() => false);
}

/** The tops of the visible children of an element: one value when they sit in one row. */
const rowTops = (page: Page, selector: string) =>
  page.locator(selector).evaluate((e) => [
    ...new Set(
      Array.from(e.children)
        .filter((c) => (c as HTMLElement).offsetWidth > 0)
        .map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2)),
    ),
  ]);

// Issue 26, item 9: the focus goes where a person works next (the sample's file after Open broken, the next tab after
// a close), the tab on screen is in view however many are open, and at 1024 wide the toolbar and the output tabs are
// one row, the side panel never scrolls sideways, the device select is whole, and the notes above take a line each.
test('26.9: focus after opening and closing, the active tab in view, one-row bars, a side panel that fits, one-line notes', async () => {
  for (const viewport of VIEWPORTS) {
    const size = `${viewport.width}×${viewport.height}`;
    // The host keeps the open files: the second window size starts with the first's.
    const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport });

    // Open broken, from the gallery: the sample's file is in front and the editor has the focus.
    const samples = ['oob-off-by-one', 'null-pointer', 'trap', 'device-assert', 'use-after-free', 'misaligned-access', 'never-frees'];
    for (const name of samples) {
      await page.getByTestId('gallery-tab').click();
      await page.getByTestId(`sample-${name}`).getByRole('button', { name: 'Open broken' }).click();
      await page.getByTestId('launch-panel').waitFor();
      assert.ok(
        await focusInEditor(page),
        `${size}: after Open broken (${name}) the focus is in the editor, not on ${await page.evaluate(() => document.activeElement?.tagName)}`,
      );
    }
    // Seven files or more open: the one in front has its tab in view, and so has the first once it is chosen.
    const tabs = page.getByTestId('tab');
    assert.ok((await tabs.count()) >= samples.length, `${size}: ${await tabs.count()} files open`);
    const inView = async (what: string) => {
      const row = await box(page.locator('.tabs'));
      const tab = await box(page.locator('[data-testid="tab"][aria-selected="true"]'));
      assert.ok(
        tab.x >= row.x - 1 && tab.x + tab.width <= row.x + row.width + 1,
        `${size}: ${what} is at ${tab.x}–${tab.x + tab.width}, the row ${row.x}–${row.x + row.width}`,
      );
    };
    await inView('the last file opened');
    await page.locator('[data-testid="tab"][aria-selected="true"]').focus();
    await page.keyboard.press('Home');
    await inView('the first tab, chosen with Home');
    await page.keyboard.press('End');
    await inView('the last tab, chosen with End');

    // Closing a tab: its neighbour comes to the front and takes the focus (the next one; the one before for the last).
    const names = await tabs.allInnerTexts();
    await page.keyboard.press('Home');
    await page.locator('[data-testid="tab"][aria-selected="true"] .close').click();
    await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'tab');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-selected')), 'true', `${size}: the focus is on the tab in front`);
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement).innerText), names[1], 'the next tab is in front');
    await page.keyboard.press('End');
    await page.keyboard.press('Delete');
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="tab"]').length === n, names.length - 2);
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement).innerText), names[names.length - 2], 'the last closed: the one before it');

    // One row: the toolbar and the output tabs; the compile flags fold behind their button where the row is short.
    assert.deepEqual((await rowTops(page, '.toolbar')).length, 1, `${size}: the toolbar is one row`);
    assert.deepEqual((await rowTops(page, '.output-tabs')).length, 1, `${size}: the output tabs are one row`);
    // The top bar's version is whole however narrow the window; the rest of the line gives way, and its tooltip holds all.
    const version = page.getByTestId('app-info').locator('.meta-version');
    assert.match(await version.innerText(), /^v\d+\.\d+\.\d+/, `${size}: the version on the top bar`);
    const [meta, shown, theme] = [await box(page.getByTestId('app-info')), await box(version), await box(page.locator('.theme-choice'))];
    assert.ok(shown.x >= meta.x - 0.5 && shown.x + shown.width <= meta.x + meta.width + 0.5, `${size}: the version spills out of its place`);
    assert.ok(shown.x + shown.width <= theme.x, `${size}: the version runs into the Theme choice`);
    assert.match((await page.getByTestId('app-info').getAttribute('title')) ?? '', /^v\d[^·]*· serve ·/);
    const flags = page.getByTestId('compile-flags-toggle');
    if (await flags.isVisible()) {
      await flags.click();
      await assertInsideWindow(page, page.getByLabel('Defines'), `${size}: the -D field, unfolded`);
      await page.getByLabel('Defines').focus();
      await page.keyboard.press('Escape');
      assert.equal(await page.getByLabel('Defines').isVisible(), false, 'Escape folds them again');
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'compile-flags-toggle');
    } else {
      assert.ok(viewport.width >= 1440, 'the flags fold at 1024 wide');
      await assertInsideWindow(page, page.getByLabel('Defines'), `${size}: the -D field`);
    }
    // The side panel scrolls up and down only; the device select is whole, inside it and the window.
    const side = page.getByTestId('side-panel');
    const { scrollWidth, clientWidth } = await side.evaluate((e) => ({ scrollWidth: e.scrollWidth, clientWidth: e.clientWidth }));
    assert.ok(scrollWidth <= clientWidth, `${size}: the side panel is ${scrollWidth}px wide inside ${clientWidth}px`);
    const device = page.getByTestId('launch-panel').getByLabel('Device', { exact: true });
    await device.scrollIntoViewIfNeeded();
    await assertInsideWindow(page, device, `${size}: the device select`);
    const panel = await box(side);
    const select = await box(device);
    assert.ok(
      select.x + select.width <= panel.x + panel.width + 0.5,
      `${size}: the device select ends at ${select.x + select.width}, the panel at ${panel.x + panel.width}`,
    );

    // A bundle opened beside: with the note that there is no GPU, two notes — one line each.
    await openBundleDialog(page, join(ROOT, 'test/fixtures/bundles/recorded/shared-memory-race.zip'));
    const notes = [page.getByTestId('bundle-banner'), ...(hasDriver ? [] : [page.getByTestId('no-gpu-banner')])];
    let notesHeight = 0;
    for (const note of notes) {
      await note.waitFor();
      const b = await box(note);
      assert.ok(b.height <= 36, `${size}: ${await note.getAttribute('data-testid')} is ${b.height}px tall`);
      await assertInsideWindow(page, note.getByRole('button').last(), `${size}: the note's last button`);
      notesHeight += b.height;
    }
    assert.ok(notesHeight <= 72, `${size}: the notes take ${notesHeight}px`);

    assert.deepEqual(await seriousViolations(page), []);
    assert.deepEqual(errors, []);
    await page.context().close();
  }
});
