import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';

import type { Browser } from 'playwright-core';

import { launchChromium } from './browser';

import { startServe, type ServeProcess } from './serve-process';

export { startServe, type ServeProcess };

/**
 * The real serve host and Debian's Chromium for one e2e file: started before its tests, stopped after. The host runs
 * in this checkout, so the samples and fixtures open. `work` (when given) keeps the host's drafts and compile cache out
 * of the user's own, and is a root (--root) the browser may read and write under; `env` adds to the host's environment.
 */
export function serveWithBrowser(
  work?: string,
  env: Record<string, string> = {},
  args: string[] = [],
): { readonly serve: ServeProcess; readonly browser: Browser } {
  const app = {} as { serve: ServeProcess; browser: Browser };
  before(async () => {
    if (work) mkdirSync(work, { recursive: true });
    app.serve = await startServe(
      { ...(work ? { GPU_WORKBENCH_STATE_DIR: join(work, 'state'), GPU_WORKBENCH_CACHE_DIR: join(work, 'cache') } : {}), ...env },
      'npm-script',
      [...(work ? ['--root', work] : []), ...args],
    );
    app.browser = await launchChromium();
  });
  after(async () => {
    await app.browser?.close();
    await app.serve?.stop();
  });
  return app;
}
