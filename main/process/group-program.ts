import { spawn } from 'node:child_process';

import type { AbortLike } from '../../core/api/channels';
import { BoundedOutput } from '../tools/bounded-output';
import { groupLeaderHandle } from './launcher';
import { GROUP_REAPER } from './sanitizer-launcher';

export interface GroupProgramOptions {
  /** The name its shell shows in `ps` (gpu-workbench-…). */
  name: string;
  /** The program and its arguments as words: `exec "$@"`, never a shell's parsing. */
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The whole group is stopped after this long. */
  timeoutMs: number;
  /** Between SIGTERM to the group and SIGKILL, on a timeout or an abort. */
  stopGraceMs: number;
  /** After the program's exit, how long its pipes may stay open (held by a process that left its group). */
  pipesAfterExitMs: number;
  signal?: AbortLike;
  onOutput?: (text: string, stream: 'stdout' | 'stderr') => void;
  /** Each chunk as it came (a counter of findings reads them). */
  onChunk?: (chunk: Buffer) => void;
  onStart?: (pid: number) => void;
}

export interface GroupProgramRun {
  pid: number | null;
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Stopped by the caller's signal before the timeout stopped it (the first cause is the one reported). */
  cancelled: boolean;
  output: BoundedOutput;
  durationMs: number;
  /** Why it could not be started (spawn's error), or null. */
  spawnError: string | null;
}

/**
 * Runs a program leading a process group of its own beside a reaper tied to this process (GROUP_REAPER), so that a
 * stop reaches everything it started and it all dies with the host, even a host killed with SIGKILL; a timeout or an
 * abort stops the whole group (SIGTERM, then SIGKILL after a grace). Its output streams as it comes and is kept,
 * bounded. After its exit only the group is signalled, never a pid that may have been reused.
 */
export function runInOwnGroup(options: GroupProgramOptions): Promise<GroupProgramRun> {
  const started = performance.now();
  const child = spawn('/bin/sh', ['-c', GROUP_REAPER, options.name, ...options.argv], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const handle = groupLeaderHandle(child, child.stdio[3]);
  const output = new BoundedOutput();
  const onData = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    output.push(chunk);
    options.onOutput?.(chunk.toString('utf8'), stream);
    options.onChunk?.(chunk);
  };
  child.stdout!.on('data', onData('stdout'));
  child.stderr!.on('data', onData('stderr'));
  if (child.pid !== undefined) options.onStart?.(child.pid);

  let timedOut = false;
  let cancelled = false;
  let exited = false;
  const stop = () => {
    if (exited) return;
    handle.kill('SIGTERM');
    setTimeout(() => handle.kill('SIGKILL'), options.stopGraceMs).unref();
  };
  // The first cause is the one reported: a cancel is not turned into a timeout by the watchdog firing in its grace.
  const watchdog = setTimeout(
    () => {
      if (cancelled) return;
      timedOut = true;
      stop();
    },
    Math.max(0, options.timeoutMs),
  );
  const onAbort = () => {
    if (exited || timedOut) return;
    cancelled = true;
    clearTimeout(watchdog);
    stop();
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  return new Promise((resolve) => {
    const finish = (code: number | null, signal: string | null, spawnError: string | null) => {
      clearTimeout(watchdog);
      // A signal that outlives this run (a diagnosis's, over all its steps) must not keep it alive.
      options.signal?.removeEventListener?.('abort', onAbort);
      resolve({
        pid: child.pid ?? null,
        code,
        signal,
        timedOut,
        cancelled,
        output,
        durationMs: performance.now() - started,
        spawnError,
      });
    };
    child.once('error', (error) => finish(null, null, error.message));
    child.once('exit', (code, signal) => {
      exited = true;
      clearTimeout(watchdog);
      // The pipes close once all that holds them is gone; a process that left the group (a daemon it started) may hold
      // them for ever: what came by then is what there is.
      const late = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(code, signal, null);
      }, options.pipesAfterExitMs);
      child.once('close', () => {
        clearTimeout(late);
        finish(code, signal, null);
      });
    });
  });
}
