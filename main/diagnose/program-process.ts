import { spawn } from 'node:child_process';

import type { AbortLike } from '../../core/api/channels';
import type { ExitStatus } from '../../core/diagnose/evidence';
import { programArgv } from '../../core/process/argument-words';
import { groupLeaderHandle } from '../process/launcher';
import { GROUP_REAPER } from '../process/sanitizer-launcher';
import { BoundedOutput } from '../tools/bounded-output';

/** Between SIGTERM to the program's group and SIGKILL, when the budget runs out or the user cancels. */
export const PROGRAM_STOP_GRACE_MS = 2_000;
/** How long the output pipes may stay open after the program exits (held by something that left its group). */
const PIPES_AFTER_EXIT_MS = 1_000;

export interface ProgramRunOptions {
  /** The program and its arguments as words: never through a shell's parsing. */
  argv: string[];
  cwd: string;
  /** The whole environment the program gets. */
  env: NodeJS.ProcessEnv;
  /** Stopped (its whole group) after this long: the budget left. */
  timeoutMs: number;
  signal?: AbortLike;
  /** Its output as it comes, stdout and stderr apart. */
  onOutput?: (text: string, stream: 'stdout' | 'stderr') => void;
  /** Called once it has started, with its pid. */
  onStart?: (pid: number) => void;
}

export interface ProgramRunResult {
  pid: number | null;
  exit: ExitStatus;
  /** stdout and stderr interleaved as they came, bounded (the start and the end kept). */
  output: string;
  droppedBytes: number;
  durationMs: number;
  spawnError: string | null;
}

/**
 * Runs a program once, as `exec "$@"` would (argv as words), leading a process group of its own beside a reaper
 * tied to this process (main/process/sanitizer-launcher.ts), so that a stop reaches everything it started and it all
 * dies with the host, even a host killed with SIGKILL. Its output streams to `onOutput` and is kept, bounded.
 */
export function runProgramOnce(options: ProgramRunOptions): Promise<ProgramRunResult> {
  const started = performance.now();
  const child = spawn('/bin/sh', ['-c', GROUP_REAPER, 'gpu-workbench-diagnose', ...programArgv(options.argv)], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const handle = groupLeaderHandle(child, child.stdio[3]);
  const output = new BoundedOutput();
  const forward = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    output.push(chunk);
    options.onOutput?.(chunk.toString('utf8'), stream);
  };
  child.stdout!.on('data', forward('stdout'));
  child.stderr!.on('data', forward('stderr'));
  if (child.pid !== undefined) options.onStart?.(child.pid);

  let outOfBudget = false;
  let cancelled = false;
  let exited = false;
  const stop = () => {
    if (exited) return;
    handle.kill('SIGTERM');
    setTimeout(() => handle.kill('SIGKILL'), PROGRAM_STOP_GRACE_MS).unref();
  };
  const watchdog = setTimeout(
    () => {
      outOfBudget = true;
      stop();
    },
    Math.max(0, options.timeoutMs),
  );
  const onAbort = () => {
    cancelled = true;
    stop();
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  return new Promise((resolve) => {
    const finish = (code: number | null, signal: string | null, spawnError: string | null) => {
      clearTimeout(watchdog);
      resolve({
        pid: child.pid ?? null,
        exit: { code, signal, outOfBudget, cancelled: cancelled && !outOfBudget },
        output: output.text(),
        droppedBytes: output.droppedBytes,
        durationMs: performance.now() - started,
        spawnError,
      });
    };
    child.once('error', (error) => finish(null, null, error.message));
    child.once('exit', (code, signal) => {
      exited = true;
      const late = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(code, signal, null);
      }, PIPES_AFTER_EXIT_MS);
      child.once('close', () => {
        clearTimeout(late);
        finish(code, signal, null);
      });
    });
  });
}
