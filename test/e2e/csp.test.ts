import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { waitForCompile } from '../helpers/ui';
import { findNvcc } from '../../main/compile/nvcc';

// The page's Content-Security-Policy allows no inline style (issue 25): Monaco, the memory timeline and the dialogs
// must draw under it. Chromium reports each refused style both as a console error and as a securitypolicyviolation.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-csp-'));
const app = serveWithBrowser(work);
const hasCompiler = findNvcc().then((n) => n.found);

test('the editor, the Memory tab and a dialog draw under the CSP with no violation', async () => {
  const page = await app.browser.newPage({ viewport: { width: 1400, height: 900 } });
  const refused: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) refused.push(m.text());
  });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const seen = ((window as unknown as { __violations?: string[] }).__violations ??= []);
      seen.push(`${e.effectiveDirective}: ${e.blockedURI} ${e.sample} @ ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`);
    });
  });
  const response = await page.goto(app.serve.url);
  const policy = (await response!.allHeaders())['content-security-policy'] ?? '';
  assert.doesNotMatch(policy.split(';').find((d) => d.trim().startsWith('style-src ')) ?? '', /unsafe-inline/);

  // The editor: drawn, compiled (markers and decorations), typed in, its find widget and suggestions shown.
  await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).waitFor();
  if (await hasCompiler) await waitForCompile(page);
  await page.locator('.monaco-editor .view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('\n// typed under the policy');
  await page.keyboard.press('Control+F');
  await page.locator('.monaco-editor .find-widget.visible').waitFor();
  await page.keyboard.press('Escape');
  await page.locator('.monaco-editor .view-lines').click();
  await page.keyboard.press('Control+Space');
  await page.waitForTimeout(300);
  await page.keyboard.press('Escape');

  // The Memory tab, with a snapshot drawn on its timeline.
  await page.getByTestId('output-tab-Memory').click();
  await page.getByRole('button', { name: 'Open memory snapshot…' }).click();
  const dialog = page.getByTestId('memory-open-dialog');
  await dialog.getByLabel('Memory snapshot or result file').fill(join(ROOT, 'test/fixtures/snapshots/h100/oom.pickle'));
  await dialog.getByRole('button', { name: 'Open snapshot' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.locator('[data-testid="memory-timeline"] canvas[data-tiles-settled="yes"]').waitFor();

  // A dialog.
  await page.getByRole('button', { name: 'Open…' }).click();
  await page.getByTestId('open-dialog').waitFor();
  await page.waitForTimeout(300);
  await page.keyboard.press('Escape');

  const violations = await page.evaluate(() => (window as unknown as { __violations?: string[] }).__violations ?? []);
  assert.deepEqual([...new Set(violations)], []);
  assert.deepEqual(refused, []);
  assert.deepEqual(errors, []);
  // Every <style> Monaco made was admitted (a refused one has no sheet), and the editor really drew: its lines, and
  // the theme's token colours, which come from one of those <style> elements.
  const styles = await page.evaluate(() => Array.from(document.querySelectorAll('style'), (s) => s.sheet !== null));
  assert.ok(styles.length > 0 && styles.every(Boolean), `admitted: ${styles.join(', ')}`);
  assert.ok((await page.locator('.monaco-editor .view-line').count()) > 5);
  const colour = await page
    .locator('.monaco-editor .view-line span span')
    .first()
    .evaluate((e) => getComputedStyle(e).color);
  assert.notEqual(colour, 'rgb(0, 0, 0)');
  await page.close();
});
