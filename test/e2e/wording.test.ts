import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { openWorkbenchPage } from '../helpers/browser';
import { seriousViolations } from '../helpers/a11y';
import { ROOT, SAMPLES } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { activeTab, assertInViewport, openBundleDialog, openResult, sizeName, VIEWPORTS } from '../helpers/ui';

// Issue 26, item 12: words and numbers as a person reads them, from results and bundles recorded on an H100 — real
// plurals, thousands separators, one precision for sizes; the race's own kernel as its recorded launch; the launch's
// note on its own file only; closing a bundle gives back the result opened before it; the gallery by its titles.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-wording-'));
const RUNS = join(ROOT, 'test/fixtures/runs');
const app = serveWithBrowser(work);

test('26.12: plurals, separators and sizes as read; the race’s own launch, its note on its file; a bundle closed gives the result back; the gallery by title', async () => {
  for (const viewport of VIEWPORTS) {
    const size = sizeName(viewport);
    const { page, errors } = await openWorkbenchPage(app.browser, app.serve.url, { viewport });

    // The gallery in the order of the titles it shows.
    await page.getByTestId('gallery-tab').click();
    const titles = page.getByTestId('gallery').locator('article h3');
    await titles.first().waitFor();
    const shown = await titles.allTextContents();
    assert.deepEqual(shown.slice(0, 4), [
      '64 × 32 threads per block',
      '100000 floats of static shared memory',
      'A plan that never frees',
      'An allocation larger than the device',
    ]);
    await page.getByRole('tab', { name: 'Editor' }).click();

    // Sizes at one precision: 79.18 GiB (the H100's total, as PyTorch and nvidia-smi give it), not 79.2.
    await openResult(page, join(RUNS, 'allocation-too-large.json'));
    const memory = page.getByTestId('diagnosis-memory');
    await memory.waitFor();
    assert.match(await memory.innerText(), /Requested 256 GiB · free 78\.15 GiB of 79\.18 GiB/);

    // The race: its counts with separators, its recorded launch the kernel that wrote `out`, not the reference.
    await openResult(page, join(RUNS, 'shared-memory-race.json'));
    await page.getByTestId('diagnosis-headline').filter({ hasText: 'Wrong result in out' }).waitFor();
    assert.match(await page.getByTestId('compare-out').innerText(), /^496,831 of 1,048,576 elements differ from buffer expected; first at \[32\]/);
    assert.match(await page.getByTestId('buffer-out').locator('h4').innerText(), /· Inf 33,240$/);
    const recorded = page.getByTestId('recorded-launch');
    assert.match(await recorded.innerText(), /^Recorded launch: reverseBlocks<<<1024, 1024>>> on NVIDIA H100 80GB HBM3/);
    assert.doesNotMatch(await page.getByTestId('run-result').innerText(), /\(s\)/, 'real plurals');
    await assertInViewport(page, recorded, `${size}: the recorded launch`);

    // Its launch into the file that defines reverseBlocks: the note about it is that file's, not every file's.
    await recorded.getByTestId('load-recorded-launch').click();
    const locate = page.getByTestId('locate-dialog');
    await locate.getByLabel('Path of the file').fill(join(SAMPLES, 'shared-memory-race/broken.cu'));
    await locate.getByRole('button', { name: 'Open', exact: true }).click();
    await activeTab(page).filter({ hasText: 'broken.cu' }).waitFor();
    const note = page.locator('.editor-view > .banner').filter({ hasText: 'The recorded launch of reverseBlocks is in the launch panel of broken.cu' });
    await note.waitFor();
    await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).click();
    await note.waitFor({ state: 'detached' });
    await page.getByTestId('tab').filter({ hasText: 'broken.cu' }).click();
    await note.waitFor();
    await note.getByRole('button', { name: 'Dismiss' }).click();

    // A bundle opened over that result, its wording; closed, the result opened before comes back.
    await openBundleDialog(page, join(ROOT, 'test/fixtures/bundles/recorded/shared-memory-race.zip'));
    await page.getByTestId('bundle-show').click();
    const kernels = await page.getByTestId('bundle-kernels').innerText();
    assert.match(kernels, /PTX \([\d.,]+ KiB\), (compiled again at export|taken from the compile cache)/);
    assert.doesNotMatch(kernels, /PTX \([^)]*\) from |from taken from/, 'not "from taken from the compile cache"');
    const view = await page.locator('main.bundle-view').innerText();
    assert.doesNotMatch(view, /\(s\)/, 'real plurals');
    assert.match(view, /\b\d+ allocations?\b/);
    await page.getByRole('tab', { name: 'Editor' }).click();
    await page.getByTestId('output-tab-Run').click();
    assert.match(await page.getByTestId('run-result').innerText(), /from the bundle .*shared-memory-race\.zip/);
    await page.getByTestId('bundle-close').click();
    await page.getByTestId('bundle-banner').waitFor({ state: 'detached' });
    await page.getByText(`opened from ${join(RUNS, 'shared-memory-race.json')}`).waitFor();
    assert.match(await page.getByTestId('diagnosis-headline').innerText(), /Wrong result in out/);

    assert.deepEqual(await seriousViolations(page), []);
    assert.deepEqual(errors, []);
    await page.context().close();
  }
});
