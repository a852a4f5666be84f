import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { findNvcc } from '../../main/compile/nvcc';
import { SAMPLES } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { assertInViewport, openApp, openByPath, sizeName, VIEWPORTS, waitForCompile } from '../helpers/ui';

// Issue 12, items 7 and 8: what is on screen stays while a person types (the last good compile, marked
// stale), and the Explain view keeps its paste across views, with a heading and an Explain button.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-stable-'));
const hasCompiler = findNvcc().then((n) => n.found);
const app = serveWithBrowser(work);

for (const viewport of VIEWPORTS) {
  test(`7 (${sizeName(viewport)}): deleting one ";" keeps the kernel facts, launch findings and PTX, dimmed and marked stale, until it compiles again`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const file = join(work, `vector_add_${viewport.width}.cu`);
    copyFileSync(join(SAMPLES, 'vector-add/vector_add.cu'), file);
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport);
    await page.getByTestId('tab').first().waitFor();
    await openByPath(page, file);
    await waitForCompile(page);
    const facts = page.getByTestId('kernel-facts');
    const registers = await facts.getByTestId('registers').first().innerText();
    const panel = page.getByTestId('launch-panel');
    await panel.getByLabel('Block', { exact: true }).fill('2048');
    await panel.getByTestId('finding-threads-per-block').waitFor();

    // Delete the ";" that ends the kernel's first statement.
    await page.locator('.monaco-editor .view-line').filter({ hasText: 'threadIdx.x;' }).first().click();
    await page.keyboard.press('End');
    await page.keyboard.press('Backspace');
    await waitForCompile(page, '✗');
    await page.getByTestId('problems').locator('li.problem-error').first().waitFor();
    // The facts, the findings and the chart are still there, from the last good compile, and say so.
    assert.equal(await facts.getByTestId('registers').first().innerText(), registers);
    assert.match(await facts.getByTestId('stale-note').innerText(), /Stale: These resources are from the last successful compile/);
    assert.match(await panel.getByTestId('stale-note').innerText(), /Stale/);
    assert.match(await panel.getByTestId('finding-threads-per-block').innerText(), /2048 threads per block/);
    assert.ok(
      Number(
        await facts
          .locator('section.kernel')
          .first()
          .evaluate((e) => getComputedStyle(e).opacity),
      ) < 1,
      'the stale facts are dimmed',
    );
    assert.equal(await facts.getByTestId('stale-note').evaluate((e) => getComputedStyle(e).opacity), '1', 'the note itself is not');
    await assertInViewport(page, facts.getByTestId('stale-note'), 'the stale note');
    await page.getByTestId('output-tab-PTX').click();
    assert.match(await page.getByTestId('ptx-view').innerText(), /Stale: This PTX is[\s\S]*\.entry/);

    // Typing it back: a good compile, and nothing is stale.
    await page.locator('.monaco-editor .view-line').filter({ hasText: 'threadIdx.x' }).first().click();
    await page.keyboard.press('End');
    await page.keyboard.type(';');
    await waitForCompile(page);
    await page.getByTestId('stale-note').first().waitFor({ state: 'detached' });
    assert.equal(await facts.getByTestId('registers').first().innerText(), registers);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`8 (${sizeName(viewport)}): the Explain view has a heading and an Explain button, and keeps its text across views`, async () => {
    const { page, errors } = await openApp(app.browser, app.serve.url, viewport, '&view=explain');
    const heading = page.getByRole('heading', { name: 'Explain an error', level: 2 });
    await assertInViewport(page, heading, 'the heading');
    const paste = 'CUDA error: an illegal memory access was encountered';
    await page.getByLabel('Paste an error').fill(paste);
    const button = page.getByRole('button', { name: 'Explain', exact: true });
    await assertInViewport(page, button, 'the Explain button');
    await button.click();
    // Explain moves to the explanation, which a screen reader then reads.
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'explanation-title');
    assert.match(await page.getByTestId('explanation-title').innerText(), /CUDA_ERROR_ILLEGAL_ADDRESS \(700\)/);

    await page.getByRole('tab', { name: 'Editor' }).click();
    await page.getByRole('tab', { name: 'Explain an error' }).click();
    assert.equal(await page.getByLabel('Paste an error').inputValue(), paste);
    assert.match(await page.getByTestId('explanation').innerText(), /CUDA_ERROR_ILLEGAL_ADDRESS \(700\)/);
    assert.deepEqual(errors, []);
    await page.close();
  });
}
