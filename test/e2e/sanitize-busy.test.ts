import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import type { Page } from 'playwright-core';

import { locateComputeSanitizer } from '../../main/tools/compute-sanitizer';
import { seriousViolations } from '../helpers/a11y';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { connectApi } from '../helpers/serve-api';
import { openApp, openResult, openSample, VIEWPORTS } from '../helpers/ui';
import { sanitizerStandIn } from '../helpers/sanitizer-stand-in';

// A second run under compute-sanitizer while one runs is never answered with silence. One host, two windows: the
// first runs a program under the tool; the second asks for another and is told, in its Sanitizer tab, which run
// holds the tool, since when, and what to do; the first goes on, shows it is busy on its buttons, and can be
// cancelled; then the second runs. The tool's process is a stand-in (as in sanitize-program.test.ts): "slow.py"
// runs until stopped, anything else replays what compute-sanitizer printed and saved on an H100 for the
// off-by-one. What is tested is the view, not the tool.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-sanitize-busy-'));
const { tool, started } = sanitizerStandIn(work, 'memcheck-oob', 86);

async function sanitizeProgram(page: Page, line: string): Promise<void> {
  await page.getByTestId('output-tab-Sanitizer').click();
  await page.getByTestId('sanitize-program').click();
  const dialog = page.getByTestId('sanitize-program-dialog');
  await dialog.getByLabel('Command line').fill(line);
  await dialog.getByLabel('Working folder').fill(work);
  await dialog.getByRole('button', { name: 'Run under memcheck' }).click();
  await dialog.waitFor({ state: 'detached' });
}

describe('two windows of one host, one compute-sanitizer', () => {
  const app = serveWithBrowser(join(work, 'host'), { GPU_WORKBENCH_COMPUTE_SANITIZER: tool }, ['--allow-programs', '--root', work]);

  test('the second window is told which run holds the tool, since when, and what to do; the first shows it is busy, and its Cancel frees the tool', async () => {
    const first = await openApp(app.browser, app.serve.url, VIEWPORTS[0]!);
    const a = first.page;
    // The first window has a recorded failure with its plan open, so its re-run button would run where the machine has a
    // GPU (it is the busy state that is tested; without a GPU the button is off and says so, and comes back to that).
    await a.getByTestId('tab').first().waitFor();
    await openResult(a, join(ROOT, 'test/fixtures/runs/oob-off-by-one.json'));
    await openSample(a, 'oob-off-by-one');
    await a.getByTestId('output-tab-Run').click();
    const rerunNote = a.getByTestId('sanitizer-rerun-note');
    await rerunNote.filter({ hasText: /^Runs .*plan\.json under memcheck|^compute-sanitizer runs the plan on a GPU/ }).waitFor();
    const idle = { note: await rerunNote.innerText(), disabled: await a.getByTestId('sanitizer-rerun').isDisabled() };

    await sanitizeProgram(a, 'python3 slow.py');
    const progress = a.getByTestId('sanitizer-progress');
    await progress.filter({ hasText: /^Running python3 slow\.py under memcheck/ }).waitFor();
    assert.equal(await a.getByTestId('sanitize-program').isDisabled(), true);
    assert.match((await a.getByTestId('sanitize-program').getAttribute('title')) ?? '', /memcheck is running python3 slow\.py: wait for it, or cancel it/);
    // The Run tab's re-run button says the tool is taken, and by what.
    await a.getByTestId('output-tab-Run').click();
    assert.equal(await a.getByTestId('sanitizer-rerun').isDisabled(), true);
    assert.equal(await a.getByTestId('sanitizer-rerun').innerText(), 'Running memcheck…');
    assert.match(
      await a.getByTestId('sanitizer-rerun-note').innerText(),
      /^compute-sanitizer is running memcheck on python3 slow\.py: one run under the tool at a time\. Wait for it, or cancel it in the Sanitizer tab, then re-run this one\.$/,
    );

    // The second window asks for another run: refused in words, in its own Sanitizer tab; nothing of it runs.
    // A window of its own (the page's CSP refuses inline scripts, axe's included: this context alone bypasses it).
    const context = await app.browser.newContext({ viewport: VIEWPORTS[1], bypassCSP: true });
    const b = await context.newPage();
    const second = { errors: [] as string[] };
    b.on('pageerror', (e) => second.errors.push(e.message));
    await b.goto(app.serve.url);
    await sanitizeProgram(b, 'python3 quick.py');
    const refused = b.getByTestId('sanitizer-refused');
    await refused.waitFor({ timeout: 10_000 });
    assert.equal(await refused.getAttribute('role'), 'alert');
    assert.match(
      await refused.innerText(),
      /^Not started: compute-sanitizer was already running memcheck on python3 slow\.py \(since \d\d:\d\d:\d\d, for \d+ s\)\. The workbench runs one program under the tool at a time: .* Wait for that run to finish, or cancel it \(Cancel in the Sanitizer tab of the window that started it; closing that window cancels it too; .*\), then start this one again\.$/,
    );
    assert.equal(await b.getByTestId('sanitizer-progress').count(), 0, 'no progress for a run that never started');
    assert.equal(await b.getByTestId('sanitizer-error').count(), 0, 'a refusal, not a failure of the tool');
    assert.equal(await b.getByTestId('sanitize-program').isDisabled(), false, 'it can ask again');
    assert.deepEqual(readFileSync(started, 'utf8').trim().split('\n'), ['slow.py']);
    assert.deepEqual(await seriousViolations(b), []);

    // The first run was not disturbed; its Cancel stops it, and the tool is free.
    await a.getByTestId('output-tab-Sanitizer').click();
    assert.match(await progress.innerText(), /^Running python3 slow\.py under memcheck/);
    await a.getByTestId('cancel-sanitize').click();
    await a
      .getByTestId('sanitizer-error')
      .filter({ hasText: /^Cancelled: memcheck was stopped/ })
      .waitFor({ timeout: 15_000 });
    await a.getByTestId('output-tab-Run').click();
    await rerunNote.filter({ hasText: idle.note }).waitFor();
    assert.equal(await a.getByTestId('sanitizer-rerun').isDisabled(), idle.disabled, 'the button is as it was before the run');

    // The second window asks again: it runs, and its refusal gives way to the findings. The cancelled run lets the
    // tool go once its group is stopped and its report read, which a loaded machine may take a few seconds over:
    // until then the host refuses in the same words (asserted above), and the window asks again.
    const view = b.getByTestId('sanitizer-view');
    const found = view.getByText(/memcheck found 4 findings in 3 places/);
    for (let attempt = 0; ; attempt++) {
      await sanitizeProgram(b, 'python3 quick.py');
      // The API error the fault left behind is folded under it: 4 findings, 3 places.
      await found.or(refused).first().waitFor({ timeout: 30_000 });
      if (await found.count()) break;
      assert.ok(attempt < 10, 'the tool was never free again after the first run was cancelled');
      await b.waitForTimeout(1_000);
    }
    assert.equal(await refused.count(), 0);
    assert.deepEqual(first.errors, []);
    assert.deepEqual(second.errors, []);
    await a.close();
    await context.close();
  });
});

describe('a host without compute-sanitizer', () => {
  const absent = join(work, 'absent');
  const app = serveWithBrowser(join(work, 'no-tool'), { GPU_WORKBENCH_COMPUTE_SANITIZER: absent, PATH: '/usr/bin:/bin', CUDA_HOME: work, CUDA_PATH: work }, [
    '--allow-programs',
    '--root',
    work,
  ]);
  test('Sanitize a program… is off and says why before it is pressed; asked anyway, the host says so each time, never that a run is under way', async (t) => {
    if (locateComputeSanitizer().path || existsSync('/usr/local/cuda/bin/compute-sanitizer')) return t.skip('compute-sanitizer is installed here');
    const { page, errors } = await openApp(app.browser, app.serve.url, VIEWPORTS[0]!);
    await page.getByTestId('output-tab-Sanitizer').click();
    const note = page.getByTestId('sanitize-program-unavailable');
    await note.filter({ hasText: /^compute-sanitizer was not found on this machine/ }).waitFor();
    assert.equal(await page.getByTestId('sanitize-program').isDisabled(), true);
    // A request made without the button (another client of the host): refused with the reason, each time.
    const api = await connectApi(app.serve);
    try {
      for (const program of ['quick.py', 'again.py']) {
        const answer = await api.call('sanitize.program', { command: ['python3', program], cwd: work, env: {}, tool: 'memcheck' });
        assert.equal(answer.ok, false, program);
        assert.equal(!answer.ok && answer.error.code, 'NO_SANITIZER', program);
        assert.match(
          !answer.ok ? answer.error.message : '',
          /compute-sanitizer was not found \(looked in .*absent.*\)\. It comes with the CUDA toolkit/,
          program,
        );
      }
    } finally {
      api.close();
    }
    assert.equal(await page.getByTestId('sanitizer-refused').count(), 0);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
