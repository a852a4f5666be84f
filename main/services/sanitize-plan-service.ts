import type { AbortLike, SanitizeEvent } from '../../core/api/channels';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import { emptySummary } from '../../core/sanitizer/parse-text';
import { nameFindingAddress } from '../../core/sanitizer/name-address';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { DEFAULT_SANITIZER_OPTIONS, type SanitizerOptions } from '../../core/sanitizer/sanitizer-args';
import type { CompileService } from '../compile/compile-service';
import { checkedToolNode } from '../process/tool-node';
import { findingCounter } from '../tools/finding-counter';
import { locateComputeSanitizer } from '../tools/compute-sanitizer';
import { collectReport, requireSanitizer, SanitizerUnavailableError } from '../tools/sanitize-program';
import { STICKY_EXIT_CODE } from '../../core/runner/protocol';
import { HOST_PROGRAM_CHECKS } from '../../core/runner/run-choice';
import { runPlan, type RunOutcome } from './run-service';
import { SanitizedRunner, type SanitizedRunnerSpec, type SanitizerSpares } from './sanitized-runner';

export interface SanitizePlanRequest {
  plan: unknown;
  planPath: string | null;
  tool: SanitizerTool;
  options?: Partial<Omit<SanitizerOptions, 'tool'>>;
  /** The run's own limit under the tool (instrumented runs are 10–100× slower): 10 minutes by default. */
  timeoutMs?: number;
  arch?: string;
  signal?: AbortLike;
  /** Progress: the run's phases, and the findings the tool has printed so far. */
  onEvent?: (event: SanitizeEvent) => void;
  /** For the bench's breakdown: the runner has left and the tool has ended (its report written). */
  onToolEnded?: () => void;
}

/**
 * Runs a plan under compute-sanitizer: the kernels compiled as for any run (NVRTC and nvcc both with
 * -lineinfo), then a runner of its own as the tool's target (the spare `spares` holds, when it was started for the
 * same tool, options and device; then a new spare starts for the next run). The plan runs as a host program would:
 * buffers of exactly their size (guard bytes would take an overrun for an access in bounds, and hide it from
 * memcheck), no poison (initcheck would count it as written), no second run. The runner leaves when the run
 * is done, so the tool writes its report; each finding's address is then named against the plan's buffers.
 */
export async function sanitizePlan(
  request: SanitizePlanRequest,
  compiler: CompileService,
  spares: SanitizerSpares | null = null,
): Promise<{ outcome: RunOutcome; report: SanitizeReport }> {
  const sanitizer = requireSanitizer();
  const node = await checkedToolNode();
  if ('problem' in node) throw new SanitizerUnavailableError(node.problem);
  const spec: SanitizedRunnerSpec = {
    sanitizerPath: sanitizer.path,
    options: { ...DEFAULT_SANITIZER_OPTIONS, ...request.options, tool: request.tool },
    nodePath: node.path,
    ordinal: deviceNamed(request.plan),
  };
  const sanitized = (spare: SanitizedRunner | null) => runUnderTool(request, compiler, spec, sanitizer, spare);
  if (!spares) return sanitized(null);
  // The next run's runner starts once this one is over: after a run that got to its runner, or a plan that did not
  // compile (it will be fixed and run again); not after a cancel, nor where there was no device to run on.
  return spares.during(spec, sanitized, ({ outcome }) => (reachedRun(outcome) || outcome.status === 'compile-error') && outcome.status !== 'cancelled');
}

/** One plan run on `spare` or on a runner started for it, the tool's report read, the runner gone. */
async function runUnderTool(
  request: SanitizePlanRequest,
  compiler: CompileService,
  spec: SanitizedRunnerSpec,
  sanitizer: { path: string; version: Promise<string | null> },
  spare: SanitizedRunner | null,
): Promise<{ outcome: RunOutcome; report: SanitizeReport }> {
  const started = performance.now();
  const count = findingCounter(request.tool, (n) => request.onEvent?.({ kind: 'findings', count: n }));
  const runner = spare ?? (await SanitizedRunner.start(spec));
  try {
    runner.attach(count);
    const reader = runner.reportsReader(request.tool);
    const plan = asHostProgram(request.plan);
    const outcome = await runPlan(
      plan,
      { compiler, pool: runner.pool },
      {
        timeoutMs: request.timeoutMs ?? 600_000,
        planPath: request.planPath,
        signal: request.signal,
        arch: request.arch,
        onPhase: (phase) => request.onEvent?.({ kind: 'phase', phase }),
        prestartRunner: true,
      },
    );
    // The runner leaves, and the tool writes its report on the way out: only then is there XML to read.
    await runner.leave();
    request.onToolEnded?.();
    // Started beside the compile, the runner under the tool may have opened a context for a plan that then never ran
    // (it did not compile, its device was missing): that report saw nothing of the plan, and must not be judged clean.
    if (!reachedRun(outcome)) return { outcome, report: notRunReport(request, outcome, sanitizer, started) };
    const report = await collectReport({
      tool: request.tool,
      command: sanitizeCommand(request),
      cwd: process.cwd(),
      sanitizer,
      // The runner leaving after a sticky error is the workbench's own doing (the run's diagnosis says why), not a program's failure.
      exitCode: runner.toolExit.code === STICKY_EXIT_CODE ? 0 : runner.toolExit.code,
      signal: runner.toolExit.signal,
      timedOut: outcome.exit?.kind === 'watchdog' ? { afterMs: request.timeoutMs ?? 600_000 } : null,
      cancelled: outcome.status === 'cancelled',
      started,
      output: runner.output,
      dir: runner.dir,
      runner: true,
      reader,
    });
    const memory = outcome.result?.memory ?? [];
    report.groups = report.groups.map((g) => ({ ...g, addressNamed: nameFindingAddress(g.example, memory)?.sentence ?? null }));
    return { outcome, report };
  } finally {
    await runner.dispose();
  }
}

/**
 * A plain run's diagnosis offers a re-run under `tool` (the UI's Re-run under compute-sanitizer): its runner starts
 * now, as the host's spare, so that re-run does not wait for the tool to attach, Node to start and the context to
 * open. Nothing where the tool or a Node for it is missing (the re-run then says why).
 */
export async function prepareSanitizedRerun(spares: SanitizerSpares, plan: unknown, tool: SanitizerTool): Promise<void> {
  const { path } = locateComputeSanitizer();
  if (!path) return;
  const node = await checkedToolNode();
  if ('problem' in node) return;
  spares.refill({ sanitizerPath: path, options: { ...DEFAULT_SANITIZER_OPTIONS, tool }, nodePath: node.path, ordinal: deviceNamed(plan) });
}

/** The device a plan names, to choose a spare by (the run itself validates the plan): device 0 where it names none. */
function deviceNamed(plan: unknown): number {
  const device = plan && typeof plan === 'object' ? (plan as { device?: unknown }).device : undefined;
  return typeof device === 'number' && Number.isInteger(device) && device >= 0 ? device : 0;
}

/** The command that makes this report again, as the report shows it. */
const sanitizeCommand = (request: SanitizePlanRequest): string[] => [
  'gpu-workbench',
  'sanitize',
  '--tool',
  request.tool,
  ...(request.planPath ? ['--plan', request.planPath] : []),
];

/** Whether the plan got as far as its runner: a result, or the runner's end (a crash, the watchdog). */
const reachedRun = (outcome: RunOutcome): boolean => outcome.result != null || outcome.exit != null;

/** The report of a plan that never ran: the tool checked nothing, and the run's own diagnosis says why. */
function notRunReport(request: SanitizePlanRequest, outcome: RunOutcome, sanitizer: { path: string }, started: number): SanitizeReport {
  const { tool } = request;
  const cancelled = outcome.status === 'cancelled';
  return {
    tool,
    command: sanitizeCommand(request),
    cwd: process.cwd(),
    sanitizer: { path: sanitizer.path, version: null },
    exitCode: null,
    signal: null,
    durationMs: performance.now() - started,
    findings: 0,
    findingsFrom: 'xml',
    groups: [],
    summary: emptySummary(),
    xmlFiles: [],
    programOutput: '',
    toolOutput: '',
    outputDroppedBytes: 0,
    problems: [],
    verdict: cancelled ? 'cancelled' : 'no-cuda',
    headline: cancelled ? `Cancelled: ${tool} was stopped before the plan ran.` : `${tool} checked nothing: the plan never ran.`,
    details: [cancelled ? 'Run it again when you are ready.' : `${outcome.diagnosis.headline} Fix that first, then run it under ${tool} again.`],
  };
}

/**
 * The plan with the host program's checks (core/runner/run-choice.ts): the runner then chooses none of its own
 * checks' plug-ins (no guards, no poison, no determinism or zero-filled replay), so each step runs once and the
 * run costs what the tool costs.
 */
function asHostProgram(plan: unknown): unknown {
  if (!plan || typeof plan !== 'object' || Array.isArray(plan)) return plan;
  const checks = (plan as { checks?: unknown }).checks;
  return { ...plan, checks: { ...(checks && typeof checks === 'object' ? checks : {}), ...HOST_PROGRAM_CHECKS } };
}
