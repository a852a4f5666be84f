import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { CHECK_NAMES } from '../../core/check/check-model';
import { discoverLibraries } from '../../main/services/discovery-service';
import { seriousViolations, unnamedOrDuplicateControls } from '../helpers/a11y';
import { serveWithBrowser } from '../helpers/serve';
import { openWorkbenchPage } from '../helpers/browser';
import { assertInViewport, openSample, sizeName, VIEWPORTS } from '../helpers/ui';

// Issue 28, "Check everything", as a person sees it on a machine without a GPU: the button beside Run is off and says
// why, and the Check tab lists every check — validator, run, determinism, the four compute-sanitizer tools, coalescing
// and occupancy — as could not run, each with its reason. Nothing is ticked: a check that could not run is not a pass.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-check-'));
const app = serveWithBrowser(work);
const hasDriver = discoverLibraries().cuda.loaded;

for (const viewport of VIEWPORTS) {
  test(
    `Check everything (${sizeName(viewport)}): off without a GPU and says why; every check could not run, with its reason, and no tick`,
    { skip: hasDriver && 'this machine has a driver' },
    async () => {
      // A context that lets axe-core in (the page's CSP refuses inline scripts).
      const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport });
      await openSample(page, 'oob-off-by-one');

      const button = page.getByTestId('check-button');
      await button.waitFor();
      await page.getByTestId('check-off').waitFor();
      assert.equal(await button.innerText(), 'Check everything');
      assert.equal(await button.isDisabled(), true);
      assert.match((await button.getAttribute('title')) ?? '', /^No check could run here: /);
      const off = page.getByTestId('check-off');
      assert.match(
        await off.innerText(),
        /^Check everything is off: No check could run here: The plan runs on a GPU, and this machine has none: No NVIDIA driver found\./,
      );
      assert.equal(await button.getAttribute('aria-describedby'), 'check-off');
      await assertInViewport(page, button, 'the Check everything button');

      await page.getByTestId('output-tab-Check').click();
      const view = page.getByTestId('check-view');
      assert.match(
        await view.getByTestId('check-intro').innerText(),
        /^Check everything cannot run on this machine\. Each check, and why it could not run here:/,
      );
      const rows = view.getByTestId('check-row');
      assert.equal(await rows.count(), CHECK_NAMES.length);
      const reasons: Record<string, RegExp> = {
        validator: /^There is no GPU here to check the plan against \(No NVIDIA driver found\); the Launch panel checks it against the profile you chose\.$/,
        run: /^The plan runs on a GPU, and this machine has none: No NVIDIA driver found\.$/,
        determinism: /^The plan runs on a GPU, and this machine has none: No NVIDIA driver found\.$/,
        memcheck: /compute-sanitizer .*runs the plan on a GPU, .*No NVIDIA driver found\.$/,
        racecheck: /compute-sanitizer .*runs the plan on a GPU, .*No NVIDIA driver found\.$/,
        initcheck: /compute-sanitizer .*runs the plan on a GPU, .*No NVIDIA driver found\.$/,
        synccheck: /compute-sanitizer .*runs the plan on a GPU, .*No NVIDIA driver found\.$/,
        coalescing: /^Nsight Compute profiles the plan on a GPU, and this machine has none: No NVIDIA driver found\.$/,
        occupancy: /^Nsight Compute profiles the plan on a GPU, and this machine has none: No NVIDIA driver found\.$/,
      };
      for (const [i, name] of CHECK_NAMES.entries()) {
        const row = rows.nth(i);
        assert.equal(await row.getAttribute('data-check'), name);
        assert.equal(await row.getAttribute('data-status'), 'could-not-run', name);
        assert.equal(await row.getByTestId('check-status').innerText(), 'could not run', name);
        assert.match(await row.getByTestId('check-summary').innerText(), reasons[name]!, name);
        assert.equal(await row.getByRole('img').getAttribute('aria-label'), 'could not run');
      }
      // Silence is a verdict: nothing on the tab reads as a pass.
      const said = await view.innerText();
      assert.doesNotMatch(said, /✓/);
      assert.doesNotMatch(said, /\bpassed\b/);
      await assertInViewport(page, rows.first(), 'the first check');

      assert.deepEqual(await seriousViolations(page), []);
      assert.deepEqual(await unnamedOrDuplicateControls(page), []);
      assert.deepEqual(errors, []);
      await page.context().close();
    },
  );
}
