import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import type { Page } from 'playwright-core';

import { seriousViolations } from '../helpers/a11y';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { openApp, VIEWPORTS } from '../helpers/ui';

// Issue 13: "Sanitize a program" — any command under compute-sanitizer, from the Sanitizer tab. A host only runs
// programs the browser names when it was started to (serve --allow-programs). Where it is, the dialog's command
// line reaches a stand-in for the tool's process that replays what compute-sanitizer printed and saved on an H100
// for the off-by-one case (the real tool runs in the GPU suite); what is tested is the view, not the tool.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-sanitize-program-'));
const FIXTURES = join(ROOT, 'test/fixtures/sanitizer/h100');
const tool = join(work, 'compute-sanitizer');
const argsFile = join(work, 'args.txt');
writeFileSync(
  tool,
  `#!/bin/bash
if [ "$1" = --version ]; then echo 'Version 2025.3.1.0 (build 36400806) (public-release)'; exit 0; fi
printf '%s\\n' "$@" > '${argsFile}'; pwd >> '${argsFile}'; echo "MODE=$MODE" >> '${argsFile}'
save=''; prev=''
for a in "$@"; do [ "$prev" = --save ] && save=$a; prev=$a; done
cp '${join(FIXTURES, 'memcheck-oob.xml')}' "\${save//%p/$$}"
grep -v '^exit [0-9]* in [0-9]* ms$' '${join(FIXTURES, 'memcheck-oob.xml.txt')}'
exit 86
`,
);
chmodSync(tool, 0o755);

async function openDialog(page: Page) {
  await page.getByTestId('output-tab-Sanitizer').click();
  await page.getByTestId('sanitize-program').click();
  return page.getByTestId('sanitize-program-dialog');
}

describe('a host started without --allow-programs', () => {
  const app = serveWithBrowser(join(work, 'off'), { GPU_WORKBENCH_COMPUTE_SANITIZER: tool }, ['--root', work]);
  test('says it runs no programs named from the browser, and how to change that; Run is off', async () => {
    // The page's CSP refuses inline scripts, axe's included: this context alone bypasses it.
    const context = await app.browser.newContext({ viewport: VIEWPORTS[0]!, bypassCSP: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(app.serve.url);
    const dialog = await openDialog(page);
    assert.match(await dialog.getByTestId('programs-off').innerText(), /started without --allow-programs\. Start it with gpu-workbench serve --allow-programs/);
    await dialog.getByLabel('Command line').fill('python3 leak.py');
    assert.equal(await dialog.getByRole('button', { name: 'Run under memcheck' }).isDisabled(), true);
    assert.deepEqual(await seriousViolations(page), []);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe('the setting that re-runs failures under compute-sanitizer', () => {
  const app = serveWithBrowser(join(work, 'setting'), {}, ['--root', work]);
  test('is off until asked for, and kept for the workspace on the host across a reload', async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, VIEWPORTS[0]!);
    await page.getByTestId('output-tab-Run').click();
    const box = page.getByLabel('Re-run failures under compute-sanitizer');
    assert.equal(await box.isChecked(), false);
    await box.check();
    await page.waitForTimeout(300);
    await page.reload();
    await page.getByTestId('output-tab-Run').click();
    await page.getByLabel('Re-run failures under compute-sanitizer').waitFor();
    for (const started = Date.now(); !(await page.getByLabel('Re-run failures under compute-sanitizer').isChecked()) && Date.now() - started < 5000;)
      await page.waitForTimeout(100);
    assert.equal(await page.getByLabel('Re-run failures under compute-sanitizer').isChecked(), true);
    const { readFileSync } = await import('node:fs');
    assert.deepEqual(JSON.parse(readFileSync(join(work, 'setting', 'state', 'workspace.json'), 'utf8')).autoSanitize, true);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('a host started with --allow-programs', () => {
  const app = serveWithBrowser(join(work, 'on'), { GPU_WORKBENCH_COMPUTE_SANITIZER: tool }, ['--allow-programs', '--root', work]);
  test('the command line as typed (split as a shell would, nothing expanded), the folder and the environment reach the tool; its findings show', async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, VIEWPORTS[0]!);
    let dialog = await openDialog(page);
    await dialog.getByLabel('Command line').fill(`python3 'my script.py' "$HOME"`);
    await dialog.getByLabel('Working folder').fill(work);
    await dialog.getByLabel('Environment').fill('# pools hide overruns\nMODE=debug');
    await dialog.getByRole('button', { name: 'Run under memcheck' }).click();
    const view = page.getByTestId('sanitizer-view');
    // The API error the fault left behind is folded under it: 4 findings, 3 places.
    await view.getByText(/memcheck found 4 findings in 3 places/).waitFor({ timeout: 30_000 });
    assert.match(await view.innerText(), /offByOne at sanitizer_cases\.cu:12/);
    assert.match(await view.innerText(), /python3 my script\.py \$HOME, in /);
    const { readFileSync } = await import('node:fs');
    const seen = readFileSync(argsFile, 'utf8').trim().split('\n');
    assert.deepEqual(seen.slice(-5), ['python3', 'my script.py', '$HOME', work, 'MODE=debug']);

    // A line a shell could not split is refused in words, before anything runs.
    dialog = await openDialog(page);
    await dialog.getByLabel('Command line').fill(`python3 'unclosed.py`);
    await dialog.getByRole('button', { name: 'Run under memcheck' }).click();
    assert.match(await dialog.getByTestId('sanitize-program-error').innerText(), /' at position 9 is never closed/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
