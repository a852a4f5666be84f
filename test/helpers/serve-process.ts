import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

import { projectRoot } from '../../main/paths';

// The real serve host as a child process: the e2e and integration tests start it, and so do the benches
// that measure the UI in Chromium (which is why this module loads nothing of node:test).

export interface ServeProcess {
  url: string;
  port: number;
  token: string;
  child: ChildProcess;
  /** Everything the host printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Starts the real `serve` entry on a free port, in `cwd` (this checkout unless given), and reads the URL it prints. */
export function startServe(
  env: Record<string, string> = {},
  via: 'npm-script' | 'cli' = 'npm-script',
  extraArgs: string[] = [],
  cwd = projectRoot(),
): Promise<ServeProcess> {
  const entry = via === 'cli' ? [join(projectRoot(), 'bin/gpu-workbench.js'), 'serve'] : [join(projectRoot(), 'dist/main/serve.js')];
  const child = spawn(process.execPath, [...entry, '--port', '0', '--no-spare', ...extraArgs], {
    cwd,
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
        output: () => out,
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
