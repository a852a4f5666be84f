import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { findNvcc } from '../../main/compile/nvcc';
import { ROOT, SAMPLES } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { activeTab, assertInViewport, markedLine, openApp, openResult, openSample, sizeName, VIEWPORTS, waitForCompile } from '../helpers/ui';

// Issue 12, items 2, 3 and 10 (backticks, sanitizer command, PTX): what a result, a diagnostic or the PTX
// names opens that file and marks the line; tabs of the same name say their folder.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-links-'));
const RUNS = join(ROOT, 'test/fixtures/runs');
const hasCompiler = findNvcc().then((n) => n.found);
const app = serveWithBrowser(work);

// A result saved beside its kernel's file: the link finds the file there without asking.
const beside = join(work, 'beside');
mkdirSync(beside);
copyFileSync(join(RUNS, 'device-assert.json'), join(beside, 'device-assert.json'));
copyFileSync(join(SAMPLES, 'device-assert/broken.cu'), join(beside, 'broken.cu'));

for (const viewport of VIEWPORTS) {
  test(`2 (${sizeName(viewport)}): a result's file:line opens that file and marks the line; same-named tabs show their folders`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    // Three samples whose kernels are all broken.cu.
    for (const name of ['trap', 'oob-off-by-one', 'device-assert']) await openSample(page, name);
    await waitForCompile(page);
    const tabs = page.getByTestId('tab').filter({ hasText: 'broken.cu' });
    const labels = await tabs.allInnerTexts();
    for (const folder of ['trap', 'oob-off-by-one', 'device-assert'])
      assert.ok(
        labels.some((l) => l.includes(folder)),
        `${folder} in ${labels.join(' | ')}`,
      );
    assert.equal(new Set(labels).size, labels.length, 'every broken.cu tab reads differently');
    await openSample(page, 'trap'); // another broken.cu is on screen when the link is followed

    // A recorded result names broken.cu:9: its own sample (the one whose plan it ran) is where that file is: no question.
    await openResult(page, join(RUNS, 'device-assert.json'));
    await page.getByTestId('diagnosis-source').getByRole('button', { name: 'broken.cu:9' }).click();
    await page.locator('[data-testid="tab"][aria-selected="true"][title*="device-assert/broken.cu"]').waitFor();
    assert.equal(await page.getByTestId('locate-dialog').count(), 0, 'nothing is asked');
    assert.match(await activeTab(page).innerText(), /broken\.cu\s*device-assert/);
    const shown = await markedLine(page, 9);
    assert.equal(shown.line, 9);
    assert.ok(shown.focused, 'the editor has the focus');
    await assertInViewport(page, page.locator('.monaco-editor .source-mark-line').first(), 'the marked line');
    assert.match(shown.text, /assert\(i < n\);/);

    // Saved beside its kernel, the same result opens that file directly.
    await openResult(page, join(beside, 'device-assert.json'));
    await page.getByTestId('diagnosis-source').getByRole('button', { name: 'broken.cu:9' }).click();
    await page.locator('[data-testid="tab"][aria-selected="true"][title*="beside/broken.cu"]').waitFor();
    assert.equal((await markedLine(page, 9)).line, 9);
    assert.equal(await page.getByTestId('locate-dialog').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`4 (${sizeName(viewport)}): when a link must ask, the answer is kept; with the output maximised the line is shown`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    for (const name of ['trap', 'device-assert']) await openSample(page, name);
    // A compile failure recorded elsewhere: no plan ran, no sample is its own, two broken.cu are open: it asks.
    await openResult(page, join(RUNS, 'static-shared-too-large.json'));
    const link = page.getByTestId('diagnosis-compile').getByRole('button', { name: 'broken.cu:3:17' });
    await link.click();
    const dialog = page.getByTestId('locate-dialog');
    assert.match(await dialog.locator('h2').innerText(), /Where is broken\.cu\?/);
    await dialog.getByLabel('Path of the file').fill(join(SAMPLES, 'static-shared-too-large/broken.cu'));
    await dialog.getByRole('button', { name: 'Open', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.match(await activeTab(page).innerText(), /broken\.cu\s*static-shared-too-large/);
    assert.equal((await markedLine(page, 3)).line, 3);

    // Another file in front, the output panel maximised: the same link goes to the same file without asking, and shows it.
    await page.getByTestId('tab').filter({ hasText: 'trap' }).click();
    await page.getByTestId('maximize-output').click();
    await page
      .locator('.monaco-editor')
      .first()
      .waitFor({ state: 'hidden' })
      .catch(() => undefined);
    await link.click();
    await page.locator('[data-testid="tab"][aria-selected="true"][title*="static-shared-too-large/broken.cu"]').waitFor();
    assert.equal(await page.getByTestId('locate-dialog').count(), 0, 'the answer was kept: nothing is asked again');
    const shown = await markedLine(page, 3);
    assert.equal(shown.line, 3);
    await assertInViewport(page, page.locator('.monaco-editor .source-mark-line').first(), 'the marked line, with the output panel maximised before');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`4 (${sizeName(viewport)}): a racecheck row goes to the open file that defines its kernel, not the recording machine's path`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    for (const name of ['shared-memory-race', 'trap']) await openSample(page, name);
    await waitForCompile(page);
    await page.getByTestId('tab').filter({ hasText: 'shared-memory-race' }).click();
    await waitForCompile(page);
    await page.getByTestId('tab').filter({ hasText: 'trap' }).click();
    await page.getByTestId('output-tab-Run').click();
    await page.getByRole('button', { name: 'Open sanitizer report…' }).click();
    const open = page.getByTestId('sanitizer-open-dialog');
    await open.getByLabel('Sanitizer report (XML)').fill(join(ROOT, 'test/fixtures/sanitizer/h100/gallery-shared-memory-race-broken-2131.xml'));
    await open.getByRole('button', { name: 'Open report' }).click();
    const row = page.getByTestId('sanitizer-finding').first();
    await row.getByTestId('finding-open').click();
    await page.locator('[data-testid="tab"][aria-selected="true"][title*="shared-memory-race/broken.cu"]').waitFor();
    assert.equal(await page.getByTestId('locate-dialog').count(), 0, 'nothing is asked');
    const shown = await markedLine(page);
    assert.ok(shown.line > 0);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`2 (${sizeName(viewport)}): a finding or a problem that names a line marks that line of its own file`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await openSample(page, 'static-shared-too-large');
    await page.getByTestId('compile-status').filter({ hasText: /✓|✗/ }).waitFor({ timeout: 60_000 });
    const finding = page.getByTestId('launch-panel').getByTestId('finding-static-shared-too-large');
    assert.match(await finding.innerText(), /__shared__ float cache\[100000\] \(390\.63 KiB\) at line 4/);
    await finding.getByTestId('finding-line').click();
    let shown = await markedLine(page);
    assert.deepEqual([shown.line, shown.focused], [4, true]);
    assert.match(shown.text, /__shared__ float cache\[100000\];/);
    assert.match(await activeTab(page).innerText(), /broken\.cu/);

    // A compile problem marks its line the same way.
    await page.getByTestId('output-tab-Problems').click();
    const problem = page.getByTestId('problems').locator('li.problem-error').first();
    const line = Number(await problem.getAttribute('data-line'));
    await problem.click();
    shown = await markedLine(page, line);
    assert.equal(shown.line, line);
    await assertInViewport(page, page.locator('.monaco-editor .source-mark-line').first(), 'the marked line');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`3 (${sizeName(viewport)}): a compile failure recorded in a result shows the error, on its line`, async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await openResult(page, join(RUNS, 'static-shared-too-large.json'));
    const compile = page.getByTestId('diagnosis-compile');
    await compile.waitFor();
    const said = await compile.innerText();
    assert.match(
      said,
      /error\s+broken\.cu:3:17\s+blockSum uses 391 KiB \(400000 bytes\) of static shared memory; static __shared__ arrays are limited to 48 KiB/,
    );
    await assertInViewport(page, compile.getByRole('button', { name: 'broken.cu:3:17' }), 'the error and its place');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`10 (${sizeName(viewport)}): messages show their code as code, not between backticks`, async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await openResult(page, join(RUNS, 'device-assert.json'));
    const headline = page.getByTestId('diagnosis-headline');
    await headline.filter({ hasText: 'A device-side assert failed' }).waitFor();
    assert.equal(await headline.locator('code').innerText(), 'i < n');
    assert.doesNotMatch(await headline.innerText(), /`/);
    assert.doesNotMatch(await page.getByTestId('diagnosis-specifics').innerText(), /`/);
    await assertInViewport(page, headline.locator('code'), 'the condition, as code');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`10 (${sizeName(viewport)}): a recorded result's sanitizer command names no path of the machine that recorded it`, async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await openResult(page, join(RUNS, 'null-pointer.json'));
    const command = page.getByTestId('sanitizer-command');
    await command.waitFor();
    assert.equal(await command.innerText(), 'gpu-workbench sanitize --tool memcheck --plan path/to/plan.json');
    assert.match(await page.getByTestId('sanitizer-placeholder').innerText(), /stands for the plan's file on this machine/);
    await assertInViewport(page, command, 'the sanitizer command');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`10 (${sizeName(viewport)}): PTX lines lead to their source lines: hover tells the line, a click shows it in the editor`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await openSample(page, 'device-assert');
    await waitForCompile(page);
    await page.getByTestId('output-tab-PTX').click();
    const line = page.getByTestId('ptx-view').locator('.ptx-line[data-source-line="9"]').first();
    await line.scrollIntoViewIfNeeded();
    await line.hover();
    const tip = page.getByTestId('ptx-tooltip');
    assert.match(await tip.innerText(), /broken\.cu:9\s+assert\(i < n\);/);
    await assertInViewport(page, tip, 'the PTX tooltip');
    assert.ok((await page.locator('.ptx-line.same-source').count()) > 1, 'the PTX of the same source line is highlighted');
    await line.click();
    const shown = await markedLine(page);
    assert.equal(shown.line, 9);
    assert.ok(shown.focused);
    assert.deepEqual(errors, []);
    await page.close();
  });
}
