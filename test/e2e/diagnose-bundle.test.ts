import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import type { Page } from 'playwright-core';

import { ROOT } from '../helpers/cli';
import { assertAccessible, diagnosePage, DIAGNOSES, openSaved } from '../helpers/diagnose-ui';
import { serveWithBrowser } from '../helpers/serve';
import { openBundleDialog, openByPath, sizeName, VIEWPORTS, type Viewport } from '../helpers/ui';
import { assertInsideWindow } from '../helpers/viewports';

// A diagnosis as a bundle, through the UI: a recorded out-of-memory (an H100's, test/fixtures/diagnoses) exported from
// the Diagnose view with `serve` started normally (exporting runs nothing: no --allow-programs), then that bundle opened
// as a colleague would — the Bundle view says what it holds, Open in Diagnose shows the report, and the allocator's
// snapshot that travelled in the bundle opens in the Memory tab.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-diagnose-bundle-'));
const exportsDir = join(work, 'exports');
mkdirSync(exportsDir, { recursive: true });
const SHOTS = join(ROOT, 'test-results');
mkdirSync(SHOTS, { recursive: true });
const OOM_VERDICT = /Out of GPU memory at join\.py:20 .*asking for 63\.3 GiB/;

/** Export bundle… on the report on screen: the dialog, with its defaults checked. */
async function openExportDialog(page: Page) {
  const button = page.getByRole('button', { name: 'Export bundle…' });
  assert.equal(await button.isDisabled(), false, 'a report the host holds can be exported');
  assert.equal(await page.getByTestId('diagnosis-export-blocked').count(), 0);
  await button.click();
  const dialog = page.getByTestId('diagnosis-export-dialog');
  await dialog.waitFor();
  assert.match(await dialog.getByTestId('diagnosis-export-verdict').innerText(), OOM_VERDICT);
  // A report opened from a file goes without this machine's doctor: the dialog says what the zip will hold, not more.
  const about = await dialog.getByTestId('diagnosis-export-about').innerText();
  assert.doesNotMatch(about, /and this machine’s doctor and CUDA variables/);
  assert.match(about, /This machine’s doctor and variables stay out: the diagnosis was recorded elsewhere \(opened from a file\)\./);
  const redact = dialog.getByRole('checkbox', { name: 'Hide user and host names, home folders and your own variables' });
  assert.equal(await redact.isChecked(), true, 'names are hidden unless asked not to');
  return dialog;
}

/** The Bundle view of a bundle that holds the recorded out-of-memory: in front, saying so, with no run's empty sections. */
async function assertDiagnosisBundleShown(page: Page, name: string, viewport: Viewport) {
  await page.getByTestId('bundle-view').waitFor();
  assert.equal(await page.getByRole('tab', { name: 'Bundle' }).getAttribute('aria-selected'), 'true', 'the app lands on the Bundle view');
  const banner = page.getByTestId('bundle-banner');
  assert.match(await banner.innerText(), new RegExp(`Opened from bundle ${name.replace(/\./g, '\\.')} \\(recorded on NVIDIA H100`));
  assert.match(await banner.getByTestId('bundle-banner-diagnosis').innerText(), /^It holds a program’s diagnosis: Out of GPU memory at join\.py:20/);
  // A diagnosis has no plan: no "Run this plan again" that could never be pressed.
  assert.equal(await banner.getByRole('button', { name: 'Run this plan again' }).count(), 0);
  await assertInsideWindow(page, banner, `${sizeName(viewport)}: the banner`);
  const held = page.getByTestId('bundle-program-diagnosis');
  assert.match(await page.getByTestId('bundle-diagnosis-verdict').innerText(), /^It holds a program’s diagnosis: Out of GPU memory at join\.py:20/);
  assert.match(await held.innerText(), /python3\s*join\.py/);
  assert.match(await held.innerText(), /It carries the allocator’s snapshot from the out-of-memory: Open in Diagnose, then Open in the Memory tab\./);
  for (const empty of ['bundle-memory', 'bundle-validation', 'bundle-kernels', 'bundle-devices'])
    assert.equal(await page.getByTestId(empty).count(), 0, `no empty ${empty} for a diagnosis`);
  assert.match(await page.getByTestId('bundle-files').innerText(), /diagnosis\.json[\s\S]*diagnosis\/oom-snapshot\.pickle/);
  const open = held.getByRole('button', { name: 'Open in Diagnose' });
  await assertInsideWindow(page, page.getByRole('heading', { name: 'A program’s diagnosis' }), `${sizeName(viewport)}: the diagnosis heading`);
  await open.scrollIntoViewIfNeeded();
  return open;
}

describe('a host started normally: a diagnosis exported as a bundle, and opened again', () => {
  const app = serveWithBrowser(join(work, 'host'), {}, ['--root', work]);

  for (const viewport of VIEWPORTS) {
    test(`${sizeName(viewport)}: export the recorded out-of-memory, open its bundle, Open in Diagnose, its snapshot in the Memory tab`, async () => {
      const { page, errors, close } = await diagnosePage(app.browser, app.serve.url, viewport);
      await openSaved(page, 'pytorch-oom-too-large.json');
      const dialog = await openExportDialog(page);
      // The name proposed goes beside the report it came from.
      assert.match(
        await dialog.getByTestId('diagnosis-export-target').innerText(),
        new RegExp(`^Writes ${DIAGNOSES}/gpu-workbench-diagnosis-join-[\\dT-]+\\.zip$`),
      );
      // Choose folder…: its own dialog; Escape closes it alone, then a folder typed there is where the bundle goes.
      await dialog.getByRole('button', { name: 'Choose folder…' }).click();
      const folder = page.getByTestId('diagnosis-export-folder-dialog');
      await folder.waitFor();
      await page.keyboard.press('Escape');
      await folder.waitFor({ state: 'detached' });
      assert.equal(await dialog.isVisible(), true, 'Escape in the folder dialog leaves the export dialog open');
      await dialog.getByRole('button', { name: 'Choose folder…' }).click();
      await folder.getByLabel('Folder path').fill(exportsDir);
      await folder.getByRole('button', { name: 'Use the folder typed' }).click();
      await folder.waitFor({ state: 'detached' });
      const name = `oom-${viewport.width}.zip`;
      await dialog.getByLabel('Save to').fill(name);
      const path = join(exportsDir, name);
      assert.equal(await dialog.getByTestId('diagnosis-export-target').innerText(), `Writes ${path}`);
      await assertAccessible(page, `${sizeName(viewport)}: the export dialog`);
      await dialog.getByRole('button', { name: 'Export', exact: true }).click();
      const status = dialog.getByTestId('diagnosis-export-status');
      await status.filter({ hasText: 'Wrote' }).waitFor({ timeout: 60_000 });
      const bytes = statSync(path).size;
      assert.match(
        await status.innerText(),
        new RegExp(`^Wrote ${path.replace(/\./g, '\\.')} \\(\\d[\\d.]* (B|KiB|MiB), redacted\\)\\. Send it as it is: Open bundle… opens it`),
      );
      assert.ok(bytes > 1000, `the bundle has the report and its snapshot (${bytes} bytes)`);
      assert.equal(await dialog.getByTestId('diagnosis-export-error').count(), 0);
      await assertAccessible(page, `${sizeName(viewport)}: exported`);
      await page.screenshot({ path: join(SHOTS, `diagnose-export-${viewport.width}.png`) });
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });

      // A colleague opens it: the Bundle view, not an empty editor.
      await openBundleDialog(page, path);
      const openInDiagnose = await assertDiagnosisBundleShown(page, name, viewport);
      await assertAccessible(page, `${sizeName(viewport)}: the bundle of a diagnosis`);
      await page.screenshot({ path: join(SHOTS, `bundle-diagnosis-${viewport.width}.png`) });

      // Open in Diagnose: the report, marked as the bundle's; it is the file to send, so it is not exported again.
      await openInDiagnose.click();
      assert.equal(await page.getByRole('tab', { name: 'Diagnose' }).getAttribute('aria-selected'), 'true');
      const verdict = page.getByTestId('diagnosis-verdict');
      assert.match(await verdict.innerText(), OOM_VERDICT);
      assert.ok(await verdict.evaluate((e) => e === document.activeElement), 'the verdict has the focus, as the button that opened it is gone');
      assert.equal(
        await page.getByTestId('diagnosis-origin-text').innerText(),
        `Opened from the bundle ${path}: read, never run here; the program was diagnosed where the bundle was made.`,
      );
      assert.equal(await page.getByRole('button', { name: 'Export bundle…' }).isDisabled(), true);
      assert.equal(
        await page.getByTestId('diagnosis-export-blocked').innerText(),
        `This diagnosis came from the bundle ${name}, which is already the one file to send: send it as it is.`,
      );
      const rows = page.getByTestId('diagnosis-alive-by-line').locator('tbody tr');
      assert.equal(await rows.count(), 2);
      await assertAccessible(page, `${sizeName(viewport)}: the bundle's diagnosis in Diagnose`);

      // Its snapshot came in the bundle: the Memory tab draws it, named after the bundle.
      await page.getByTestId('diagnosis-oom').getByRole('button', { name: 'Open in the Memory tab' }).click();
      await page.getByRole('application', { name: `Memory timeline of the allocator’s snapshot from ${name}` }).waitFor({ timeout: 30_000 });
      assert.equal(await page.getByTestId('output-tab-Memory').getAttribute('aria-selected'), 'true');
      assert.match(await page.getByTestId('memory-summary').innerText(), /63\.34 GiB|31\.67 GiB/);
      await assertAccessible(page, `${sizeName(viewport)}: the bundle's snapshot in the Memory tab`);
      assert.deepEqual(errors, []);
      await close();
    });
  }

  test('Open… with the .zip reaches the same place; closing the bundle takes its diagnosis away', async () => {
    const viewport = VIEWPORTS[1];
    const path = join(exportsDir, `oom-${VIEWPORTS[0].width}.zip`);
    assert.ok(existsSync(path), 'the bundle exported by the first test');
    const { page, errors, close } = await diagnosePage(app.browser, app.serve.url, viewport);
    await page.getByRole('tab', { name: 'Editor' }).click();
    await openByPath(page, path);
    const openInDiagnose = await assertDiagnosisBundleShown(page, `oom-${VIEWPORTS[0].width}.zip`, viewport);
    await openInDiagnose.click();
    assert.match(await page.getByTestId('diagnosis-verdict').innerText(), OOM_VERDICT);
    await page.getByTestId('bundle-banner').getByRole('button', { name: 'Close bundle' }).click();
    await page.getByTestId('bundle-banner').waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('diagnosis-report').count(), 0, 'the bundle’s report goes with the bundle');
    assert.match(await page.getByTestId('diagnose-results').innerText(), /No diagnosis yet/);
    assert.deepEqual(errors, []);
    await close();
  });

  test('an export to a folder that does not exist says so, and writes nothing', async () => {
    const viewport = VIEWPORTS[1];
    const { page, errors, close } = await diagnosePage(app.browser, app.serve.url, viewport);
    await openSaved(page, 'pytorch-oom-too-large.json');
    const dialog = await openExportDialog(page);
    const missing = join(work, 'no-such-folder');
    const path = join(missing, 'oom.zip');
    await dialog.getByLabel('Save to').fill(path);
    await dialog.getByRole('button', { name: 'Export', exact: true }).click();
    const error = dialog.getByTestId('diagnosis-export-error');
    await error.waitFor({ timeout: 60_000 });
    assert.equal(
      await error.innerText(),
      `The diagnosis was not exported. The bundle was not written to ${path}: its folder does not exist. Nothing was left behind.`,
    );
    assert.equal(await dialog.getByTestId('diagnosis-export-status').innerText(), '');
    assert.equal(existsSync(missing), false);
    await assertInsideWindow(page, error, `${sizeName(viewport)}: the error`);
    await assertAccessible(page, `${sizeName(viewport)}: refused`);
    // The dialog stays, with the path to correct: the report is still there to export.
    assert.equal(await dialog.getByRole('button', { name: 'Export', exact: true }).isDisabled(), false);
    assert.deepEqual(readdirSync(exportsDir).sort(), VIEWPORTS.map((v) => `oom-${v.width}.zip`).sort());
    assert.deepEqual(errors, []);
    await close();
  });
});
