import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';

/** Debian's Chromium, headless, with the flags this machine's closed network needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A page of the app in a context of its own that lets axe-core in (the page's CSP forbids inline scripts), collecting
 * the page's errors; `ready` waits for the first editor tab (a page whose view is not the editor passes false).
 */
export async function openWorkbenchPage(
  browser: Browser,
  url: string,
  options: BrowserContextOptions & { ready?: boolean } = {},
): Promise<{ page: Page; errors: string[] }> {
  const { ready = true, ...contextOptions } = options;
  const context = await browser.newContext({ ...contextOptions, bypassCSP: true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  if (ready) await page.getByTestId('tab').first().waitFor();
  return { page, errors };
}
