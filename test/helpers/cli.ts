import { spawn, type ChildProcess } from 'node:child_process';
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
    child.on('exit', (code) => {
      ms = performance.now() - started;
      streamsHeldAfterExit(child, code, reject);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms });
    });
  });
}

/** How long a process's output may still be arriving after it exited. */
const CLOSE_AFTER_EXIT_MS = 2000;

/**
 * Fails the run when the streams stay open after the process exited: a process it started (a runner, a compile
 * worker, nvcc) outlives it with its output, which no child of ours may do. Said in words, not as a timeout.
 */
export function streamsHeldAfterExit(child: ChildProcess, code: number | null, reject: (error: Error) => void): void {
  const timer = setTimeout(() => {
    child.stdout?.destroy();
    child.stderr?.destroy();
    reject(new Error(`gpu-workbench exited (code ${code}), but ${CLOSE_AFTER_EXIT_MS} ms later a process it started still held its output`));
  }, CLOSE_AFTER_EXIT_MS);
  child.once('close', () => clearTimeout(timer));
}

export function parseJson<T>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}
