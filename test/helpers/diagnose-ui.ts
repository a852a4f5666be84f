import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Browser, Page } from 'playwright-core';

import { seriousViolations, unnamedOrDuplicateControls } from './a11y';
import { ROOT } from './cli';
import { relocatedRecording } from './program-fixtures';
import type { Viewport } from './ui';

/** Diagnoses recorded on an H100 (real GPU runs of samples/programs/*, whose paths are this checkout's). */
export const DIAGNOSES = join(ROOT, 'test/fixtures/diagnoses');

/**
 * The recorded diagnoses copied into `dir`, the files they name moved from the recording's checkout to this one: a
 * link to "your line" then opens this checkout's sample, which a serve started here may open (a stale copy at the
 * recorded path is outside its roots).
 */
export function relocatedDiagnoses(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(DIAGNOSES)) {
    if (name.endsWith('.json')) writeFileSync(join(dir, name), relocatedRecording(join(DIAGNOSES, name)));
    else copyFileSync(join(DIAGNOSES, name), join(dir, name));
  }
  return dir;
}

/** The Diagnose view (?view=diagnose) at a viewport and theme, collecting the page's errors; its context lets axe in. */
export async function diagnosePage(browser: Browser, url: string, viewport: Viewport, theme: 'dark' | 'light' = 'dark') {
  // The page's CSP refuses inline scripts, axe's included: this context alone bypasses it.
  const context = await browser.newContext({ viewport, colorScheme: theme, bypassCSP: true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${url}&view=diagnose`);
  await page.getByRole('heading', { name: 'Diagnose a program' }).waitFor();
  return { page, errors, close: () => context.close() };
}

/** Opens a saved report through the file browser: its folder typed (the listing goes there), then the file clicked. */
export async function openSaved(page: Page, name: string, folder = DIAGNOSES) {
  await page.getByRole('button', { name: 'Open a saved diagnosis…' }).click();
  const dialog = page.getByTestId('diagnose-open-dialog');
  await dialog.getByLabel('File path').fill(folder);
  await dialog.getByLabel('File path').press('Enter');
  await dialog.getByRole('list', { name: `In ${folder}` }).waitFor();
  await dialog.getByRole('button', { name, exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByTestId('diagnosis-verdict').waitFor();
}

/** axe-clean (no serious or critical violation), and every control named, none twice. */
export async function assertAccessible(page: Page, what: string) {
  assert.deepEqual(await seriousViolations(page), [], what);
  assert.deepEqual(await unnamedOrDuplicateControls(page), [], what);
}
