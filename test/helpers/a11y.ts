import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Page } from 'playwright-core';

import { ROOT } from './cli';

const AXE = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page as it is now, one line each (rule, what it
 * means, where). The page's CSP forbids inline scripts, so the page must come from a context made with
 * bypassCSP to take axe in.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE });
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }).axe;
    type AxeResults = { violations: { id: string; impact: string | null; help: string; nodes: { target: string[]; failureSummary?: string }[] }[] };
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v) =>
          `${v.impact} ${v.id}: ${v.help} — ${v.nodes.map((n) => `${n.target.join(' ')}${n.failureSummary ? ` (${n.failureSummary.replace(/\s+/g, ' ')})` : ''}`).join('; ')}`,
      );
  });
}

const CONTROLS = new Set(['button', 'link', 'textbox', 'searchbox', 'combobox', 'checkbox', 'radio', 'switch', 'tab', 'spinbutton', 'slider', 'menuitem']);

/**
 * The controls a screen reader lists (from Chromium's own accessibility tree) that have no name, or
 * share their role and name with another: each should say which thing it acts on.
 */
export async function unnamedOrDuplicateControls(page: Page): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
    nodes: { ignored: boolean; role?: { value: string }; name?: { value: string } }[];
  };
  await cdp.detach();
  const seen = new Map<string, number>();
  const problems: string[] = [];
  for (const n of nodes) {
    const role = n.role?.value ?? '';
    if (n.ignored || !CONTROLS.has(role)) continue;
    const name = (n.name?.value ?? '').trim();
    if (!name) problems.push(`a ${role} with no name`);
    else seen.set(`${role} "${name}"`, (seen.get(`${role} "${name}"`) ?? 0) + 1);
  }
  for (const [control, count] of seen) if (count > 1) problems.push(`${count} × ${control}`);
  return problems;
}
