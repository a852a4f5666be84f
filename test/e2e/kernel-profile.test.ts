import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Page } from 'playwright-core';

import { exportBundle } from '../../main/bundle/bundle-service';
import { loadSample } from '../../main/services/sample-service';
import { seriousViolations, unnamedOrDuplicateControls } from '../helpers/a11y';
import { openWorkbenchPage } from '../helpers/browser';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { activeTab, assertInViewport, markedLine, openByPath, sizeName, VIEWPORTS } from '../helpers/ui';
import type { RunOutcome } from '../../core/runner/run-outcome';
import type { Profile } from '../../core/kernel-profile/profile';

// Issue 28 (e2e, no GPU): a kernel profile recorded on an H100 (test/fixtures/ncu) opened with Open…: its findings,
// figures and lines in the Profile tab, its heat margin and hover on its own file's lines and on no other file's,
// the compare view between two profiles, and the no-counters message with why and how to allow the counters.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-profile-'));
const app = serveWithBrowser(work);
const NCU = join(ROOT, 'test/fixtures/ncu');
const BROKEN_CU = join(ROOT, 'samples/uncoalesced-access/broken.cu');
const FIXED_CU = join(ROOT, 'samples/uncoalesced-access/fixed.cu');

/** The lines whose gutter shows `selector`, found as a person sees them: beside that line's number. */
async function gutterLines(page: Page, selector: string): Promise<number[]> {
  const marks = page.locator(`.monaco-editor ${selector}`);
  const numbers = page.locator('.monaco-editor .line-numbers');
  const lines: number[] = [];
  for (let i = 0; i < (await marks.count()); i++) {
    const g = await marks.nth(i).boundingBox();
    if (!g) continue;
    for (let j = 0; j < (await numbers.count()); j++) {
      const b = await numbers.nth(j).boundingBox();
      if (b && Math.abs(b.y + b.height / 2 - (g.y + g.height / 2)) < 4) lines.push(Number(await numbers.nth(j).innerText()));
    }
  }
  return lines.sort((a, b) => a - b);
}

async function waitForGutter(page: Page, selector: string, expected: number[]): Promise<number[]> {
  let lines = await gutterLines(page, selector);
  for (const started = Date.now(); JSON.stringify(lines) !== JSON.stringify(expected) && Date.now() - started < 5000; lines = await gutterLines(page, selector))
    await page.waitForTimeout(50);
  return lines;
}

async function openFile(page: Page, path: string): Promise<void> {
  await page.getByRole('tab', { name: 'Editor' }).click();
  await openByPath(page, path);
}

const profileTab = (page: Page) => page.getByTestId('output-tab-Profile');

/**
 * A bundle holding the uncoalesced sample's plan and its recorded profile. No run of that sample was recorded without a
 * GPU, so the oob-off-by-one result stands in for the run the bundle needs; only the profile is looked at.
 */
async function bundleWithProfile(): Promise<string> {
  const path = join(work, 'with-profile.zip');
  const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/oob-off-by-one.json'), 'utf8')) as RunOutcome;
  const profile = JSON.parse(readFileSync(join(NCU, 'profile-broken.json'), 'utf8')) as Profile;
  const { plan } = await loadSample('uncoalesced-access', 'broken');
  await exportBundle(path, { plan, outcome, origin: 'sample uncoalesced-access (broken)', includeSources: true, redact: true, profile }, { compiler: null });
  return path;
}

for (const viewport of VIEWPORTS) {
  const size = sizeName(viewport);

  test(`28 (${size}): a recorded profile on its own lines: line 7's uncoalesced mark and hover, the tab's findings, figures and lines`, async () => {
    const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport });
    await openFile(page, BROKEN_CU);
    await activeTab(page).filter({ hasText: 'broken.cu' }).waitFor();
    // No GPU here: Profile is off beside Run, and says why and what works without one.
    const button = page.getByTestId('profile-button');
    assert.ok(await button.isDisabled());
    assert.match((await button.getAttribute('title')) ?? '', /Profile runs the launch under Nsight Compute on an NVIDIA GPU, and this machine has none/);
    assert.match(await page.getByTestId('profile-blockers').innerText(), /^Profile is off.*A profile recorded on a GPU machine .* opens here: use Open…$/s);
    await assertInViewport(page, page.getByTestId('profile-blockers'), 'why Profile is off');

    await openFile(page, join(NCU, 'profile-broken.json'));
    assert.equal(await profileTab(page).getAttribute('aria-selected'), 'true', 'the Profile tab comes forward');
    assert.ok(!(await page.getByTestId('tab').allInnerTexts()).some((t) => t.includes('profile-broken')), 'a profile is no editor tab');
    const view = page.getByTestId('profile-view');
    assert.match(await view.getByTestId('profile-headline').innerText(), /transpose in broken\.cu on NVIDIA H100 80GB HBM3/);
    // The problem first: line 7's stores, then what the figures mean.
    const first = view.getByTestId('profile-finding').first();
    assert.equal(await first.getAttribute('data-id'), 'uncoalesced');
    assert.match(await first.innerText(), /Line 7: each store request moves 32\.0 sectors where 4\.0 would do for 4-byte accesses/);
    const figure = (name: string) => view.getByTestId('profile-figures').locator(`tr[data-name="${name}"]`).innerText();
    assert.match(await figure('Sectors per store request'), /32\.0\s+ideal 4\.0 for 4-byte accesses/);
    assert.match(await figure('Achieved occupancy'), /72\.1%\s+theoretical 100\.0%/);
    assert.match(await figure('Effective bandwidth'), /430\.3 GB\/s/);
    assert.match(await figure('DRAM throughput'), /8\.3%/);
    const seven = view.locator('[data-testid="profile-line"][data-line="7"]');
    assert.match(await seven.innerText(), /32\.0 where 4\.0 would do \(uncoalesced\)/);
    assert.match(await view.getByTestId('profile-marks-note').innerText(), /Marked on broken\.cu/);

    // The editor: a shade on each profiled line, line 7's own mark, and its hover in words.
    assert.deepEqual(await waitForGutter(page, '.profile-uncoalesced', [7]), [7]);
    assert.deepEqual(await waitForGutter(page, '.profile-heat', [4, 5, 6, 7, 8]), [4, 5, 6, 7, 8]);
    await page.locator('.monaco-editor .profile-uncoalesced').hover();
    const hover = page.locator('.monaco-hover').filter({ hasText: 'sectors per request' }).first();
    await hover.waitFor();
    const said = (await hover.innerText()).replace(/\s+/g, ' ');
    assert.match(said, /Stores: 32\.0 sectors per request where 4\.0 would do for 4-byte accesses — uncoalesced, 8\.0× the ideal\./);
    assert.match(said, /Warps wait here: 94\.6% waiting for global or local memory \(long scoreboard\)/);

    // Each line of the table opens the editor there.
    await profileTab(page).click();
    await view.locator('[data-testid="profile-line"][data-line="8"]').getByTestId('profile-line-link').click();
    await page
      .getByTestId('cursor-position')
      .filter({ hasText: /^Ln 8,/ })
      .waitFor();
    assert.equal((await markedLine(page, 8)).line, 8);

    // One truth: another file of the same kernel shows none of it.
    await openFile(page, FIXED_CU);
    await activeTab(page).filter({ hasText: 'fixed.cu' }).waitFor();
    await page.waitForTimeout(300);
    assert.deepEqual(await gutterLines(page, '.profile-heat'), [], 'fixed.cu carries no mark of broken.cu’s profile');
    await page.getByTestId('tab').filter({ hasText: 'broken.cu' }).click();
    assert.deepEqual(await waitForGutter(page, '.profile-uncoalesced', [7]), [7], 'back on broken.cu, its marks are there');

    await profileTab(page).click();
    await assertInViewport(page, view.getByTestId('profile-headline'), 'the profile’s headline');
    assert.deepEqual([...(await seriousViolations(page)), ...(await unnamedOrDuplicateControls(page))], []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test(`28 (${size}): compare: the broken profile, then the fixed one: store sectors 32.0 → 4.0, each figure before and after`, async () => {
    const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport });
    await openFile(page, join(NCU, 'profile-broken.json'));
    await openFile(page, join(NCU, 'profile-fixed.json'));
    const view = page.getByTestId('profile-view');
    await view.getByTestId('profile-headline').filter({ hasText: 'fixed.cu' }).waitFor();
    const toggle = view.getByTestId('profile-compare-toggle');
    assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
    await toggle.click();
    assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
    const table = view.getByTestId('profile-compare');
    assert.match(
      await table.locator('caption').innerText(),
      /Before: transpose in broken\.cu, opened from profile-broken\.json\. After: transpose in fixed\.cu, opened from profile-fixed\.json\./,
    );
    const row = (name: string) => table.locator(`tr[data-name="${name}"]`);
    const stores = row('Sectors per store request');
    assert.equal(await stores.getByTestId('compare-before').innerText(), '32.0');
    assert.equal(await stores.getByTestId('compare-after').innerText(), '4.0');
    assert.match(await stores.innerText(), /−88% \(better\)/);
    assert.match(await row('Kernel time (ncu)').innerText(), /78\.0 µs\s+15\.0 µs\s+−81% \(better\)/);
    assert.match(await row('Sectors per load request').innerText(), /4\.0\s+4\.0\s+no change/);
    // The fixed profile's own figures are below it, with nothing to fix.
    assert.equal(await view.locator('[data-testid="profile-finding"][data-id="uncoalesced"]').count(), 0);
    await assertInViewport(page, table, 'the compare table');
    assert.deepEqual([...(await seriousViolations(page)), ...(await unnamedOrDuplicateControls(page))], []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test(`28 (${size}): without counters: exactly why (ERR_NVGPUCTRPERM), how to allow them, and what needs none`, async () => {
    const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport });
    await openFile(page, join(NCU, 'profile-no-counters.json'));
    const view = page.getByTestId('profile-view');
    const why = view.getByTestId('profile-no-counters');
    await why.waitFor();
    const text = await why.innerText();
    assert.match(text, /the driver does not let this user read them \(ERR_NVGPUCTRPERM\)/);
    assert.match(text, /options nvidia NVreg_RestrictProfilingToAdminUsers=0/);
    assert.match(text, /--cap-add=SYS_ADMIN/);
    const figures = await view.getByTestId('profile-figures').innerText();
    assert.match(figures, /Kernel time\s+79\.3 µs\s+median by CUDA events/);
    assert.match(figures, /Effective bandwidth\s+423\.\d GB\/s/);
    assert.equal(await view.getByTestId('profile-lines').count(), 0, 'no lines without counters');
    await assertInViewport(page, why.locator('h4'), 'why there are no counters');
    assert.deepEqual([...(await seriousViolations(page)), ...(await unnamedOrDuplicateControls(page))], []);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
}

test('28: a bundle’s profile opens read-only with it, on the bundle’s own file, and goes when the bundle closes', async () => {
  const bundle = await bundleWithProfile();
  const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport: VIEWPORTS[0] });
  await openFile(page, join(NCU, 'profile-no-counters.json'));
  await page.getByTestId('profile-no-counters').waitFor();
  await openFile(page, bundle);
  await page.getByRole('tab', { name: 'Editor' }).click();
  await profileTab(page).click();
  const view = page.getByTestId('profile-view');
  await view.getByTestId('profile-lines').waitFor();
  assert.match(await view.innerText(), /From the bundle .*with-profile\.zip \(read-only\)/);
  assert.match(await view.getByTestId('profile-marks-note').innerText(), /Marked on broken\.cu/);
  // The bundle's broken.cu is in front (a file of the same name open here is not it).
  await page.getByTestId('compile-status').filter({ hasText: 'From the bundle (read-only)' }).waitFor();
  assert.deepEqual(await waitForGutter(page, '.profile-uncoalesced', [7]), [7], 'on the bundle’s broken.cu');
  await page.getByTestId('bundle-close').click();
  // What was on screen before the bundle comes back: the profile opened from a file.
  await profileTab(page).click();
  await page.getByTestId('profile-no-counters').waitFor();
  assert.deepEqual(errors, []);
  await page.context().close();
});
