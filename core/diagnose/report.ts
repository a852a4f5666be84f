import { formatBytes, plural } from '../format';
import type { EnvironmentEvidence, Evidence, RunEvidence, RunKind } from './evidence';
import { placeOf, placeText, verdictSeverity, type Verdict } from './verdict';
import { shortCommand } from './launch-line';
import { durationText } from './diagnosis-view-text';

export type StepKind = 'environment' | RunKind;
/** 'stopped': it started, and the budget or a cancel ended it before the program did. */
export type StepStatus = 'running' | 'done' | 'stopped' | 'could-not-run' | 'not-run';

/** One step of the evidence chain: what ran, what changed in its environment, why, how long, what it found. */
export interface DiagnosisStep {
  kind: StepKind;
  title: string;
  why: string;
  /** The rule that chose it (absent for the first two steps, which always run). */
  rule: string | null;
  argv: string[];
  envChanges: Record<string, string>;
  status: StepStatus;
  durationMs: number | null;
  findings: string[];
}

export interface DiagnosisReport {
  schema: 1;
  /** The host's name for a report it holds (to export it without the renderer sending it back); absent in files. */
  id?: string;
  program: { argv: string[]; cwd: string; envChanges: Record<string, string>; thorough: boolean };
  startedAt: string;
  durationMs: number;
  budgetMs: number;
  verdict: Verdict;
  steps: DiagnosisStep[];
  evidence: Evidence;
  /** Sanitizer passes offered after a clean run that was not --thorough. */
  offered: RunKind[];
}

/** What a diagnosis streams while it works: each step as it starts and ends, and the program's output as it comes. */
export type DiagnoseEvent =
  | { kind: 'step-started'; index: number; step: DiagnosisStep }
  | { kind: 'output'; index: number; stream: 'stdout' | 'stderr'; text: string }
  | { kind: 'step-finished'; index: number; step: DiagnosisStep };

export const STEP_TITLES: Record<StepKind, string> = {
  environment: 'The environment as the program will see it',
  'as-is': 'Run it as it is',
  blocking: 'Re-run with CUDA_LAUNCH_BLOCKING=1',
  memcheck: 'Re-run under compute-sanitizer memcheck',
  racecheck: 'Re-run under compute-sanitizer racecheck',
  initcheck: 'Re-run under compute-sanitizer initcheck',
  'fault-handler': "Re-run with Python's fault handler",
  'allocator-history': "Re-run with PyTorch's allocator history recorded",
};

/** What a run found, in sentences: built here, in one place, for the CLI, the view and bundles. */
export function runFindings(run: RunEvidence): string[] {
  const f = run.failure;
  const out: string[] = [];
  const at = f.userFrame ? ` at ${placeText(placeOf(f.userFrame)!)}` : '';
  if (run.sanitizer) {
    if (run.sanitizer.unavailable) return [`${run.kind} could not run: ${run.sanitizer.unavailable}`];
    out.push(run.sanitizer.headline);
    for (const g of run.sanitizer.groups.slice(0, 5)) out.push(g.text);
    if (run.sanitizer.groups.length > 5) out.push(`…and ${plural(run.sanitizer.groups.length - 5, 'more place')}.`);
  } else if (f.category === 'clean') out.push(`It ${f.exitText}.`);
  else out.push(`${f.title}${f.category === 'host-crash' || f.category === 'exit-code' || f.category === 'stopped' ? '' : ` — it ${f.exitText}`}${at}.`);
  if (run.kind === 'blocking' && f.userFrame) out.push(`With every launch waiting for its kernel, the traceback stops at ${placeText(placeOf(f.userFrame)!)}.`);
  if (run.kind === 'fault-handler')
    out.push(
      f.userFrame
        ? `Python was running ${placeText(placeOf(f.userFrame)!)}${f.innermost ? ` (in ${f.innermost.function})` : ''} when the signal came.`
        : 'The fault handler printed no line of the program.',
    );
  if (run.oomPicture) {
    const p = run.oomPicture;
    if (p.missing) out.push(`No allocator history: ${p.missing}`);
    else if (!p.aliveByLine.length) out.push('At the failure PyTorch held nothing in tensors: the memory was taken outside its allocator.');
    else
      out.push(
        `At the failure PyTorch held ${p.allocatedBytes !== null ? formatBytes(p.allocatedBytes) : '?'} in tensors: ${p.aliveByLine
          .slice(0, 4)
          .map((a) => `${formatBytes(a.bytes)} from ${a.frame ? `${a.frame.file.split('/').pop()}:${a.frame.line}` : 'an unrecorded line'}`)
          .join(', ')}.`,
      );
  }
  const others = (run.processes ?? []).filter((p) => !p.isProgram && p.peakBytes > 0);
  for (const p of others.slice(0, 3))
    out.push(
      `PID ${p.pid} (${p.childOfProgram ? 'a child of the program' : 'another process'}${p.command ? `: ${shortCommand(p.command)}` : ''}) held up to ${formatBytes(p.peakBytes)}.`,
    );
  if (run.memory) out.push(`The device's memory in use peaked at ${formatBytes(run.memory.peakUsedBytes)} of ${formatBytes(run.memory.totalBytes)}.`);
  out.push(...(run.watchProblems ?? []));
  out.push(`Took ${durationText(run.durationMs)}.`);
  return out;
}

/** What the Before step found, in sentences: the GPUs and driver, the libraries, what already holds the GPUs, the checks. */
export function environmentFindings(env: EnvironmentEvidence): string[] {
  const out: string[] = [];
  if (env.gpus)
    out.push(
      `${plural(env.gpus.length, 'GPU')}: ${env.gpus.map((g) => `${g.index} ${g.name}`).join(', ')}; driver ${env.driver?.version ?? '?'} (CUDA ${env.driver?.cuda ?? '?'}).`,
    );
  const lib = (name: string, l: { version: string | null; cuda: string | null } | null) => (l ? `, ${name} ${l.version ?? '?'} (CUDA ${l.cuda ?? '?'})` : '');
  if (env.python) out.push(`Python ${env.python.version}${lib('PyTorch', env.python.torch)}${lib('CuPy', env.python.cupy)}.`);
  for (const p of env.processes)
    out.push(
      `Already on GPU ${p.device}: PID ${p.pid}${p.command ? ` (${shortCommand(p.command)})` : ''}${p.usedBytes !== null ? `, ${formatBytes(p.usedBytes)}` : ''}.`,
    );
  for (const c of env.checks) out.push(`${c.status === 'fail' ? '✗' : '!'} ${c.title}: ${c.detail}`);
  out.push(...env.problems);
  if (!env.checks.length && env.gpus && !env.problems.length) out.push('Nothing in the environment stands in the way.');
  return out;
}

/** The report as text, for the CLI. */
export function reportLines(r: DiagnosisReport): string[] {
  const v = r.verdict;
  const lines = [`${verdictSeverity(v.kind).mark} ${v.sentence}`, ''];
  if (v.userLine) lines.push(`  Your line:  ${v.userLine.file}:${v.userLine.line}${v.userLine.code ? `  ${v.userLine.code}` : ''}`);
  if (v.misleadingLine) lines.push(`  (the first run's traceback blamed ${v.misleadingLine.file}:${v.misleadingLine.line}, a later call)`);
  if (v.kernel) lines.push(`  Kernel:     ${v.kernel.name}${v.kernel.file ? ` at ${v.kernel.file}${v.kernel.line ? `:${v.kernel.line}` : ''}` : ''}`);
  lines.push(`  Cause:      ${v.cause}`);
  for (const todo of v.whatToDo) lines.push(`  What to do: ${todo}`);
  lines.push('', 'How it was found:');
  r.steps.forEach((s, i) => {
    const env = Object.entries(s.envChanges).map(([k, val]) => `${k}=${val}`);
    lines.push(
      `  ${i + 1}. ${s.title}${s.durationMs !== null ? ` (${durationText(s.durationMs)})` : ''}${s.status === 'done' ? '' : ` — ${s.status.replace(/-/g, ' ')}`}`,
    );
    if (s.why) lines.push(`     Why: ${s.why}`);
    if (s.argv.length) lines.push(`     Ran: ${env.length ? `${env.join(' ')} ` : ''}${s.argv.join(' ')}`);
    for (const f of s.findings) lines.push(`     · ${f}`);
  });
  if (r.offered.length) lines.push('', `Not run (offered): ${r.offered.join(', ')} — add --thorough to run them.`);
  const notDone = r.evidence.notRun;
  if (notDone.length) lines.push('', 'Not done:', ...notDone.map((n) => `  · ${STEP_TITLES[n.kind]}: ${n.reason}`));
  return lines;
}
