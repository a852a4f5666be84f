import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Locator, Page } from 'playwright-core';

import { SHORTCUTS } from '../../core/ui/shortcuts';
import { findNvcc } from '../../main/compile/nvcc';
import { unnamedOrDuplicateControls } from '../helpers/a11y';
import { ROOT, SAMPLES } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';
import { VIEWPORTS, assertInsideWindow } from '../helpers/viewports';

// Issue 12, item 5: everything by keyboard. Tab leaves the editor unless asked not to, and says which
// it does; file tabs and problems take focus; run, save, open, problems and focus areas have keys, and
// a dialog lists them; Escape closes dialogs; a disabled button looks and acts disabled; every control
// has a name of its own.
const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-e2e-keys-'));
const broken = join(work, 'missing_semicolon.cu');
copyFileSync(join(SAMPLES, 'syntax-error/missing_semicolon.cu'), broken);
const hasCompiler = findNvcc().then((n) => n.found);
const app = serveWithBrowser(work);

/** Where focus is, as a person would describe it: the area, and the focused thing's role and name. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const e = document.activeElement as HTMLElement | null;
    return {
      region: e?.closest<HTMLElement>('[data-region]')?.dataset['region'] ?? null,
      inEditor: !!e?.closest('.monaco-editor'),
      inDialog: !!e?.closest('dialog'),
      role: e?.getAttribute('role') ?? e?.tagName.toLowerCase() ?? null,
      text: (e?.getAttribute('aria-label') ?? e?.textContent ?? '').trim().slice(0, 80),
    };
  });

const hasFocus = (locator: Locator) => locator.evaluate((e) => e === document.activeElement);
const editorLines = (page: Page) => page.locator('.monaco-editor .view-lines').innerText();
const cursor = (page: Page) => page.getByTestId('cursor-position').innerText();

for (const viewport of VIEWPORTS) {
  test(`${viewport.width}×${viewport.height}: the keyboard reaches everything, and is never trapped`, async (t) => {
    if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
    const page = await app.browser.newPage({ viewport });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(app.serve.url);
    // Files the other window size's run left open come back as drafts: start from the sample.
    await page.getByTestId('tab').filter({ hasText: 'vector_add.cu' }).click();
    await page.getByTestId('compile-status').filter({ hasText: '✓' }).waitFor({ timeout: 30_000 });

    // Tab leaves the editor by default, and the status bar says so.
    const tabMode = page.getByTestId('tab-focus-mode');
    await assertInsideWindow(page, tabMode, 'the Tab key switch');
    assert.match(await tabMode.innerText(), /Tab moves focus: on/);
    await page.locator('.monaco-editor .view-lines').click();
    assert.ok((await focused(page)).inEditor);
    const text = await editorLines(page);
    await page.keyboard.press('Tab');
    const afterTab = await focused(page);
    assert.equal(afterTab.inEditor, false, `Tab stayed in the editor: ${JSON.stringify(afterTab)}`);
    assert.equal(await editorLines(page), text, 'Tab inserted nothing');
    await page.keyboard.press('Shift+Tab');
    assert.ok((await focused(page)).inEditor, 'Shift+Tab goes back into the editor');

    // Ctrl+M switches Tab to inserting, as in VS Code, and back.
    await page.keyboard.press('Control+M');
    assert.match(await tabMode.innerText(), /Tab moves focus: off/);
    await page.keyboard.press('Tab');
    assert.ok((await focused(page)).inEditor, 'with the switch off, Tab stays in the editor');
    assert.notEqual(await editorLines(page), text, 'and indents');
    await page.keyboard.press('Control+Z');
    await page.keyboard.press('Control+M');
    assert.match(await tabMode.innerText(), /Tab moves focus: on/);

    // Ctrl+O opens the Open dialog with the focus in its path field; Escape closes it and focus returns.
    await page.keyboard.press('Control+O');
    const dialog = page.getByTestId('open-dialog');
    await dialog.waitFor();
    assert.deepEqual([(await focused(page)).inDialog, (await focused(page)).text], [true, 'Path']);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.ok((await focused(page)).inEditor, 'focus is back in the editor');
    await page.keyboard.press('Control+O');
    await page.keyboard.type(broken);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('problems').locator('li.problem-error').first().waitFor({ timeout: 30_000 });

    // File tabs take focus (Shift+Tab from the editor reaches the open file's tab); the arrows move between files.
    await page.locator('.monaco-editor .view-lines').click();
    await page.keyboard.press('Shift+Tab');
    assert.ok(await hasFocus(page.getByRole('tab', { name: 'missing_semicolon.cu', exact: true })), JSON.stringify(await focused(page)));
    await page.keyboard.press('ArrowLeft');
    const sample = page.getByRole('tab', { name: 'vector_add.cu', exact: true });
    assert.ok(await hasFocus(sample));
    assert.equal(await sample.getAttribute('aria-selected'), 'true');
    await page.locator('.monaco-editor .view-lines', { hasText: 'vecAdd' }).waitFor({ timeout: 5000 });
    assert.match(await editorLines(page), /vecAdd/);
    await page.keyboard.press('ArrowRight');
    // Monaco draws the other model on its next frame: wait for it rather than read at once.
    await page.locator('.monaco-editor .view-lines', { hasText: 'scale' }).waitFor({ timeout: 5000 });
    assert.match(await editorLines(page), /scale/);

    // Ctrl+Shift+M focuses the Problems list; Enter on a problem puts the cursor on it.
    await page.keyboard.press('Control+Shift+M');
    const problem = await focused(page);
    assert.equal(problem.region, 'output');
    assert.match(problem.text, /error 4:3 expected a ";"/);
    await page.keyboard.press('Enter');
    assert.ok((await focused(page)).inEditor);
    assert.equal(await cursor(page), 'Ln 4, Col 3');

    // F8 goes to the next problem, errors before warnings as in VS Code, and shows its message at the line;
    // Shift+F8 goes back.
    await page.keyboard.press('Control+Home');
    assert.equal(await cursor(page), 'Ln 1, Col 1');
    await page.keyboard.press('F8');
    assert.equal(await cursor(page), 'Ln 4, Col 3');
    await page.locator('.marker-widget').filter({ hasText: 'expected a ";"' }).waitFor();
    await page.keyboard.press('F8');
    assert.equal(await cursor(page), 'Ln 3, Col 7');
    await page.locator('.marker-widget').filter({ hasText: 'variable "i" was declared but never referenced' }).waitFor();
    await page.keyboard.press('Shift+F8');
    assert.equal(await cursor(page), 'Ln 4, Col 3');
    await page.keyboard.press('Escape');

    // F6 walks the areas: editor → output → side panel → top bar → editor.
    const regions = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('F6');
      regions.push((await focused(page)).region);
    }
    assert.deepEqual(regions, ['output', 'side', 'top bar', 'editor']);
    await page.keyboard.press('Shift+F6');
    assert.equal((await focused(page)).region, 'top bar');
    await page.keyboard.press('F6');
    assert.ok((await focused(page)).inEditor);

    // Ctrl+Enter runs (here: no driver, so Run says why it did not start) and inserts no line in the editor, where Monaco would.
    await sample.click();
    await page.locator('.monaco-editor .view-lines').click();
    const source = await editorLines(page);
    await page.keyboard.press('Control+Enter');
    await page.getByTestId('run-refused').filter({ hasText: 'No NVIDIA driver found' }).waitFor({ timeout: 30_000 });
    assert.equal(await editorLines(page), source);

    // The shortcuts dialog lists every shortcut; Escape closes it and focus goes back.
    await page.keyboard.press('Control+Shift+Slash');
    const list = page.getByTestId('shortcuts-dialog');
    await list.waitFor();
    await assertInsideWindow(page, list, 'the shortcuts dialog');
    assert.equal(await list.locator('tr[data-testid^="shortcut-"]').count(), SHORTCUTS.length);
    assert.match(await list.getByTestId('shortcut-run').innerText(), /Ctrl\+Enter\s+Run the kernel/);
    assert.match(await list.getByTestId('shortcut-nextProblem').innerText(), /F8\s+Go to the next problem/);
    assert.match(await list.getByTestId('shortcut-toggleTabFocus').innerText(), /Ctrl\+M\s+Tab key/);
    assert.ok((await focused(page)).inDialog);
    await page.keyboard.press('Escape');
    await list.waitFor({ state: 'detached' });
    assert.ok((await focused(page)).inEditor);
    // And from the top bar's button, by keyboard alone.
    await page.getByTestId('shortcuts-button').focus();
    await page.keyboard.press('Enter');
    await list.waitFor();
    await page.keyboard.press('Escape');
    await list.waitFor({ state: 'detached' });
    assert.equal((await focused(page)).text, 'Keyboard shortcuts');

    // A disabled button looks disabled (faded, the not-allowed cursor, no hover) and does nothing.
    await page.getByTestId('output-tab-Run').click();
    await page.getByLabel('Result file').fill(join(ROOT, 'test/fixtures/runs/null-pointer.json'));
    await page.getByRole('button', { name: 'Open result' }).click();
    const sanitizer = page.getByRole('button', { name: /Re-run under compute-sanitizer/ });
    await sanitizer.waitFor();
    assert.ok(await sanitizer.isDisabled());
    const look = () =>
      sanitizer.evaluate((b) => {
        const s = getComputedStyle(b);
        return { opacity: Number(s.opacity), cursor: s.cursor, border: s.borderColor };
      });
    const idle = await look();
    assert.ok(idle.opacity <= 0.5, `opacity ${idle.opacity}`);
    assert.equal(idle.cursor, 'not-allowed');
    const enabled = await page.getByRole('button', { name: 'Open result' }).evaluate((b) => Number(getComputedStyle(b).opacity));
    assert.equal(enabled, 1, 'an enabled button is not faded');
    await sanitizer.hover();
    assert.equal((await look()).border, idle.border, 'no hover highlight');

    // Every control on the gallery has a name of its own (sixteen "Open broken" buttons did not).
    await page.getByTestId('gallery-tab').click();
    await page.getByTestId('sample-block-too-large').waitFor();
    assert.deepEqual(await unnamedOrDuplicateControls(page), []);
    await page.getByRole('button', { name: 'Open broken: 64 × 32 threads per block' }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('tab').filter({ hasText: 'kernel.cu' }).waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  });
}
