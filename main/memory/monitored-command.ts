import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

import { programArgv } from '../../core/process/argument-words';
import { groupLeaderHandle, type ChildHandle } from '../process/launcher';
import { GROUP_REAPER } from '../process/sanitizer-launcher';

/** Between SIGTERM to the command's group and SIGKILL: time for a training script to save and leave. */
export const COMMAND_STOP_GRACE_MS = 3_000;

export class CommandNotFoundError extends Error {
  override readonly name = 'CommandNotFoundError';
}

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/**
 * Where the program would be found (as `exec` finds it: a path as given, else the first match on PATH), or why not.
 * A name beginning with - is a file in `cwd`, as programArgv runs it.
 */
export function locateProgram(program: string, cwd: string, path = process.env['PATH'] ?? ''): string {
  if (!program) throw new CommandNotFoundError('No program to run: give it after `--`.');
  if (program.includes('/') || program.startsWith('-')) {
    const full = isAbsolute(program) ? program : resolve(cwd, program);
    if (!executable(full)) throw new CommandNotFoundError(`${program} is not an executable file (looked at ${full}).`);
    return full;
  }
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const candidate = join(isAbsolute(dir) ? dir : resolve(cwd, dir), program);
    if (executable(candidate)) return candidate;
  }
  throw new CommandNotFoundError(`${program} was not found on PATH (${path || 'empty'}). Give its full path, or check the spelling.`);
}

/**
 * A program the monitor starts and watches: argv as given (never through a shell's parsing: `exec "$@"`),
 * with the monitor's own terminal (stdio inherited), leading a process group of its own beside a reaper tied
 * to the host (main/process/sanitizer-launcher.ts's GROUP_REAPER), so a stop reaches everything it started
 * and it all dies with the host, even a host killed with SIGKILL. The shell execs the program, so its pid is
 * the program's.
 */
export class MonitoredCommand {
  readonly pid: number;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  private readonly handle: ChildHandle;
  private hasExited = false;

  private constructor(argv: string[], cwd: string, onExit: () => void, stdoutToStderr: boolean) {
    const child = spawn('/bin/sh', ['-c', GROUP_REAPER, 'gpu-workbench-monitor', ...programArgv(argv)], {
      cwd,
      stdio: ['inherit', stdoutToStderr ? 2 : 'inherit', 'inherit', 'pipe'],
      detached: true,
    });
    // Before the handle's own listener, which kills the group: what the program left running is looked at first.
    child.once('exit', () => {
      this.hasExited = true;
      onExit();
    });
    this.handle = groupLeaderHandle(child, child.stdio[3]);
    if (child.pid === undefined) throw new CommandNotFoundError(`${argv[0]} could not be started.`);
    this.pid = child.pid;
    this.exited = new Promise((resolveExit) => {
      child.once('exit', (code, signal) => resolveExit({ code, signal }));
      child.once('error', () => resolveExit({ code: null, signal: null }));
    });
  }

  /**
   * Starts argv in cwd, after checking the program exists (a missing one is the caller's mistake, said
   * before anything starts). `onExit` runs synchronously when it exits, before its group is killed.
   * `stdoutToStderr`: its standard output goes to the monitor's standard error (so a --json report has
   * standard output to itself).
   */
  static start(argv: string[], cwd: string, onExit: () => void = () => undefined, stdoutToStderr = false): MonitoredCommand {
    locateProgram(argv[0] ?? '', cwd);
    return new MonitoredCommand(argv, cwd, onExit, stdoutToStderr);
  }

  get running(): boolean {
    return !this.hasExited;
  }

  /** SIGTERM to its group, SIGKILL after the grace; resolves once it has exited. */
  async stop(graceMs = COMMAND_STOP_GRACE_MS): Promise<void> {
    if (this.hasExited) return;
    this.handle.kill('SIGTERM');
    const timer = setTimeout(() => this.handle.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  kill(): void {
    this.handle.kill('SIGKILL');
  }
}
