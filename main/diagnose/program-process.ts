import type { AbortLike } from '../../core/api/channels';
import type { ExitStatus } from '../../core/diagnose/evidence';
import { programArgv } from '../../core/process/argument-words';
import { runInOwnGroup } from '../process/group-program';

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
 * Runs a program once, as `exec "$@"` would (argv as words), in a process group of its own tied to the host
 * (main/process/group-program.ts). Its output streams to `onOutput` and is kept, bounded.
 */
export async function runProgramOnce(options: ProgramRunOptions): Promise<ProgramRunResult> {
  const run = await runInOwnGroup({
    name: 'gpu-workbench-diagnose',
    argv: programArgv(options.argv),
    cwd: options.cwd,
    env: options.env,
    timeoutMs: options.timeoutMs,
    stopGraceMs: PROGRAM_STOP_GRACE_MS,
    pipesAfterExitMs: PIPES_AFTER_EXIT_MS,
    signal: options.signal,
    onOutput: options.onOutput,
    onStart: options.onStart,
  });
  return {
    pid: run.pid,
    exit: { code: run.code, signal: run.signal, outOfBudget: run.timedOut, cancelled: run.cancelled },
    output: run.output.text(),
    droppedBytes: run.output.droppedBytes,
    durationMs: run.durationMs,
    spawnError: run.spawnError,
  };
}
