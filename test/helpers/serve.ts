import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before } from 'node:test';

import type { Browser } from 'playwright-core';

import { launchChromium } from './browser';

import { ROOT } from './cli';

export interface ServeProcess {
  url: string;
  port: number;
  token: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the real `serve` entry on a free port and reads the URL it prints. */
export function startServe(env: Record<string, string> = {}, via: 'npm-script' | 'cli' = 'npm-script', extraArgs: string[] = []): Promise<ServeProcess> {
  const entry = via === 'cli' ? [join(ROOT, 'bin/gpu-workbench.js'), 'serve'] : [join(ROOT, 'dist/main/serve.js')];
  const child = spawn(process.execPath, [...entry, '--port', '0', '--no-spare', ...extraArgs], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 20_000);
    const onData = (d: Buffer) => {
      out += d;
      const m = /serving at (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([\w-]+))/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        url: m[1]!,
        port: Number(m[2]),
        token: m[3]!,
        child,
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
}

/**
 * The real serve host and Debian's Chromium for one e2e file: started before its tests, stopped after.
 * `work` (when given) keeps the host's drafts and compile cache out of the user's own; `env` adds to the host's environment.
 */
export function serveWithBrowser(
  work?: string,
  env: Record<string, string> = {},
  args: string[] = [],
): { readonly serve: ServeProcess; readonly browser: Browser } {
  const app = {} as { serve: ServeProcess; browser: Browser };
  before(async () => {
    app.serve = await startServe(
      { ...(work ? { GPU_WORKBENCH_STATE_DIR: join(work, 'state'), GPU_WORKBENCH_CACHE_DIR: join(work, 'cache') } : {}), ...env },
      'npm-script',
      args,
    );
    app.browser = await launchChromium();
  });
  after(async () => {
    await app.browser?.close();
    await app.serve?.stop();
  });
  return app;
}
