import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Page } from 'playwright-core';

import { findComputeSanitizer } from '../../main/tools/compute-sanitizer';
import { discoverLibraries } from '../../main/services/discovery-service';
import { seriousViolations, unnamedOrDuplicateControls } from '../helpers/a11y';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { activeTab, assertInViewport, markedLine, openApp, openByPath, openResult, openSample, sanitizerGlyphLines, sizeName, VIEWPORTS } from '../helpers/ui';

// Issue 13 ("Show"): compute-sanitizer's findings in the output panel, each row leading to its line, marked in
// the editor; a saved report opened from a file; the diagnosis's re-run, which without a GPU or without the
// tool says why. The reports are compute-sanitizer 2025.3.1's own, recorded on an H100 (test/fixtures/sanitizer).
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-sanitizer-'));
const REPORTS = join(ROOT, 'test/fixtures/sanitizer/h100');
const CASES = join(ROOT, 'test/gpu/programs/sanitizer_cases.cu');
const RUNS = join(ROOT, 'test/fixtures/runs');
const app = serveWithBrowser(work);

/** Opens a saved report through the Run tab's "Open sanitizer report…", as a person does. */
async function openReport(page: Page, xml: string, text: string | null): Promise<void> {
  await page.getByTestId('output-tab-Run').click();
  await page.getByRole('button', { name: 'Open sanitizer report…' }).click();
  const dialog = page.getByTestId('sanitizer-open-dialog');
  await dialog.getByLabel('Sanitizer report (XML)').fill(xml);
  if (text) await dialog.getByLabel('Sanitizer text output (optional)').fill(text);
  await dialog.getByRole('button', { name: 'Open report' }).click();
}

/** Shows a line of the editor (so Monaco draws it), by Monaco's own Go to Line. */
async function scrollEditorTo(page: Page, line: number): Promise<void> {
  await page.locator('.monaco-editor textarea').focus();
  await page.keyboard.press('Control+G');
  await page.keyboard.type(String(line));
  await page.keyboard.press('Enter');
}

for (const viewport of VIEWPORTS) {
  test(`13 (${sizeName(viewport)}): a saved memcheck report: the verdict, one row per place, its line marked and reached from its row`, async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await openByPath(page, CASES);
    await activeTab(page).filter({ hasText: 'sanitizer_cases.cu' }).waitFor();

    await openReport(page, join(REPORTS, 'memcheck-oob.xml'), join(REPORTS, 'memcheck-oob.xml.txt'));
    const view = page.getByTestId('sanitizer-view');
    const headline = view.getByTestId('sanitizer-headline');
    await headline.waitFor();
    assert.equal(await page.getByTestId('output-tab-Sanitizer').getAttribute('aria-selected'), 'true', 'the Sanitizer tab comes forward');
    // The API error the fault left behind is folded under it (as a run arranges it): 4 findings, 3 places.
    assert.match(await headline.innerText(), /memcheck found 4 findings in 3 places, 8,000 bytes leaked\./);
    assert.match(await view.innerText(), /Opened from .*memcheck-oob\.xml, with .*memcheck-oob\.xml\.txt/);

    const rows = view.getByTestId('sanitizer-finding');
    assert.equal(await rows.count(), 3);
    const oob = rows.filter({ hasText: 'offByOne' });
    assert.equal(await oob.getAttribute('data-line'), '12');
    assert.match(await oob.getByTestId('finding-open').innerText(), /error\s+sanitizer_cases\.cu:12\s+×1/);
    assert.equal(
      await oob.getByTestId('finding-sentence').innerText(),
      'Invalid write of 4 bytes out of bounds in offByOne at sanitizer_cases.cu:12 — 1 thread (232,0,0) in block (3,0,0); 1 byte after the nearest allocation (4,000 bytes).',
    );
    assert.equal(await oob.getByTestId('finding-threads').innerText(), 'thread (232,0,0) · block (3,0,0)');
    assert.equal(await oob.getByTestId('finding-frame').innerText(), 'Launched from main (0x8d80) in cases');
    assert.equal(await oob.getByTestId('finding-lineinfo').count(), 0, 'a finding with its line needs no -lineinfo advice');

    // The two leaks, each with its bytes and the call that allocated it.
    const leaks = rows.filter({ hasText: 'Leaked' });
    assert.equal(await leaks.count(), 2);
    for (const [i, pc] of ['0x8ce2', '0x8cf3'].entries())
      assert.equal(
        await leaks.nth(i).getByTestId('finding-sentence').innerText(),
        `Leaked 4,000 bytes in 1 allocation, allocated at main (${pc}) in cases: nothing freed it before the program ended.`,
      );
    assert.equal(await leaks.getByTestId('finding-open').count(), 0, 'a leak names no source line: its row leads nowhere');
    // The API error the fault left behind: a line under the fault's row, its own sentence when opened.
    const folded = oob.getByTestId('finding-folded');
    assert.equal(
      await folded.locator('summary').innerText(),
      '… and 1 API error that followed it, because the context was dead: cudaDeviceSynchronize (cudaErrorLaunchFailure).',
    );
    assert.equal(await folded.locator('li').isVisible(), false);
    await folded.locator('summary').click();
    assert.match(await folded.locator('li').innerText(), /^cudaDeviceSynchronize returned cudaErrorLaunchFailure \(719\)/);

    // The program's own output, folded until asked for.
    const output = view.getByTestId('sanitizer-program-output');
    assert.equal(await output.locator('pre').isVisible(), false);
    await output.locator('summary').click();
    assert.match(await output.locator('pre').innerText(), /cudaDeviceSynchronize: cudaErrorLaunchFailure \(unspecified launch failure\)/);

    // The editor marks line 12: a glyph in the gutter whose hover says the sentence, and a marker of the
    // sanitizer's own (the compiler's marks are untouched).
    await scrollEditorTo(page, 12);
    for (let started = Date.now(); !(await sanitizerGlyphLines(page)).includes(12) && Date.now() - started < 5000;) await page.waitForTimeout(50);
    assert.deepEqual(await sanitizerGlyphLines(page), [12]);
    const glyph = page.locator('.monaco-editor .sanitizer-glyph-error').first();
    await glyph.hover();
    const hover = page.locator('.monaco-hover').filter({ hasText: '1 byte after the nearest allocation' }).first();
    await hover.waitFor();
    assert.match(await hover.innerText(), /memcheck: Invalid write of 4 bytes out of bounds in offByOne at sanitizer_cases\.cu:12/);

    // Clicking the row moves the cursor there: the status bar says so, and the line is marked.
    await page.getByTestId('output-tab-Sanitizer').click();
    await oob.getByTestId('finding-open').click();
    await page
      .getByTestId('cursor-position')
      .filter({ hasText: /^Ln 12, Col 3$/ })
      .waitFor();
    const shown = await markedLine(page);
    assert.equal(shown.line, 12);
    assert.ok(shown.focused, 'the editor has the focus');
    assert.match(shown.text, /if \(i <= n\) out\[i\] = 1\.0f;/);
    assert.match(await activeTab(page).innerText(), /sanitizer_cases\.cu/);

    // Enter on a row does the same, from the keyboard.
    await scrollEditorTo(page, 1);
    await page.getByTestId('output-tab-Sanitizer').click();
    await oob.getByTestId('finding-open').focus();
    await page.keyboard.press('Enter');
    await page
      .getByTestId('cursor-position')
      .filter({ hasText: /^Ln 12,/ })
      .waitFor();
    const again = await markedLine(page);
    assert.deepEqual([again.line, again.focused], [12, true]);

    // Closing the report takes its marks off the editor.
    await page.getByTestId('output-tab-Sanitizer').click();
    await view.getByRole('button', { name: 'Close report' }).click();
    await page.locator('.monaco-editor .sanitizer-glyph').first().waitFor({ state: 'detached' });
    assert.match(await view.innerText(), /No compute-sanitizer report/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`13 (${sizeName(viewport)}): synccheck's 32 findings are one row at line 30; a new report replaces the old one's marks`, async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await openByPath(page, CASES);
    await openReport(page, join(REPORTS, 'memcheck-oob.xml'), join(REPORTS, 'memcheck-oob.xml.txt'));
    await page.getByTestId('sanitizer-headline').filter({ hasText: 'memcheck found' }).waitFor();

    await openReport(page, join(REPORTS, 'synccheck-sync.xml'), join(REPORTS, 'synccheck-sync.xml.txt'));
    const headline = page.getByTestId('sanitizer-headline').filter({ hasText: 'synccheck found 32 findings in 1 place.' });
    await headline.waitFor();
    const rows = page.getByTestId('sanitizer-finding');
    assert.equal(await rows.count(), 1);
    const row = rows.first();
    assert.equal(await row.getAttribute('data-line'), '30');
    assert.match(await row.getByTestId('finding-open').innerText(), /sanitizer_cases\.cu:30\s+×32/);
    assert.match(
      await row.getByTestId('finding-sentence').innerText(),
      /^Barrier error: Divergent thread\(s\) in warp in divergentBarrier at sanitizer_cases\.cu:30 — 32 threads \(0–62,0,0\) in block \(0,0,0\)\./,
    );
    assert.equal(await row.getByTestId('finding-threads').innerText(), 'threads (0–62,0,0) · block (0,0,0)');
    await assertInViewport(page, row.getByTestId('finding-open'), 'the row');

    await row.getByTestId('finding-open').click();
    await page
      .getByTestId('cursor-position')
      .filter({ hasText: /^Ln 30,/ })
      .waitFor();
    assert.equal((await markedLine(page, 30)).line, 30);
    // Only this report's line is marked: line 12 (memcheck's) is not any more.
    for (let started = Date.now(); (await sanitizerGlyphLines(page)).join() !== '30' && Date.now() - started < 5000;) await page.waitForTimeout(50);
    assert.deepEqual(await sanitizerGlyphLines(page), [30]);
    await scrollEditorTo(page, 12);
    assert.ok(!(await sanitizerGlyphLines(page)).includes(12), 'line 12 keeps no mark of the report that was replaced');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`13 (${sizeName(viewport)}): a hostile or missing report gets a message in words; a finding without a line gets the -lineinfo advice`, async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();

    // A path that is not there: the dialog stays and says so.
    await openReport(page, join(work, 'no-such-report.xml'), null);
    const dialog = page.getByTestId('sanitizer-open-dialog');
    const said = dialog.getByTestId('sanitizer-open-error');
    await said.waitFor();
    assert.equal(await said.innerText(), `Cannot open ${join(work, 'no-such-report.xml')}: there is no such file.`);
    await assertInViewport(page, said, 'the message');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    // A DOCTYPE with entities (the "billion laughs"): refused unread, and no verdict is given.
    const hostile = join(work, 'laughs.xml');
    writeFileSync(
      hostile,
      '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>\n<ComputeSanitizerOutput>&lol2;</ComputeSanitizerOutput>\n',
    );
    await openReport(page, hostile, null);
    const view = page.getByTestId('sanitizer-view');
    await view.getByTestId('sanitizer-headline').waitFor();
    assert.match(
      await view.getByTestId('sanitizer-headline').innerText(),
      /^! laughs\.xml: memcheck reported nothing, but its report could not be read whole: no verdict\./,
    );
    assert.doesNotMatch(await view.getByTestId('sanitizer-headline').innerText(), /✓|clean/);
    assert.match(await view.getByTestId('sanitizer-details').innerText(), /The XML declares a DOCTYPE\. compute-sanitizer never writes one/);
    assert.equal(await view.getByTestId('sanitizer-finding').count(), 0);

    // Built without -lineinfo: the row names the kernel and offset, and says how to get the line.
    await openReport(page, join(REPORTS, 'memcheck-oob-nolineinfo.xml'), join(REPORTS, 'memcheck-oob-nolineinfo.xml.txt'));
    const row = view.getByTestId('sanitizer-finding').filter({ hasText: 'offByOne' });
    await row.waitFor();
    assert.match(await row.innerText(), /offByOne \(pc 0xc0\)/);
    assert.match(await row.getByTestId('finding-lineinfo').innerText(), /^Line info is missing: build the kernel with -lineinfo to see the source line/);
    assert.doesNotMatch(await row.getByTestId('finding-sentence').innerText(), /Line info is missing/, 'the advice is said once');
    assert.equal(await row.getByTestId('finding-open').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`13 (${sizeName(viewport)}): re-run under compute-sanitizer: a recorded result says it needs its plan; with the sample open, it runs or says what this machine lacks`, async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    const hasSanitizer = (await findComputeSanitizer()).found;
    const hasDriver = discoverLibraries().cuda.loaded;
    // Alone: the host restores the workspace, and the sample's tab that this test opened at the other size holds the plan.
    const sampleTab = '[data-testid="tab"][title*="samples/oob-off-by-one/"]';
    for (let left = await page.locator(sampleTab).count(); left > 0; left--) {
      await page.locator(sampleTab).first().focus();
      await page.keyboard.press('Delete');
      await page.waitForFunction(([selector, n]) => document.querySelectorAll(selector as string).length < (n as number), [sampleTab, left] as const);
    }

    // The recorded result alone: its plan is not at hand (or the machine cannot run it), and the button says so.
    await openResult(page, join(RUNS, 'oob-off-by-one.json'));
    await page.getByTestId('diagnosis-headline').filter({ hasText: 'scale wrote past the end of buffer x' }).waitFor();
    const rerun = page.getByTestId('sanitizer-rerun');
    assert.equal(await rerun.innerText(), 'Re-run under compute-sanitizer (memcheck)');
    assert.equal(await rerun.isDisabled(), true);
    if (hasSanitizer && hasDriver) assert.match(await page.getByTestId('sanitizer-rerun-note').innerText(), /keeps no copy of its plan.*load its plan first/);
    assert.equal(await page.getByTestId('sanitizer-command').innerText(), 'gpu-workbench sanitize --tool memcheck --plan path/to/plan.json');

    // Its sample opened: that plan runs the recorded steps, so the command names it.
    await openSample(page, 'oob-off-by-one');
    await page.getByTestId('output-tab-Run').click();
    await page
      .getByTestId('sanitizer-command')
      .filter({ hasText: `gpu-workbench sanitize --tool memcheck --plan ${join(ROOT, 'samples/oob-off-by-one/plan.json')}` })
      .waitFor();
    const note = page.getByTestId('sanitizer-rerun-note');
    // Without the tool, or without a GPU, the button is off before it is pressed, and says which (no-gpu.test.ts, 26.7).
    if (!hasSanitizer || !hasDriver) {
      await note.filter({ hasText: hasSanitizer ? /^compute-sanitizer runs the plan on a GPU/ : /^compute-sanitizer was not found on this machine/ }).waitFor();
      assert.equal(await rerun.isDisabled(), true);
      await assertInViewport(page, note, 'why the re-run is off');
      assert.deepEqual(errors, []);
      return page.close();
    }
    await note.filter({ hasText: /^Runs .*samples\/oob-off-by-one\/plan\.json under memcheck/ }).waitFor();
    assert.equal(await rerun.isDisabled(), false);
    await rerun.click();
    const view = page.getByTestId('sanitizer-view');
    await view.getByTestId('sanitizer-headline').or(view.getByTestId('sanitizer-error')).first().waitFor({ timeout: 120_000 });
    assert.equal(await page.getByTestId('output-tab-Sanitizer').getAttribute('aria-selected'), 'true');
    await page.getByTestId('output-tab-Run').click();
    await page.waitForFunction(() => !(document.querySelector('[data-testid="sanitizer-rerun"]') as HTMLButtonElement | null)?.disabled, undefined, {
      timeout: 120_000,
    });
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('13: a CuPy program’s saved report whose only leaks are its pool’s: clean, the held memory in a short section of its own, said once', async () => {
  const { page, errors } = await openApp(app.browser, app.serve.url, VIEWPORTS[0]!);
  await page.getByTestId('tab').first().waitFor();
  // Recorded on an H200 (test/fixtures/programs/h200): CuPy's memory pool still held 4 blocks when reduce.py ended.
  await openReport(page, join(ROOT, 'test/fixtures/programs/h200/cupy-race.memcheck.xml'), null);
  const view = page.getByTestId('sanitizer-view');
  await view.getByTestId('sanitizer-headline').filter({ hasText: 'found nothing of yours' }).waitFor();
  assert.equal(await view.getByTestId('sanitizer-finding').count(), 0);
  const held = view.getByTestId('sanitizer-held');
  assert.equal(await held.locator('h4').innerText(), "Not counted: 264,192 bytes (258 KiB) held at exit by CuPy's memory pool");
  assert.match(await held.innerText(), /^Held by CuPy's memory pool at exit — not a leak of yours: 264,192 bytes in 4 blocks/m);
  assert.doesNotMatch(await view.getByTestId('sanitizer-details').innerText(), /Held by/, 'the section says it; the details do not again');
  assert.deepEqual(errors, []);
  await page.close();
});

for (const theme of ['dark', 'light'] as const)
  test(`13 (${theme}): the findings view and the open-report dialog have no serious or critical axe violation, every control named once`, async () => {
    const context = await app.browser.newContext({ viewport: VIEWPORTS[1], colorScheme: theme, bypassCSP: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(app.serve.url);
    await page.getByTestId('tab').first().waitFor();
    await openByPath(page, CASES);
    const found: string[] = [];
    const check = async (what: string) => {
      for (const v of await seriousViolations(page)) found.push(`${what}: ${v}`);
      for (const c of await unnamedOrDuplicateControls(page)) found.push(`${what}: ${c}`);
    };
    await page.getByTestId('output-tab-Run').click();
    await page.getByRole('button', { name: 'Open sanitizer report…' }).click();
    await page.getByTestId('sanitizer-open-dialog').getByLabel('Sanitizer report (XML)').fill('memcheck-oob.xml');
    await check('open-report dialog');
    await page.keyboard.press('Escape');
    for (const name of ['memcheck-oob', 'racecheck-race-report-all', 'memcheck-oob-nolineinfo']) {
      await openReport(page, join(REPORTS, `${name}.xml`), join(REPORTS, `${name}.xml.txt`));
      await page
        .getByTestId('sanitizer-headline')
        .filter({ hasText: `${name}.xml:` })
        .waitFor();
      await page.getByTestId('maximize-output').click();
      for (const d of await page.getByTestId('sanitizer-view').locator('details').all()) await d.locator('summary').click();
      await check(`findings view (${name})`);
      await page.getByTestId('maximize-output').click();
    }
    assert.deepEqual(found, []);
    assert.deepEqual(errors, []);
    await context.close();
  });

// Issue 26, item 8: the rows in the order a person fixes them (the kernel's finding above the API errors that say
// "fix the kernel finding first", folded under it; leaks after), and a race row whose counts agree with its sentence.
test('26.8: the kernel finding leads, the errors it left fold under it, leaks follow; a race row counts hazards as its sentence does', async () => {
  for (const viewport of VIEWPORTS) {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    const view = page.getByTestId('sanitizer-view');
    const rows = view.getByTestId('sanitizer-finding');

    await openReport(page, join(REPORTS, 'memcheck-null.xml'), join(REPORTS, 'memcheck-null.xml.txt'));
    await view.getByTestId('sanitizer-headline').filter({ hasText: 'memcheck-null.xml:' }).waitFor();
    assert.deepEqual(await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-kind'))), ['memory-access', 'leak', 'leak']);
    const first = rows.first();
    assert.match(
      await first.getByTestId('finding-sentence').innerText(),
      /^Invalid write of 4 bytes .* in writeThrough at sanitizer_cases\.cu:25 — 32 threads/,
    );
    assert.equal(await first.getByTestId('finding-count').innerText(), '×32');
    assert.equal(await first.getByTestId('finding-count').getAttribute('title'), '32 threads: one record each');
    assert.match(
      await first.getByTestId('finding-folded').locator('summary').innerText(),
      /^… and 1 API error that followed it, because the context was dead: cudaDeviceSynchronize/,
    );
    assert.equal(await view.getByText(/fix the kernel finding first/).isVisible(), false, 'the folded error’s own sentence waits under its fault until opened');
    await assertInViewport(page, first.getByTestId('finding-count'), `${sizeName(viewport)}: the first row's count`);

    await openReport(page, join(REPORTS, 'racecheck-race.xml'), join(REPORTS, 'racecheck-race.xml.txt'));
    await view.getByTestId('sanitizer-headline').filter({ hasText: 'racecheck-race.xml:' }).waitFor();
    const race = rows.first();
    const count = race.getByTestId('finding-count');
    assert.equal(await count.innerText(), '512 hazards in 1 record');
    assert.match(
      (await count.getAttribute('title')) ?? '',
      /^512 hazards in 1 record: a hazard is one pair of accesses, by two threads, that racecheck found unordered/,
    );
    assert.match(await race.getByTestId('finding-sentence').innerText(), / — 512 hazards\b/);
    assert.doesNotMatch(await race.innerText(), /×1\b/, 'no record count beside the hazards as if it were theirs');
    await assertInViewport(page, count, `${sizeName(viewport)}: the race row's count`);
    assert.deepEqual(errors, []);
    await page.close();
  }
});
