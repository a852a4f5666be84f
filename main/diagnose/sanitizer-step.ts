import type { RunEvidence, SanitizerEvidence, SanitizerRunKind } from '../../core/diagnose/evidence';
import { rawKernelLaunchLine } from '../../core/diagnose/launch-line';
import { readFailure } from '../../core/diagnose/read-failure';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { readRegularFile } from '../services/safe-fs';
import { sanitizeProgram, SanitizerUnavailableError } from '../tools/sanitize-program';
import type { Diagnosis } from './diagnose-service';
import { OutputStreamer } from './output-streamer';

/** A Python file read to find a kernel's launch, at most. */
const PYTHON_FILE_MAX_BYTES = 4 * 2 ** 20;

/** For groups the tool gave no host stack (racecheck, initcheck), the one call of their CuPy kernel in the user's file. */
async function launchLinesOf(report: SanitizeReport): Promise<SanitizerEvidence['launchLines']> {
  const out: SanitizerEvidence['launchLines'] = [];
  for (const g of report.groups) {
    if (g.userFrame || !g.sourceMapped || !g.where) continue;
    const text = await readRegularFile(g.sourceMapped.file, PYTHON_FILE_MAX_BYTES)
      .then((r) => r.bytes.toString('utf8'))
      .catch(() => null);
    const line = text === null ? null : rawKernelLaunchLine(text, g.where.func);
    if (line !== null) out.push({ key: g.key, file: g.sourceMapped.file, line });
  }
  return out;
}

/** The tool could not watch the program: it failed and never printed its summary. A crash under it is still watched. */
const toolNeverWatched = (report: SanitizeReport) => report.verdict === 'tool-failed' && report.summary.errorsReported === null;

/** The program under one compute-sanitizer tool, through the same service `gpu-workbench sanitize` uses. */
export async function runSanitizerStep(kind: SanitizerRunKind, d: Diagnosis, env: NodeJS.ProcessEnv, index: number): Promise<RunEvidence> {
  const streamer = new OutputStreamer((text, stream) => d.request.onEvent?.({ kind: 'output', index, stream, text }));
  const started = performance.now();
  // Until the tool starts, the user's command; then what really ran: the tool, its options, the program, and the
  // variables the workbench set for it (a CuPy program's kernel cache of the run's own).
  const base = { kind, argv: d.request.argv, envChanges: {} as Record<string, string>, oomPicture: null, processes: null, memory: null, watchProblems: [] };
  try {
    const report = await sanitizeProgram({
      tool: kind,
      command: d.request.argv,
      cwd: d.request.cwd,
      env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
      options: { leakCheck: kind === 'memcheck', printLimit: 1000 },
      timeoutMs: Math.max(1, d.remaining()),
      signal: d.request.signal,
      onOutput: (text, stream) => streamer.push(text, stream),
      onStart: (ran) => {
        base.argv = ran.argv;
        base.envChanges = ran.envChanges;
        // Said with the step's end (an event now would announce the running step as finished).
        Object.assign(d.steps[index]!, { argv: ran.argv, envChanges: { ...d.steps[index]!.envChanges, ...ran.envChanges } });
      },
    });
    streamer.flush();
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
        unavailable: toolNeverWatched(report) ? (report.details[0] ?? report.headline) : null,
        launchLines: await launchLinesOf(report),
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
      sanitizer: { verdict: 'tool-failed', headline: unavailable, groups: [], unavailable, launchLines: [] },
    };
  }
}
