import type { AbortLike } from '../../core/api/channels';
import { runInOwnGroup } from '../process/group-program';
import type { BoundedOutput } from './bounded-output';

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
 * Runs a CUDA tool (compute-sanitizer, ncu) leading a program the user gave, in a process group of its own tied to
 * the host (main/process/group-program.ts); a tool that cannot be started is an error that says so.
 */
export async function runToolProgram(
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
  const run = await runInOwnGroup({
    ...options,
    argv: [toolPath, ...args],
    stopGraceMs: options.stopGraceMs ?? STOP_GRACE_MS,
    pipesAfterExitMs: PIPES_AFTER_EXIT_MS,
  });
  if (run.spawnError !== null) throw new Error(`${options.name} could not be started: ${run.spawnError}`);
  return { code: run.code, signal: run.signal, timedOut: run.timedOut ? { afterMs: options.timeoutMs } : null, cancelled: run.cancelled, output: run.output };
}
