import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import type { Page } from 'playwright-core';

import { ROOT } from '../helpers/cli';
import { assertAccessible, diagnosePage, openSaved, relocatedDiagnoses } from '../helpers/diagnose-ui';
import { serveWithBrowser } from '../helpers/serve';
import { activeTab, markedLine, sizeName, VIEWPORTS } from '../helpers/ui';
import { assertInsideWindow } from '../helpers/viewports';

// "Diagnose a program…" in the app: the same diagnosis as `gpu-workbench diagnose --`, its steps and the program's
// output as they come, then the report. Recorded reports are the H100's (test/fixtures/diagnoses: real GPU runs of
// samples/programs/*, whose paths are this checkout's); a real diagnosis here runs programs that need no GPU.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-diagnose-'));
const SHOTS = join(ROOT, 'test-results');
mkdirSync(SHOTS, { recursive: true });

/** The page never scrolls sideways, nor does the report inside it. */
async function assertNoSidewaysScroll(page: Page, what: string) {
  const widths = await page.evaluate(() => {
    const results = document.querySelector('[data-testid="diagnose-results"]')!;
    return { page: [document.documentElement.scrollWidth, document.documentElement.clientWidth], results: [results.scrollWidth, results.clientWidth] };
  });
  assert.ok(widths.page[0]! <= widths.page[1]!, `${what}: the page is ${widths.page[0]} px wide in a ${widths.page[1]} px window`);
  assert.ok(widths.results[0]! <= widths.results[1]! + 1, `${what}: the report is ${widths.results[0]} px wide in ${widths.results[1]} px`);
}

describe('a host started without --allow-programs: recorded diagnoses', () => {
  const app = serveWithBrowser(join(work, 'off'), {}, ['--root', work]);
  const saved = relocatedDiagnoses(join(work, 'saved'));

  test('the view says programs are off, and why Diagnose is off; a saved diagnosis opens all the same', async () => {
    const { page, errors, close } = await diagnosePage(app.browser, app.serve.url, VIEWPORTS[0]);
    assert.equal(await page.getByRole('tab', { name: 'Diagnose' }).getAttribute('aria-selected'), 'true');
    const off = page.getByTestId('diagnose-programs-off');
    await off.waitFor();
    assert.match(
      await off.innerText(),
      /^Programs are off on this host\. .*started without --allow-programs\. Start it with gpu-workbench serve --allow-programs/,
    );
    assert.match(await off.innerText(), /gpu-workbench diagnose -- <command> in a terminal on the GPU machine/);
    await page.getByLabel('Command line').fill('python3 train.py');
    const diagnose = page.getByRole('button', { name: 'Diagnose', exact: true });
    assert.equal(await diagnose.isDisabled(), true);
    assert.match((await diagnose.getAttribute('title')) ?? '', /does not run programs/);
    // The reason is the button's description, for those who cannot see it beside the button.
    assert.equal(await diagnose.getAttribute('aria-describedby'), 'diagnose-programs-off');
    await assertAccessible(page, 'programs off');
    await openSaved(page, 'cuda-visible-devices.json', saved);
    assert.match(await page.getByTestId('diagnosis-verdict').innerText(), /The program found no GPU because CUDA_VISIBLE_DEVICES/);
    // The environment's check that failed, as the doctor shows its checks.
    assert.match(await page.getByTestId('diagnosis-environment').innerText(), /CUDA_VISIBLE_DEVICES hides every GPU/);
    assert.deepEqual(errors, []);
    await close();
  });

  for (const [viewport, theme] of [
    [VIEWPORTS[0], 'dark'],
    [VIEWPORTS[1], 'light'],
  ] as const) {
    test(`${sizeName(viewport)}, ${theme}: a device-side assert recorded on an H100 — the verdict, your line opens the editor at 16, the chain`, async () => {
      const { page, errors, close } = await diagnosePage(app.browser, app.serve.url, viewport, theme);
      await openSaved(page, 'pytorch-device-assert.json', saved);
      const verdict = page.getByRole('heading', { name: /A device-side assert failed in vectorized_gather_kernel/ });
      await verdict.waitFor();
      await assertInsideWindow(page, verdict, 'the verdict');
      assert.match(await page.getByTestId('diagnosis-origin-text').innerText(), /Opened from .*pytorch-device-assert\.json: read, never run\./);
      assert.match(await page.getByTestId('diagnosis-your-line').innerText(), /embed\.py:16\s*out = table\(tokens\)/);
      assert.match(await page.getByTestId('diagnosis-misleading-line').innerText(), /embed\.py:17\s*loss = out\.sum\(\)/);
      assert.match(await page.getByTestId('diagnosis-kernel').innerText(), /vectorized_gather_kernel\s*IndexKernelUtils\.cu:16/);
      assert.match(await page.getByTestId('diagnosis-cause').innerText(), /the first run blamed embed\.py:17/);
      // The evidence chain: each step, what ran (words and the environment's change), why, how long, what it found.
      const steps = page.getByTestId('diagnose-step');
      assert.equal(await steps.count(), 3);
      const blocking = steps.nth(2);
      assert.match(await blocking.innerText(), /3\. Re-run with CUDA_LAUNCH_BLOCKING=1\s*done\s*4\.6 s/);
      assert.deepEqual(await blocking.locator('.command-word').allInnerTexts(), ['CUDA_LAUNCH_BLOCKING=1', 'python3', 'embed.py']);
      assert.match(await blocking.innerText(), /WHY\s*A kernel failed \(CUDA_ERROR_ASSERT\)/i);
      assert.match(await blocking.getByRole('list', { name: 'What step 3 found' }).innerText(), /the traceback stops at embed\.py:16/);
      await blocking.getByText(/The program’s output \(\d+ lines\)/).click();
      assert.match(await blocking.locator('pre').innerText(), /embed\.py", line 16/);
      await assertNoSidewaysScroll(page, sizeName(viewport));
      await assertAccessible(page, `${sizeName(viewport)} ${theme}: device assert`);
      await page.getByTestId('diagnose-results').evaluate((e) => (e.scrollTop = 0));
      await page.screenshot({ path: join(SHOTS, `diagnose-device-assert-${viewport.width}-${theme}.png`) });

      // Your line opens the file at that line in the editor.
      await page.getByTestId('diagnosis-your-line-link').click();
      assert.equal((await markedLine(page, 16)).line, 16);
      assert.match((await markedLine(page, 16)).text, /out = table\(tokens\)/);
      assert.match(await activeTab(page).innerText(), /embed\.py/);
      assert.equal(await page.getByRole('tab', { name: 'Editor' }).getAttribute('aria-selected'), 'true');

      // Back: the report is still there; the kernel's file is not on this machine, so the link asks where it is.
      await page.getByRole('tab', { name: 'Diagnose' }).click();
      await page.getByTestId('diagnosis-kernel').getByRole('button', { name: 'IndexKernelUtils.cu:16' }).click();
      const ask = page.getByTestId('locate-dialog');
      await ask.waitFor();
      assert.match(await ask.innerText(), /Where is \/pytorch\/aten\/src\/ATen\/native\/cuda\/IndexKernelUtils\.cu\?/);
      await page.keyboard.press('Escape');
      await ask.waitFor({ state: 'detached' });
      assert.deepEqual(errors, []);
      await close();
    });

    test(`${sizeName(viewport)}, ${theme}: an out-of-memory recorded on an H100 — what was alive by line, and its snapshot in the Memory tab`, async () => {
      const { page, errors, close } = await diagnosePage(app.browser, app.serve.url, viewport, theme);
      await openSaved(page, 'pytorch-oom-too-large.json', saved);
      assert.match(await page.getByTestId('diagnosis-verdict').innerText(), /Out of GPU memory at join\.py:20 .*asking for 63\.3 GiB/);
      const oom = page.getByTestId('diagnosis-oom');
      assert.match(await oom.innerText(), /It asked for 63\.34 GiB; PyTorch held 63\.34 GiB in tensors/);
      const rows = page.getByTestId('diagnosis-alive-by-line').locator('tbody tr');
      assert.deepEqual(
        (await rows.allInnerTexts()).map((r) => r.replace(/\s+/g, ' ').trim()),
        ['join.py:12 in load_halves 31.67 GiB 1', 'join.py:13 in load_halves 31.67 GiB 1'],
      );
      await assertNoSidewaysScroll(page, sizeName(viewport));
      await assertAccessible(page, `${sizeName(viewport)} ${theme}: out of memory`);
      await oom.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, `diagnose-oom-${viewport.width}-${theme}.png`) });
      await oom.getByRole('button', { name: 'Open in the Memory tab' }).click();
      await page.getByRole('application', { name: /Memory timeline of pytorch-oom-too-large\.pickle/ }).waitFor({ timeout: 30_000 });
      assert.equal(await page.getByTestId('output-tab-Memory').getAttribute('aria-selected'), 'true');
      assert.match(await page.getByTestId('memory-summary').innerText(), /63\.34 GiB|31\.67 GiB/);
      assert.deepEqual(errors, []);
      await close();
    });
  }
});

describe('a host started with --allow-programs: real diagnoses of programs that need no GPU', () => {
  const app = serveWithBrowser(join(work, 'on'), {}, ['--allow-programs', '--root', work]);
  const folder = join(work, 'programs');
  mkdirSync(folder, { recursive: true });
  // Prints, waits (so its step is seen running, its output already shown), then fails with a plain traceback.
  writeFileSync(
    join(folder, 'fail.py'),
    "import time\n\nprint('starting the work', flush=True)\ntime.sleep(1.5)\n\n\ndef divide(a, b):\n    return a / b\n\n\ndivide(1, 0)\n",
  );

  test('steps as they start and end, the output as it comes, then the verdict; your line opens', async () => {
    const { page, errors, close } = await diagnosePage(app.browser, app.serve.url, VIEWPORTS[1]);
    assert.equal(await page.getByTestId('diagnose-programs-off').count(), 0);
    await page.getByLabel('Command line').fill('python3 fail.py');
    await page.getByLabel('Folder to run it in').fill(folder);
    await page.getByRole('textbox', { name: 'Environment', exact: true }).fill('# a comment\nDIAGNOSE_E2E=1');
    await page.getByRole('button', { name: 'Diagnose', exact: true }).click();
    const live = page.getByTestId('diagnose-live');
    const asIsLive = live.getByTestId('diagnose-step').filter({ hasText: 'Run it as it is' });
    await asIsLive.getByTestId('diagnose-step-status').filter({ hasText: 'running…' }).waitFor({ timeout: 20_000 });
    await asIsLive.locator('pre').filter({ hasText: 'starting the work' }).waitFor();
    assert.match(await live.getByTestId('diagnose-step').first().innerText(), /1\. The environment as the program will see it\s*done/);
    assert.match(await page.getByTestId('diagnose-status').innerText(), /^Step 2 started: Run it as it is\.$/);
    await assertAccessible(page, 'while it runs');
    await page.screenshot({ path: join(SHOTS, 'diagnose-running-1024.png') });
    const verdict = page.getByRole('heading', { name: /ZeroDivisionError: division by zero at fail\.py:8/ });
    await verdict.waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId('diagnose-live').count(), 0);
    assert.match(await page.getByTestId('diagnose-status').innerText(), /^Diagnosis finished: ZeroDivisionError/);
    assert.ok(await verdict.evaluate((e) => e === document.activeElement), 'the verdict has the focus once the run ends');
    const asIs = page.getByTestId('diagnose-step').nth(1);
    assert.deepEqual(await asIs.locator('.command-word').allInnerTexts(), ['python3', 'fail.py']);
    assert.match(await page.getByTestId('diagnosis-program').innerText(), /DIAGNOSE_E2E=1\s*python3\s*fail\.py/);
    assert.match(await asIs.innerText(), /ZeroDivisionError: division by zero — it exited with code 1 at fail\.py:8/);
    // The host holds what it ran: it can be exported as a bundle.
    assert.equal(await page.getByRole('button', { name: 'Export bundle…' }).isDisabled(), false);
    await assertNoSidewaysScroll(page, 'a real diagnosis');
    await page.getByTestId('diagnosis-your-line-link').click();
    assert.equal((await markedLine(page, 8)).line, 8);
    assert.match(await activeTab(page).innerText(), /fail\.py/);
    assert.deepEqual(errors, []);
    await close();
  });

  test('Cancel stops a program that sleeps, with what it started, and the host’s report says the diagnosis did not finish', async () => {
    const { page, errors, close } = await diagnosePage(app.browser, app.serve.url, VIEWPORTS[0]);
    const marker = `diagnose-e2e-${process.pid}`;
    await page.getByLabel('Command line').fill(`python3 -c "import time; print('waiting', flush=True); time.sleep(120)" ${marker}`);
    await page.getByLabel('Folder to run it in').fill(folder);
    await page.getByRole('button', { name: 'Diagnose', exact: true }).click();
    await page.getByTestId('diagnose-live').locator('pre').filter({ hasText: 'waiting' }).waitFor({ timeout: 20_000 });
    assert.ok(running(marker).length > 0, 'the program runs');
    await page.getByRole('button', { name: 'Cancel' }).click();
    const verdict = page.getByTestId('diagnosis-verdict');
    await verdict.waitFor({ timeout: 10_000 });
    assert.equal(await verdict.innerText(), '■ The diagnosis did not finish: the program was stopped: cancelled.');
    assert.match(await page.getByTestId('diagnosis-origin-text').innerText(), /^Cancelled: the program was stopped/);
    const asIs = page.getByTestId('diagnose-step').nth(1);
    assert.match(await asIs.innerText(), /stopped: cancelled\./);
    // What it printed before it was stopped, kept with the step (folded, as every finished step's output).
    assert.match((await asIs.locator('pre').textContent()) ?? '', /waiting/);
    assert.equal(await page.getByRole('button', { name: 'Cancel' }).count(), 0);
    // The host answered the cancel with its own report, which it holds: Export bundle… works, the environment is there.
    assert.equal(await page.getByRole('button', { name: 'Export bundle…' }).isDisabled(), false);
    assert.equal(await page.getByTestId('diagnosis-environment').count(), 1);
    assert.match(await page.getByTestId('diagnose-status').innerText(), /^Diagnosis cancelled: The diagnosis did not finish/);
    for (const started = Date.now(); running(marker).length && Date.now() - started < 5000;) await page.waitForTimeout(100);
    assert.deepEqual(running(marker), [], 'the program is stopped');
    await assertAccessible(page, 'cancelled');
    await page.screenshot({ path: join(SHOTS, 'diagnose-cancelled-1440.png') });
    assert.deepEqual(errors, []);
    await close();
  });
});

describe('a host with a compute-sanitizer that watches nothing (a stand-in): the offered passes, run at one click', () => {
  const app = serveWithBrowser(join(work, 'tool'), { GPU_WORKBENCH_COMPUTE_SANITIZER: '/bin/true' }, ['--allow-programs', '--root', work]);
  const folder = join(work, 'programs');

  test('a clean run offers the sanitizer passes and runs them for the same program at one click; passes that could not look are "!", never "✓"', async () => {
    const { page, errors, close } = await diagnosePage(app.browser, app.serve.url, VIEWPORTS[0]);
    await page.getByLabel('Command line').fill(`python3 -c "print('all fine')"`);
    await page.getByLabel('Folder to run it in').fill(folder);
    await page.getByRole('button', { name: 'Diagnose', exact: true }).click();
    const verdict = page.getByTestId('diagnosis-verdict');
    await verdict.filter({ hasText: 'the sanitizer passes were not run' }).waitFor({ timeout: 30_000 });
    assert.match(await verdict.innerText(), /^✓ The program exited cleanly/);
    assert.match(await page.getByTestId('diagnosis-offered').innerText(), /memcheck, racecheck and initcheck\. Run them now for this program, as it ran\./);
    // The form changes after the run: the button runs the report's program, not the form's.
    await page.getByLabel('Command line').fill('python3 something-else.py');
    await page.getByRole('button', { name: 'Run the sanitizer passes now' }).click();
    const again = verdict.filter({ hasText: 'not every check looked' });
    await again.waitFor({ timeout: 30_000 });
    // The stand-in tool watches nothing and writes no report: the passes could not look, and the verdict says so instead of ✓.
    assert.equal(
      await again.innerText(),
      '! The program exited cleanly, but not every check looked: memcheck, racecheck and initcheck could not run (it wrote no report and said nothing about why).',
    );
    assert.match(
      await page.getByTestId('diagnosis-what-to-do').innerText(),
      /gpu-workbench sanitize --tool memcheck --cwd \S+\/programs -- python3 -c 'print\('\\''all fine'\\''\)' \(and the same with --tool racecheck and --tool initcheck\)/,
    );
    assert.ok(await again.evaluate((e) => e.classList.contains('status-warn')));
    assert.deepEqual(await page.getByTestId('diagnose-step').nth(1).locator('.command-word').allInnerTexts(), ['python3', '-c', "print('all fine')"]);
    assert.equal(await page.getByLabel('Run the sanitizer passes after a clean exit').isChecked(), true, 'the form says what ran: the passes');
    assert.equal(await page.getByTestId('diagnosis-offered').count(), 0, 'nothing is offered after a thorough run');
    await assertAccessible(page, 'passes that could not look');
    await page.screenshot({ path: join(SHOTS, 'diagnose-passes-incomplete-1440.png') });
    await page.setViewportSize({ width: 1024, height: 700 });
    await page.emulateMedia({ colorScheme: 'light' });
    await assertNoSidewaysScroll(page, 'passes that could not look, 1024×700');
    await page.screenshot({ path: join(SHOTS, 'diagnose-passes-incomplete-1024-light.png') });
    assert.deepEqual(errors, []);
    await close();
  });

  test('passes the host cannot start (the program’s folder is gone): said above the report, which stays on screen', async () => {
    const { page, errors, close } = await diagnosePage(app.browser, app.serve.url, VIEWPORTS[0]);
    const gone = join(folder, `gone-${process.pid}`);
    mkdirSync(gone, { recursive: true });
    await page.getByLabel('Command line').fill(`python3 -c "print('all fine')"`);
    await page.getByLabel('Folder to run it in').fill(gone);
    await page.getByRole('button', { name: 'Diagnose', exact: true }).click();
    const verdict = page.getByTestId('diagnosis-verdict');
    await verdict.filter({ hasText: 'the sanitizer passes were not run' }).waitFor({ timeout: 30_000 });
    const before = await verdict.innerText();
    rmSync(gone, { recursive: true });
    await page.getByRole('button', { name: 'Run the sanitizer passes now' }).click();
    const refused = page.getByTestId('diagnose-error');
    await refused.waitFor({ timeout: 10_000 });
    assert.match(await refused.innerText(), new RegExp(`The working folder ${gone} does not exist`));
    assert.equal(await verdict.innerText(), before, 'the report it began from is still the one shown');
    assert.equal(await page.getByRole('button', { name: 'Run the sanitizer passes now' }).isEnabled(), true, 'and can be tried again');
    assert.deepEqual(errors, []);
    await close();
  });
});

/** The processes whose command line holds `marker` (from /proc). */
function running(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
