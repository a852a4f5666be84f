import { spawn } from 'node:child_process';

import type { AbortLike } from '../../core/api/channels';
import { groupLeaderHandle } from '../process/launcher';
import { GROUP_REAPER } from '../process/sanitizer-launcher';
import { BoundedOutput } from './bounded-output';

export interface ToolProgramRun {
  code: number | null;
  signal: string | null;
  timedOut: { afterMs: number } | null;
  cancelled: boolean;
  output: BoundedOutput;
}

/** How long a tool asked to stop may take to write its report before it is killed. */
const STOP_GRACE_MS = 5_000;
/** After the tool's exit, how long its pipes may stay open (held by a process that left its group). */
const PIPES_AFTER_EXIT_MS = 2_000;

/**
 * Runs a CUDA tool (compute-sanitizer, ncu) leading a program the user gave: the tool leads a process group of its own with a reaper in
 * it tied to the host, so the program dies with the host; a timeout or an abort stops the whole group (SIGTERM, then
 * SIGKILL after a grace). The output is kept bounded and streamed as it comes.
 */
export function runToolProgram(
  toolPath: string,
  args: string[],
  options: {
    name: string;
    cwd: string;
    env: NodeJS.ProcessEnv;
    timeoutMs: number;
    /** How long the tool may take to write its report after a stop before it is killed. */
    stopGraceMs?: number;
    signal?: AbortLike;
    onOutput?: (text: string, stream: 'stdout' | 'stderr') => void;
    /** Each chunk as it came (a counter of findings reads them). */
    onChunk?: (chunk: Buffer) => void;
  },
): Promise<ToolProgramRun> {
  // The one handle of a child that leads its group: after its exit only the group is signalled, never a reused pid.
  const child = spawn('/bin/sh', ['-c', GROUP_REAPER, options.name, toolPath, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const handle = groupLeaderHandle(child, child.stdio[3]);
  const output = new BoundedOutput();
  const onData = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    options.onOutput?.(chunk.toString('utf8'), stream);
    output.push(chunk);
    options.onChunk?.(chunk);
  };
  child.stdout!.on('data', onData('stdout'));
  child.stderr!.on('data', onData('stderr'));
  let timedOut: { afterMs: number } | null = null;
  let cancelled = false;
  let exited = false;
  const stop = () => {
    handle.kill('SIGTERM');
    setTimeout(() => handle.kill('SIGKILL'), options.stopGraceMs ?? STOP_GRACE_MS).unref();
  };
  const watchdog = setTimeout(() => {
    timedOut = { afterMs: options.timeoutMs };
    stop();
  }, options.timeoutMs);
  const onAbort = () => {
    if (exited) return;
    cancelled = true;
    stop();
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  return new Promise((resolve, reject) => {
    child.on('error', (error) => {
      clearTimeout(watchdog);
      reject(new Error(`${options.name} could not be started: ${error.message}`));
    });
    child.on('exit', (code, signal) => {
      exited = true;
      clearTimeout(watchdog);
      // The pipes close once all that holds them is gone; a process that left the group (a daemon it started) may hold
      // them for ever: what came by then is what there is.
      const done = () => resolve({ code, signal, timedOut, cancelled, output });
      const late = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        done();
      }, PIPES_AFTER_EXIT_MS);
      child.once('close', () => {
        clearTimeout(late);
        done();
      });
    });
  });
}
