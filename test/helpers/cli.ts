import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(__dirname, '../../..');
export const SAMPLES = join(ROOT, 'samples');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the real CLI (bin/gpu-workbench.js -> dist/main/cli.js) as a user would. */
export function runCli(args: string[], options: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<CliResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/gpu-workbench.js'), ...args], { cwd: ROOT, env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gpu-workbench ${args.join(' ')} did not finish in ${options.timeoutMs ?? 120_000} ms\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 120_000);
    // 'exit' can come before the last of stdout and stderr is read (CI saw an empty stderr under load): the answer
    // is complete at 'close', when both streams have ended. The time is the process's own, taken at its exit.
    let ms = 0;
    child.on('exit', () => (ms = performance.now() - started));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms });
    });
  });
}

export function parseJson<T>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}
