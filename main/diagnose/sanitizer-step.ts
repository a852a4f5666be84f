import type { RunEvidence, SanitizerRunKind } from '../../core/diagnose/evidence';
import { readFailure } from '../../core/diagnose/read-failure';
import { sanitizeProgram, SanitizerUnavailableError } from '../tools/sanitize-program';
import type { Diagnosis } from './diagnose-service';

/** The program under one compute-sanitizer tool, through the same service `gpu-workbench sanitize` uses. */
export async function runSanitizerStep(kind: SanitizerRunKind, d: Diagnosis, env: NodeJS.ProcessEnv): Promise<RunEvidence> {
  const started = performance.now();
  const base = { kind, argv: d.request.argv, envChanges: {}, oomPicture: null, processes: null, memory: null };
  try {
    const report = await sanitizeProgram({
      tool: kind,
      command: d.request.argv,
      cwd: d.request.cwd,
      env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
      options: { leakCheck: kind === 'memcheck', printLimit: 1000 },
      timeoutMs: Math.max(1, d.remaining()),
      signal: d.request.signal,
    });
    const exit = { code: report.exitCode, signal: report.signal, outOfBudget: report.verdict === 'timed-out', cancelled: report.verdict === 'cancelled' };
    return {
      ...base,
      exit,
      durationMs: report.durationMs,
      output: report.programOutput,
      outputDroppedBytes: report.outputDroppedBytes,
      failure: readFailure(report.programOutput, exit, true),
      sanitizer: {
        verdict: report.verdict,
        headline: report.headline,
        groups: report.groups,
        unavailable: report.verdict === 'tool-failed' ? (report.details[0] ?? report.headline) : null,
      },
    };
  } catch (error) {
    const unavailable =
      error instanceof SanitizerUnavailableError ? error.message : `compute-sanitizer failed: ${error instanceof Error ? error.message : String(error)}`;
    const exit = { code: null, signal: null, outOfBudget: false, cancelled: !!d.request.signal?.aborted };
    return {
      ...base,
      exit,
      durationMs: performance.now() - started,
      output: '',
      outputDroppedBytes: 0,
      failure: readFailure('', exit, true),
      sanitizer: { verdict: 'tool-failed', headline: unavailable, groups: [], unavailable },
    };
  }
}
