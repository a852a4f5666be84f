import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Page } from 'playwright-core';

import { readBundle } from '../../main/bundle/read-bundle';
import { openWorkbenchPage } from '../helpers/browser';
import { seriousViolations, unnamedOrDuplicateControls } from '../helpers/a11y';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import {
  activeTab,
  assertInViewport,
  markedLine,
  openApp,
  openBundleDialog,
  openResult,
  openSample,
  sanitizerGlyphLines,
  sizeName,
  VIEWPORTS,
} from '../helpers/ui';

// Issue 15 ("bundles in the app"): bundles recorded on an H100 (test/fixtures/bundles/recorded, by
// scripts/record-bundles.sh on the GPU machine) opened through the UI on a machine with no GPU — every view a person sees shows the
// bundle's own data, read-only; and a run exported from the UI, with its preview and its progress.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-bundle-'));
const BUNDLES = join(ROOT, 'test/fixtures/bundles/recorded');
const app = serveWithBrowser(work);
const viewport = VIEWPORTS[0];

/** Open bundle… in the Run tab, as a person does. */
async function openBundle(page: Page, path: string): Promise<void> {
  await openBundleDialog(page, path);
  await page.getByTestId('bundle-banner').waitFor();
}

test('15: a recorded race opened from its bundle: banner, read-only source with its findings, diagnosis, sanitizer, launch, devices, doctor, memory', async () => {
  // axe-core goes into the page as a script, which the page's CSP forbids: this page's context lets it in.
  const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport });
  await openBundle(page, join(BUNDLES, 'shared-memory-race.zip'));

  const banner = page.getByTestId('bundle-banner');
  assert.match(
    await banner.innerText(),
    /Opened from bundle shared-memory-race\.zip \(recorded on NVIDIA H100 80GB HBM3 at \d{4}-\d\d-\d\d \d\d:\d\d UTC\), read-only\./,
  );

  // The source: the bundle's broken.cu, read-only, in front (the diagnosed kernel's file), with racecheck's finding at line 7.
  assert.match(await activeTab(page).innerText(), /broken\.cu/);
  assert.match(await page.getByTestId('compile-status').innerText(), /From the bundle \(read-only\): ✓ nvrtc · sm_90, as recorded/);
  for (let started = Date.now(); !(await sanitizerGlyphLines(page)).includes(7) && Date.now() - started < 5000;) await page.waitForTimeout(50);
  assert.ok((await sanitizerGlyphLines(page)).includes(7), 'the race is marked at broken.cu:7');
  const before = await page.locator('.monaco-editor .view-lines').innerText();
  await page.locator('.monaco-editor textarea').focus();
  await page.keyboard.type('zzz');
  assert.equal(await page.locator('.monaco-editor .view-lines').innerText(), before, 'typing does not change a bundle’s file');

  // Its kernel facts come from the recorded compile, and its launch panel checks the recorded launch on the bundle's H100.
  assert.match(await page.getByTestId('side-panel').innerText(), /reverseBlocks/);
  assert.match(await page.getByTestId('bundle-device').innerText(), /NVIDIA H100 80GB HBM3 \(from the bundle\)/);
  assert.equal(await page.getByTestId('launch-panel').getByRole('textbox', { name: 'Block' }).getAttribute('readonly'), '');
  assert.match(await page.getByTestId('bundle-run-note').innerText(), /read-only: nothing in a bundle runs by being opened/);

  // The Run tab: the recorded diagnosis.
  await page.getByTestId('output-tab-Run').click();
  assert.match(await page.getByTestId('diagnosis-headline').innerText(), /differ|race|second run/i);
  assert.match(await page.getByTestId('run-result').innerText(), /from the bundle .*shared-memory-race\.zip/);
  assert.match(await page.getByTestId('sanitizer-rerun-note').innerText(), /from a diagnostic bundle, read-only/);

  // The Sanitizer tab: racecheck's finding, which leads to its line in the bundle's file.
  await page.getByTestId('output-tab-Sanitizer').click();
  const view = page.getByTestId('sanitizer-view');
  assert.match(await view.getByTestId('sanitizer-headline').innerText(), /racecheck found 1 finding in 1 place/);
  assert.match(await view.innerText(), /From the bundle .*shared-memory-race\.zip \(read-only\)/);
  await view.getByTestId('sanitizer-finding').first().getByTestId('finding-open').click();
  assert.equal((await markedLine(page, 7)).line, 7);
  assert.match(await activeTab(page).innerText(), /broken\.cu/);

  // The PTX tab: the bundle's PTX.
  await page.getByTestId('output-tab-PTX').click();
  assert.match(await page.getByTestId('output-pane').innerText(), /\.entry _Z13reverseBlocksPKfPfi|\.visible \.entry/);

  // The Bundle view: devices and doctor as recorded on the H100, validator findings, memory markers, what it lacks.
  await banner.getByTestId('bundle-show').click();
  const bundle = page.getByTestId('bundle-view');
  assert.match(await bundle.getByTestId('bundle-devices').innerText(), /NVIDIA H100 80GB HBM3/);
  assert.match(await bundle.getByTestId('bundle-devices').innerText(), /GPU-\d+/);
  assert.match(await bundle.getByTestId('bundle-doctor').innerText(), /Judged again by this version's rules/);
  assert.ok((await bundle.getByTestId('bundle-doctor').locator('li[data-status="ok"]').count()) > 3, 'the H100’s passed checks');
  assert.match(await bundle.getByTestId('bundle-validation').innerText(), /against NVIDIA H100 80GB HBM3/i);
  assert.match(await bundle.getByTestId('bundle-memory').innerText(), /allocation/);
  // Recorded with NVML sampling the device: nothing is missing from this bundle, so no note says so.
  assert.equal(await bundle.getByTestId('bundle-notes').count(), 0);
  assert.match(await bundle.getByTestId('bundle-files').innerText(), /samples\.json[\s\S]*sanitizer\/report-\d+\.xml/);
  const violations = await seriousViolations(page);
  assert.deepEqual(violations, [], 'the Bundle view has no serious accessibility violation');

  // Run this plan again: a copy, checked like any plan on this machine — which has no GPU, so Run says why not.
  await banner.getByTestId('bundle-banner-run-again').click();
  await page.getByRole('tab', { name: 'Editor' }).click();
  await page.getByTestId('run-refused').waitFor({ timeout: 60_000 });
  assert.match(await page.getByTestId('run-refused').innerText(), /GPU|device|driver/i);
  assert.match(await page.getByTestId('attached-plan').innerText(), /from shared-memory-race\.zip \(a copy, editable\)/);

  // Closing the bundle takes its views away.
  await banner.getByTestId('bundle-close').click();
  await page.getByTestId('bundle-banner').waitFor({ state: 'detached' });
  assert.equal(await page.getByTestId('bundle-tab').count(), 0);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('15: an out-of-memory and a leak opened from their bundles: the diagnosis and the timeline markers; a hostile bundle is refused in words', async () => {
  const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
  await page.getByTestId('tab').first().waitFor();
  await openBundle(page, join(BUNDLES, 'allocation-too-large.zip'));
  await page.getByTestId('output-tab-Run').click();
  assert.match(await page.getByTestId('diagnosis-headline').innerText(), /Out of device memory at step 1 \(alloc x\)/);
  // The Memory tab draws the bundle's own timeline (built from its event log), its out-of-memory marked.
  await page.getByTestId('output-tab-Memory').click();
  assert.equal(await page.getByTestId('memory-source-file').getAttribute('aria-pressed'), 'true');
  assert.match(await page.getByTestId('memory-source-file').innerText(), /allocation-too-large\.zip/);
  await page.locator('[data-testid="memory-timeline"] canvas[data-tiles-settled="yes"]').waitFor();
  assert.ok(
    (await page.getByTestId('memory-marker').allInnerTexts()).some((t) => /^Out of memory/i.test(t)),
    'the out-of-memory marker',
  );
  assert.match(await page.getByTestId('memory-summary').innerText(), /out-of-memory/);
  await page.getByTestId('bundle-show').click();
  assert.equal(await page.getByTestId('bundle-markers').locator('li[data-kind="oom"]').count(), 1);

  // Open… takes a bundle too: a .zip opens as one.
  await page.getByRole('tab', { name: 'Editor' }).click();
  await page.getByRole('button', { name: 'Open…' }).click();
  await page.getByLabel('Path', { exact: true }).fill(join(BUNDLES, 'never-frees.zip'));
  await page.getByRole('button', { name: 'Open', exact: true }).click();
  await page.getByTestId('open-dialog').waitFor({ state: 'detached' });
  await page.getByTestId('bundle-banner').filter({ hasText: 'never-frees.zip' }).waitFor();
  await page.getByTestId('bundle-show').click();
  assert.ok((await page.getByTestId('bundle-markers').locator('li[data-kind="leak"]').count()) >= 1);
  await page.getByRole('tab', { name: 'Editor' }).click();
  await page.getByTestId('output-tab-Memory').click();
  assert.match(await page.getByTestId('memory-source-file').innerText(), /never-frees\.zip/, 'the newer bundle’s timeline');
  assert.ok(
    (await page.getByTestId('memory-marker').allInnerTexts()).some((t) => /^Leak/i.test(t)),
    'the leak marker',
  );
  await page.getByRole('tab', { name: 'Editor' }).click();
  // Both samples' kernels are kernel.cu: one tab, the newer bundle's (the last bundle's files went with it).
  assert.equal(await page.locator('[data-testid="tab"]').filter({ hasText: 'kernel.cu' }).count(), 1, 'the last bundle’s files went with it');

  // A bundle is already the one file to send: exporting its run again is not offered.
  await page.getByTestId('output-tab-Run').click();
  await page.getByTestId('run-export-bundle').click();
  assert.match(await page.getByTestId('bundle-export-unavailable').innerText(), /already the one file to send/);
  await page.keyboard.press('Escape');
  await page.getByTestId('bundle-export-dialog').waitFor({ state: 'detached' });

  // Not a bundle: refused, with the reason; the open bundle stays.
  await page.getByTestId('open-bundle').click();
  const dialog = page.getByTestId('bundle-open-dialog');
  await dialog.getByLabel('Bundle file').fill(join(ROOT, 'samples/vector-add/plan.json'));
  await dialog.getByTestId('bundle-open-submit').click();
  assert.match(await dialog.getByTestId('bundle-open-error').innerText(), /was not opened: it is not a readable zip.*Nothing was written\./);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  assert.match(await page.getByTestId('bundle-banner').innerText(), /never-frees\.zip/);
  assert.deepEqual(errors, []);
  await page.close();
});

/** The app with the off-by-one sample open and its recorded H100 result on screen. */
async function openOobResult() {
  const opened = await openApp(app.browser, app.serve.url, viewport);
  await opened.page.getByTestId('tab').first().waitFor();
  await openSample(opened.page, 'oob-off-by-one');
  await openResult(opened.page, join(ROOT, 'test/fixtures/runs/oob-off-by-one.json'));
  await opened.page.getByTestId('diagnosis-headline').waitFor();
  return opened;
}

test('15: Export bundle… from the Run tab: the exact files and environment, sources and redaction switched, progress, the zip written', async () => {
  // A recorded H100 result with its plan (the sample), as a person has one on screen.
  const { page, errors } = await openOobResult();
  await page.getByTestId('run-export-bundle').click();
  const dialog = page.getByTestId('bundle-export-dialog');
  const files = dialog.getByTestId('bundle-preview-files');
  await files.waitFor({ timeout: 60_000 });
  const names = async () => (await files.locator('td.mono').allInnerTexts()).sort();
  for (const name of [
    'manifest.json',
    'plan.json',
    'result.json',
    'compile.json',
    'validation.json',
    'doctor.json',
    'environment.json',
    'sources/broken.cu',
    'repro/repro.cu',
  ])
    assert.ok((await names()).includes(name), `${name} is in the preview`);
  assert.match(await dialog.getByTestId('bundle-preview').innerText(), /the environment, exactly as it goes in \(redacted\)/i);
  await dialog.getByTestId('bundle-preview-environment').waitFor();

  // Without sources: no source, no PTX, no repro; the preview follows.
  await dialog.getByLabel("Include the kernels' sources").uncheck();
  for (let started = Date.now(); (await names()).includes('sources/broken.cu') && Date.now() - started < 30_000;) await page.waitForTimeout(100);
  assert.ok(!(await names()).some((n) => n.startsWith('sources/') || n.startsWith('ptx/') || n.startsWith('repro/')));
  await dialog.getByLabel("Include the kernels' sources").check();
  for (let started = Date.now(); !(await names()).includes('sources/broken.cu') && Date.now() - started < 30_000;) await page.waitForTimeout(100);
  const shown = await names();

  const target = join(work, 'from-ui.zip');
  await dialog.getByLabel('Save the bundle to').fill(target);
  assert.match(await dialog.getByTestId('bundle-export-target').innerText(), new RegExp(`Writes ${target.replace(/[.]/g, '\\.')}`));
  // Every progress line the dialog shows, as it shows it (an export of kilobytes is over in a blink).
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { progressSeen: string[] }).progressSeen = seen;
    new MutationObserver(() => {
      const text = document.querySelector('[data-testid="bundle-export-progress"]')?.textContent;
      if (text && seen.at(-1) !== text) seen.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await dialog.getByTestId('bundle-export-submit').click();
  await dialog.getByTestId('bundle-export-done').waitFor({ timeout: 60_000 });
  const seen = await page.evaluate(() => (window as unknown as { progressSeen: string[] }).progressSeen);
  assert.ok(
    seen.some((t) => /^Writing the zip…/.test(t)),
    `the phases were shown: ${JSON.stringify(seen)}`,
  );
  assert.ok(seen.some((t) => /KiB written|B written/.test(t)) || seen.length >= 3, `the progress was shown: ${JSON.stringify(seen)}`);
  assert.match(await dialog.getByTestId('bundle-export-done').innerText(), /Wrote .*from-ui\.zip \(.*, \d+ files, redacted\)/);
  assert.ok(existsSync(target));
  assert.deepEqual([...(await readBundle(target)).entries.keys()].sort(), shown, 'the zip holds exactly what the preview listed');
  assert.deepEqual(
    readdirSync(work).filter((f) => f.includes('from-ui')),
    ['from-ui.zip'],
    'no temporary file is left beside it',
  );

  // A relative name goes into the folder shown, and a folder that does not exist is refused in words.
  await dialog.getByLabel('Save the bundle to').fill(join(work, 'no-such-folder', 'b.zip'));
  await dialog.getByTestId('bundle-export-submit').click();
  assert.match(await dialog.getByTestId('bundle-export-error').innerText(), /its folder does not exist\. Nothing was left behind\./);
  await dialog.getByRole('button', { name: 'Close' }).click();
  assert.deepEqual(errors, []);
  await page.close();
});

// Issue 26, item 6: a bundle exported here from a result recorded on an H100 says whose data is whose.
for (const size of VIEWPORTS) {
  test(`26.6 (${sizeName(size)}): Export bundle from an opened result works; the bundle says when the run was recorded and whose doctor it holds`, async () => {
    // A context that lets axe-core in (the page's CSP forbids inline scripts): the label's state is checked by it too.
    const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport: size });
    // Only the result: no sample, no plan opened by hand (its own sample is found by the plan it ran).
    await openResult(page, join(ROOT, 'test/fixtures/runs/device-assert.json'));
    await page.getByTestId('diagnosis-headline').waitFor();
    await page.getByTestId('run-export-bundle').click();
    const dialog = page.getByTestId('bundle-export-dialog');
    assert.equal(await dialog.getByTestId('bundle-export-unavailable').count(), 0, 'no dialog of red text');
    await dialog.getByTestId('bundle-preview-files').waitFor({ timeout: 60_000 });
    const submit = dialog.getByTestId('bundle-export-submit');
    assert.ok(await submit.isEnabled(), 'Export is enabled');
    const target = join(work, `recorded-${size.width}.zip`);
    await dialog.getByLabel('Save the bundle to').fill(target);
    await submit.click();
    await dialog.getByTestId('bundle-export-done').waitFor({ timeout: 60_000 });
    assert.ok(existsSync(target));
    await dialog.getByRole('button', { name: 'Close' }).click();

    await openBundle(page, target);
    const started = new Date(JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/device-assert.json'), 'utf8')).result.startedAtMs as number);
    const at = `${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    const banner = page.getByTestId('bundle-banner');
    assert.match(await banner.innerText(), new RegExp(`\\(recorded on NVIDIA H100 80GB HBM3 at ${at}\\), read-only\\.`));
    await assertInViewport(page, banner, 'the banner');
    await page.getByTestId('bundle-show').click();
    const machine = page.getByTestId('bundle-doctor-machine');
    await machine.scrollIntoViewIfNeeded();
    assert.match(await machine.innerText(), /doctor of the machine that exported this bundle, not the one that ran it/);
    await assertInViewport(page, machine, 'whose doctor it is');
    // The warning state of the label (and the environment's), as a screen reader and a low-vision reader get it.
    assert.equal(await machine.getAttribute('class'), 'status-warn');
    assert.match(await page.getByTestId('bundle-environment-machine').innerText(), /environment of the machine that exported this bundle/);
    assert.deepEqual(await seriousViolations(page), [], 'axe-core on the bundle view with the exporting machine’s doctor');
    assert.deepEqual(await unnamedOrDuplicateControls(page), []);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('26.6: a result whose plan is not at hand exports what there is, and says what is missing', async () => {
  const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
  await page.getByTestId('tab').first().waitFor();
  await openResult(page, join(ROOT, 'test/fixtures/runs/static-shared-too-large.json'));
  await page.getByTestId('run-export-bundle').click();
  const dialog = page.getByTestId('bundle-export-dialog');
  await dialog.getByTestId('bundle-preview-notes').waitFor({ timeout: 60_000 });
  assert.match(await dialog.getByTestId('bundle-preview-notes').innerText(), /The plan that produced this result is not at hand here/);
  const target = join(work, 'no-plan.zip');
  await dialog.getByLabel('Save the bundle to').fill(target);
  await dialog.getByTestId('bundle-export-submit').click();
  await dialog.getByTestId('bundle-export-done').waitFor({ timeout: 60_000 });
  const names = [...(await readBundle(target)).entries.keys()];
  assert.ok(names.includes('result.json') && names.includes('doctor.json') && !names.includes('plan.json'), names.join(', '));
  assert.deepEqual(errors, []);
  await page.close();
});

// Issue 27: the sanitizer report on screen goes into the bundle by the id the host answered it with, never as data the
// page sends back; the box that puts it in is what the preview and the zip follow.
test('27: Export bundle with the sanitizer report on screen: sanitizer.json and the tool’s own files go in, and out with the box', async () => {
  const { page, errors } = await openOobResult();
  const reports = join(ROOT, 'test/fixtures/sanitizer/h100');
  await page.getByRole('button', { name: 'Open sanitizer report…' }).click();
  const open = page.getByTestId('sanitizer-open-dialog');
  await open.getByLabel('Sanitizer report (XML)').fill(join(reports, 'memcheck-oob.xml'));
  await open.getByLabel('Sanitizer text output (optional)').fill(join(reports, 'memcheck-oob.xml.txt'));
  await open.getByRole('button', { name: 'Open report' }).click();
  await open.waitFor({ state: 'detached' });
  await page.getByTestId('output-tab-Run').click();
  await page.getByTestId('run-export-bundle').click();
  const dialog = page.getByTestId('bundle-export-dialog');
  const box = dialog.getByLabel('Include the sanitizer report');
  assert.ok(await box.isChecked(), 'a report opened from its files goes in unless the box is cleared');
  const files = dialog.getByTestId('bundle-preview-files');
  const names = async () => (await files.locator('td.mono').allInnerTexts()).sort();
  for (let started = Date.now(); !(await names()).includes('sanitizer.json') && Date.now() - started < 60_000;) await page.waitForTimeout(100);
  assert.ok((await names()).includes('sanitizer.json'), (await names()).join(', '));
  assert.ok(
    (await names()).some((n) => n.startsWith('sanitizer/') && n.endsWith('.xml')),
    'the XML the tool wrote goes in as it wrote it',
  );
  await box.uncheck();
  for (let started = Date.now(); (await names()).includes('sanitizer.json') && Date.now() - started < 30_000;) await page.waitForTimeout(100);
  assert.ok(!(await names()).some((n) => n.startsWith('sanitizer')), 'the preview follows the box');
  await box.check();
  for (let started = Date.now(); !(await names()).includes('sanitizer.json') && Date.now() - started < 30_000;) await page.waitForTimeout(100);
  const target = join(work, 'with-report.zip');
  await dialog.getByLabel('Save the bundle to').fill(target);
  await dialog.getByTestId('bundle-export-submit').click();
  await dialog.getByTestId('bundle-export-done').waitFor({ timeout: 60_000 });
  const { entries } = await readBundle(target);
  const report = JSON.parse(new TextDecoder().decode(entries.get('sanitizer.json')!)) as { tool: string; groups: unknown[]; reportId?: unknown };
  assert.equal(report.tool, 'memcheck');
  assert.ok(report.groups.length > 0, 'its findings');
  assert.equal('reportId' in report, false, 'the id of this session never goes into a file');
  assert.deepEqual([...entries.keys()].sort(), await names(), 'the zip holds exactly what the preview listed');
  assert.deepEqual(errors, []);
  await page.close();
});
