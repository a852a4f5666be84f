import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Page } from 'playwright-core';

import { timelineTraceChunks } from '../../core/memory/timeline-trace';
import { seriousViolations, unnamedOrDuplicateControls } from '../helpers/a11y';
import { openWorkbenchPage } from '../helpers/browser';
import { ROOT } from '../helpers/cli';
import { neverFreesTimeline } from '../helpers/run-log';
import { serveWithBrowser } from '../helpers/serve';
import { VIEWPORTS } from '../helpers/ui';
import { assertInsideWindow } from '../helpers/viewports';

// Issue 26, items 3 and 10: one Open… that knows what a file is by its content and sends it where it belongs (a
// sanitizer's text output alone as a report too, a Chrome trace drawn in the Memory tab), the
// same file browser in every open dialog, relative paths against the folder serve runs in (this checkout), recent files.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-open-'));
const app = serveWithBrowser(work);
const RESULT = join(ROOT, 'test/fixtures/runs/trap.json');
// What compute-sanitizer printed for the off-by-one on an H100, saved on its own as a CI log would be (no XML beside it).
const SANITIZER_LOG = join(work, 'ci-memcheck.log');
copyFileSync(join(ROOT, 'test/fixtures/sanitizer/h100/memcheck-oob.txt'), SANITIZER_LOG);
// A Chrome trace as `gpu-workbench run --trace` writes it: the recorded never-frees run's event log with the device's
// memory sampled around it (written the same way, by timelineTraceChunks).
const TRACE = join(work, 'never-frees.trace.json');
writeFileSync(TRACE, [...timelineTraceChunks([neverFreesTimeline()], { source: 'gpu-workbench run --trace' })].join(''));

const newPage = (viewport: (typeof VIEWPORTS)[number]) => openWorkbenchPage(app.browser, app.serve.url, { viewport });

/** Open… with a path typed, as a person does; waits until the dialog has gone. */
async function openTyped(page: Page, path: string): Promise<void> {
  await page.getByRole('tab', { name: 'Editor' }).click();
  await page.getByRole('button', { name: 'Open…' }).click();
  const dialog = page.getByTestId('open-dialog');
  await dialog.getByLabel('Path', { exact: true }).fill(path);
  await dialog.getByRole('button', { name: 'Open', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
}

const fileTabs = (page: Page) => page.getByTestId('tab').allInnerTexts();

/** The dialog's axe findings and unnamed or doubled controls. */
async function a11y(page: Page, what: string): Promise<string[]> {
  return [...(await seriousViolations(page)), ...(await unnamedOrDuplicateControls(page))].map((v) => `${what}: ${v}`);
}

for (const viewport of VIEWPORTS) {
  const size = `${viewport.width}×${viewport.height}`;

  test(`26.10 (${size}): a relative path in Open result is read from the folder serve runs in`, async () => {
    const { page, errors } = await newPage(viewport);
    await page.getByTestId('output-tab-Run').click();
    await page.getByLabel('Result file').fill('test/fixtures/runs/null-pointer.json');
    assert.equal(await page.getByTestId('result-path-shown').innerText(), join(ROOT, 'test/fixtures/runs/null-pointer.json'));
    await page.getByRole('button', { name: 'Open result', exact: true }).click();
    await page.getByText(`opened from ${join(ROOT, 'test/fixtures/runs/null-pointer.json')}`, { exact: true }).waitFor();
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test(`26.3 (${size}): Open… on a result .json shows it in the Run tab, never as an editor tab, not after a reload either`, async () => {
    const { page, errors } = await newPage(viewport);
    await openTyped(page, RESULT);
    assert.equal(await page.getByTestId('output-tab-Run').getAttribute('aria-selected'), 'true');
    await page.getByText(`opened from ${RESULT}`, { exact: true }).waitFor();
    assert.ok(!(await fileTabs(page)).some((t) => t.includes('trap.json')), `no editor tab for the result: ${await fileTabs(page)}`);
    await page.reload();
    await page.getByTestId('tab').first().waitFor();
    assert.ok(!(await fileTabs(page)).some((t) => t.includes('trap.json')), 'the result does not come back as a tab');

    // The result is listed under Recent in the Open dialog, and opens again from there.
    await page.getByRole('button', { name: 'Open…' }).click();
    const recent = page.getByTestId('recent-files');
    await recent.getByRole('button', { name: 'trap.json' }).waitFor();
    assert.match(await recent.innerText(), /trap\.json\s+run result/);
    await recent.getByRole('button', { name: 'trap.json' }).click();
    await page.getByTestId('open-dialog').waitFor({ state: 'detached' });
    await page.getByText(`opened from ${RESULT}`, { exact: true }).waitFor();
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test(`26.3 (${size}): Open… on a snapshot pickle opens the Memory tab; on a bundle zip, the bundle`, async () => {
    const { page, errors } = await newPage(viewport);
    await openTyped(page, join(ROOT, 'test/fixtures/snapshots/h100/leak.pickle'));
    assert.equal(await page.getByTestId('output-tab-Memory').getAttribute('aria-selected'), 'true');
    await page.getByTestId('memory-source-file').filter({ hasText: 'leak.pickle' }).waitFor();
    assert.ok(!(await fileTabs(page)).some((t) => t.includes('leak.pickle')));

    await openTyped(page, join(ROOT, 'test/fixtures/bundles/never-frees.zip'));
    await page.getByTestId('bundle-banner').filter({ hasText: 'never-frees.zip' }).waitFor();
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test(`26.3 (${size}): Open… on what compute-sanitizer printed, alone (a .log, no XML beside it), shows it as a report in the Sanitizer tab`, async () => {
    const { page, errors } = await newPage(viewport);
    await openTyped(page, SANITIZER_LOG);
    assert.equal(await page.getByTestId('output-tab-Sanitizer').getAttribute('aria-selected'), 'true');
    const view = page.getByTestId('sanitizer-view');
    const headline = view.getByTestId('sanitizer-headline');
    await headline.waitFor();
    assert.match(await headline.innerText(), /ci-memcheck\.log: memcheck found 4 findings in 3 places, 8,000 bytes leaked\./);
    assert.match(await view.innerText(), /Opened from .*ci-memcheck\.log: the text the tool printed, without its XML report/);
    assert.match(await view.getByTestId('sanitizer-details').innerText(), /Read from the text compute-sanitizer printed, without its XML report/);
    // One row per place, the write first, with its file and line and how far past the allocation it went.
    const rows = view.getByTestId('sanitizer-finding');
    assert.equal(await rows.count(), 3);
    const write = rows.first();
    assert.equal(await write.getAttribute('data-kind'), 'memory-access');
    assert.equal(await write.getAttribute('data-line'), '12');
    assert.match(await write.innerText(), /offByOne/);
    assert.match(await write.innerText(), /sanitizer_cases\.cu:12/);
    assert.match(await write.innerText(), /1 byte after/);
    assert.ok(!(await fileTabs(page)).some((t) => t.includes('ci-memcheck')), 'not an editor tab');
    const recent = await page
      .getByRole('button', { name: 'Open…' })
      .click()
      .then(() => page.getByTestId('recent-files').innerText());
    assert.match(recent, /ci-memcheck\.log\s+sanitizer output/);
    await page.keyboard.press('Escape');
    assert.deepEqual(await a11y(page, 'the Sanitizer tab with a text report'), []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test(`26.3 (${size}): Open… on a Chrome trace (run --trace) draws it in the Memory tab, and lists its events with their durations`, async () => {
    const { page, errors } = await newPage(viewport);
    await openTyped(page, TRACE);
    assert.equal(await page.getByTestId('output-tab-Memory').getAttribute('aria-selected'), 'true');
    await page.getByTestId('memory-source-file').filter({ hasText: 'never-frees.trace.json' }).waitFor();
    const canvas = page.getByRole('application', { name: /Memory timeline of never-frees\.trace\.json/ });
    await canvas.waitFor();
    await page.locator('[data-testid="memory-timeline"] canvas[data-tiles-settled="yes"]').waitFor();
    // On screen where the output panel is (a run's counters and five lanes of spans need more than 1024×700 has: it scrolls there).
    const drawn = (await canvas.boundingBox())!;
    assert.ok(drawn.y >= 0 && drawn.y + 200 < viewport.height && drawn.width > 400, `the trace’s timeline is at ${JSON.stringify(drawn)}`);
    if (viewport.height >= 900) await assertInsideWindow(page, canvas, 'the trace’s timeline');
    // Its tracks as the run drew them: the device's memory, the allocations, the kernel, the copies.
    const tracks = await page.getByTestId('track-label').allInnerTexts();
    for (const name of [/Allocations/, /^Kernels/, /^Copies/])
      assert.ok(
        tracks.some((t) => name.test(t)),
        `${name} among ${tracks.join(' | ')}`,
      );
    // In words: the three 4 MiB buffers never freed, and the trace's events by total time.
    const summary = await page.getByTestId('memory-summary').innerText();
    assert.match(summary, /3 allocations \(12 MiB\) still alive when the timeline ends/);
    const table = page.getByTestId('trace-events');
    await table.scrollIntoViewIfNeeded();
    assert.match(await table.locator('caption').innerText(), /Events in the trace, by total time/);
    const rows = await table.getByTestId('trace-event-row').allInnerTexts();
    assert.ok(
      rows.some((r) => /^vecAdd\s+kernel\s+1\s+[\d.]+ (µs|ms)\s+[\d.]+ (µs|ms)$/.test(r)),
      rows.join(' | '),
    );
    assert.ok(
      rows.some((r) => /^4 MiB a\s+allocation\s+1\s/.test(r)),
      rows.join(' | '),
    );
    assert.match(await page.getByTestId('memory-side').innerText(), /A Chrome trace of [\d,]+ events, drawn from what it records/);
    assert.ok(!(await fileTabs(page)).some((t) => t.includes('trace.json')), 'not an editor tab');
    assert.deepEqual(await a11y(page, 'the Memory tab with a trace'), []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test(`26.10 (${size}): every open dialog has the same file browser, starting where the last file was found; axe-clean`, async () => {
    const { page, errors } = await newPage(viewport);
    const found: string[] = [];
    // Open… → Browse…: a file picked in the browser opens where it belongs (this result in the Run tab).
    await page.getByRole('button', { name: 'Open…' }).click();
    found.push(...(await a11y(page, 'Open dialog')));
    await page.getByTestId('open-dialog').getByRole('button', { name: 'Browse…' }).click();
    const browser = page.getByTestId('open-browse-dialog');
    const runs = join(ROOT, 'test/fixtures/runs');
    await browser.getByLabel('File path').fill(runs);
    await browser.getByLabel('File path').press('Enter');
    await browser.getByRole('list', { name: `In ${runs}` }).waitFor();
    found.push(...(await a11y(page, 'Open… file browser')));
    await browser.getByRole('button', { name: 'trap.json', exact: true }).click();
    await browser.waitFor({ state: 'detached' });
    await page.getByText(`opened from ${RESULT}`, { exact: true }).waitFor();

    // Each other dialog's Browse… opens the same browser, in the folder the last file came from.
    const dialogs: [string, () => Promise<void>, string][] = [
      ['Open result', () => page.getByRole('button', { name: 'Browse… for a saved result' }).click(), 'result-open-dialog'],
      [
        'Open sanitizer report',
        async () => {
          await page.getByRole('button', { name: 'Open sanitizer report…' }).click();
          await page.getByRole('button', { name: 'Browse… for the report' }).click();
        },
        'sanitizer-browse-dialog',
      ],
      [
        'Open bundle',
        async () => {
          await page.getByTestId('open-bundle').click();
          await page.getByRole('button', { name: 'Browse… for a bundle' }).click();
        },
        'bundle-browse-dialog',
      ],
      [
        'Open memory snapshot',
        async () => {
          await page.getByTestId('output-tab-Memory').click();
          await page.getByRole('button', { name: 'Open memory snapshot…' }).click();
          await page.getByRole('button', { name: 'Browse… for a snapshot' }).click();
        },
        'memory-browse-dialog',
      ],
    ];
    for (const [what, open, testId] of dialogs) {
      await page.getByTestId('output-tab-Run').click();
      await open();
      const dialog = page.getByTestId(testId);
      await dialog.getByRole('list', { name: `In ${runs}` }).waitFor();
      found.push(...(await a11y(page, what)));
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      // The dialog it was opened from (if any) is back: close it too.
      if (await page.getByRole('dialog').count()) await page.keyboard.press('Escape');
    }
    assert.deepEqual(found, []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
}
