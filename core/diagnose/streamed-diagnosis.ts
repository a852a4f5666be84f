import { plural } from '../format';
import { durationText } from './diagnosis-view-text';
import type { Evidence, ExitStatus, RunEvidence, RunKind } from './evidence';
import { isSanitizerRun } from './evidence';
import { readFailure } from './read-failure';
import { runFindings, type DiagnoseEvent, type DiagnosisReport, type DiagnosisStep } from './report';
import { judge } from './verdict-rules';

/**
 * A diagnosis as its events told it so far (diagnose.program's step-started, output and step-finished): what a view
 * shows while it runs, and what stands as its report when it is cancelled (the host answers a cancelled call with no
 * report). Pure, and immutable: each event gives a new value.
 */
export interface StreamedDiagnosis {
  program: DiagnosisReport['program'];
  startedAt: string;
  budgetMs: number;
  steps: DiagnosisStep[];
  /** Each step's output, by the step's index: its tail, past STREAMED_OUTPUT_LIMIT. */
  output: StreamedOutput[];
  /** When each step started, on the caller's clock (ms). */
  stepStartedMs: number[];
}

export interface StreamedOutput {
  text: string;
  /** Characters cut from the front to keep the tail. */
  droppedChars: number;
}

/** About what a step's output keeps while it streams: its last megabyte, cut at a line start. */
export const STREAMED_OUTPUT_LIMIT = 1024 * 1024;

export function startStreamed(program: DiagnosisReport['program'], budgetMs: number, startedAt: string): StreamedDiagnosis {
  return { program, startedAt, budgetMs, steps: [], output: [], stepStartedMs: [] };
}

/**
 * The output with `text` added, its tail kept once it passes the limit by a quarter (so a stream of small pieces
 * is not copied whole at each), cut to the limit at the next line start when one is near.
 */
export function appendOutput(previous: StreamedOutput | undefined, text: string, limit = STREAMED_OUTPUT_LIMIT): StreamedOutput {
  const joined = (previous?.text ?? '') + text;
  const dropped = previous?.droppedChars ?? 0;
  if (joined.length <= limit * 1.25) return { text: joined, droppedChars: dropped };
  let cut = joined.length - limit;
  const lineStart = joined.indexOf('\n', cut);
  if (lineStart >= 0 && lineStart - cut < Math.min(4096, limit / 4)) cut = lineStart + 1;
  return { text: joined.slice(cut), droppedChars: dropped + cut };
}

const replaced = <T>(list: readonly T[], index: number, value: T): T[] => {
  const next = list.slice();
  next[index] = value;
  return next;
};

/** The diagnosis with one more event in it. */
export function applyDiagnoseEvent(d: StreamedDiagnosis, event: DiagnoseEvent, nowMs: number): StreamedDiagnosis {
  switch (event.kind) {
    case 'step-started':
      return {
        ...d,
        steps: replaced(d.steps, event.index, event.step),
        stepStartedMs: replaced(d.stepStartedMs, event.index, nowMs),
        output: replaced(d.output, event.index, d.output[event.index] ?? { text: '', droppedChars: 0 }),
      };
    case 'step-finished':
      return { ...d, steps: replaced(d.steps, event.index, event.step) };
    case 'output':
      return { ...d, output: replaced(d.output, event.index, appendOutput(d.output[event.index], event.text)) };
  }
}

const STATUS_SAID: Record<DiagnosisStep['status'], string> = {
  running: 'is running',
  done: 'finished',
  'could-not-run': 'could not run',
  stopped: 'was stopped',
  'not-run': 'was not run',
};

/**
 * What the view's polite status line says of an event: nothing for output (it is shown, not read aloud), nor for a
 * step that finished earlier and now says more (the first run's monitor, the environment's Python probe): the step
 * under way keeps the line.
 */
export function stepAnnouncement(event: DiagnoseEvent, before?: Pick<StreamedDiagnosis, 'steps'> | null): string | null {
  if (event.kind === 'output') return null;
  if (event.kind === 'step-finished' && before && before.steps[event.index]?.status !== 'running') return null;
  const n = event.index + 1;
  if (event.kind === 'step-started') return `Step ${n} started: ${event.step.title}.`;
  const took = event.step.durationMs !== null ? `, in ${durationText(event.step.durationMs)}` : '';
  return `Step ${n} ${STATUS_SAID[event.step.status]}${took}: ${event.step.title}.`;
}

/** What was kept of a step's output, said when its head was cut. */
export function droppedOutputNote(droppedChars: number): string | null {
  return droppedChars > 0 ? `The first ${plural(droppedChars, 'character')} of this output are not kept: the last part is shown.` : null;
}

const CANCELLED: ExitStatus = { code: null, signal: null, outOfBudget: false, cancelled: true };
const isRunKind = (kind: DiagnosisStep['kind']): kind is RunKind => kind !== 'environment';

/** The run a step was stopped in, as the host would have recorded it had it answered. */
function stoppedRun(step: DiagnosisStep, output: StreamedOutput | undefined, durationMs: number): RunEvidence {
  const kind = step.kind as RunKind;
  const text = output?.text ?? '';
  return {
    kind,
    argv: step.argv,
    envChanges: step.envChanges,
    exit: CANCELLED,
    durationMs,
    output: text,
    outputDroppedBytes: output?.droppedChars ?? 0,
    failure: readFailure(text, CANCELLED, isSanitizerRun(kind)),
    sanitizer: null,
    oomPicture: null,
    processes: null,
    memory: null,
    watchProblems: [],
  };
}

/**
 * The report of a diagnosis cancelled from the view: the steps as they streamed, the one under way stopped. Cancelled
 * in the first run, the verdict is the host's own (judged from that run); cancelled later, the runs before it are known
 * only by their findings, so the verdict says where it stopped and the steps say what each found.
 */
export function cancelledReport(d: StreamedDiagnosis, nowMs: number, durationMs: number): DiagnosisReport {
  const at = d.steps.findIndex((s) => s.status === 'running');
  const steps = d.steps.slice();
  const runs: RunEvidence[] = [];
  if (at >= 0) {
    const step = d.steps[at]!;
    const took = nowMs - (d.stepStartedMs[at] ?? nowMs);
    if (isRunKind(step.kind)) {
      const run = stoppedRun(step, d.output[at], took);
      runs.push(run);
      steps[at] = { ...step, status: 'done', durationMs: took, findings: runFindings(run) };
    } else steps[at] = { ...step, status: 'done', durationMs: took, findings: ['Cancelled before it finished.'] };
  }
  const evidence: Evidence = {
    argv: d.program.argv,
    python: false,
    thorough: d.program.thorough,
    environment: { checks: [], gpus: null, driver: null, python: null, processes: [], problems: [] },
    runs: runs.filter((r) => r.kind === 'as-is'),
    notRun: [],
  };
  const stoppedStep = at >= 0 ? steps[at]! : null;
  const verdict =
    stoppedStep?.kind === 'as-is' && evidence.runs.length
      ? judge(evidence, d.program)
      : {
          kind: 'stopped' as const,
          rule: 'cancelled',
          sentence: `The diagnosis did not finish: it was cancelled ${stoppedStep ? `during step ${at + 1}, “${stoppedStep.title}”` : 'before its first step'}.`,
          userLine: null,
          misleadingLine: null,
          kernel: null,
          cause: cancelledCause(steps),
          whatToDo: ['Diagnose it again and let it finish; a longer time budget lets every step it calls for run.'],
        };
  return { schema: 1, program: d.program, startedAt: d.startedAt, durationMs, budgetMs: d.budgetMs, verdict, steps, evidence, offered: [] };
}

function cancelledCause(steps: DiagnosisStep[]): string {
  const first = steps.find((s) => s.kind === 'as-is' && s.status === 'done');
  return first?.findings[0]
    ? `The first run had ended (${first.findings[0].replace(/\.$/, '')}); what each step found before the cancel is below.`
    : 'Nothing was found before it stopped.';
}

/** Each step's run in the report's evidence (the environment, and steps not run, have none): matched by kind, in order. */
export function stepRuns(report: Pick<DiagnosisReport, 'steps' | 'evidence'>): (RunEvidence | null)[] {
  const used = new Set<number>();
  return report.steps.map((step) => {
    if (!isRunKind(step.kind) || step.status === 'not-run' || step.status === 'running') return null;
    const i = report.evidence.runs.findIndex((r, j) => !used.has(j) && r.kind === step.kind);
    if (i < 0) return null;
    used.add(i);
    return report.evidence.runs[i]!;
  });
}
