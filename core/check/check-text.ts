import { CHECK_NAMES, type CheckReport, type CheckResult, type CheckStatus, type PlanReport, type Verdict } from './check-model';

/** The mark each status carries: a tick only for what ran and passed. */
export const STATUS_MARK: Record<CheckStatus, string> = { passed: '✓', failed: '✗', 'could-not-run': '–', off: '·' };
export const STATUS_WORDS: Record<CheckStatus, string> = { passed: 'passed', failed: 'failed', 'could-not-run': 'could not run', off: 'off' };
const VERDICT_WORDS: Record<Verdict, string> = { passed: 'passed', failed: 'failed', incomplete: 'incomplete', 'nothing-ran': 'nothing ran' };

const NAME_WIDTH = Math.max(...CHECK_NAMES.map((n) => n.length));

/** How long, as a person says it. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

/** One check on one line: its mark, its name, and its finding or reason. */
export function checkLine(c: CheckResult): string {
  const status = c.status === 'passed' || c.status === 'failed' ? '' : `${STATUS_WORDS[c.status]}: `;
  return `${STATUS_MARK[c.status]} ${c.check.padEnd(NAME_WIDTH)}  ${status}${c.summary}${c.ms !== null ? ` (${formatDuration(c.ms)})` : ''}`;
}

/** A plan's heading: its name and what it came to (for a sample: whether it did what it should). */
export function planHeading(p: PlanReport): string {
  const verdict = p.expectation ? { yes: 'as expected', no: 'NOT as expected', unconfirmed: 'unconfirmed' }[p.expectation.met] : VERDICT_WORDS[p.verdict];
  return `${p.label} — ${verdict} (${formatDuration(p.durationMs)})`;
}

/** Every line of one plan's part of the report. */
export function planLines(p: PlanReport, options: { details?: boolean } = {}): string[] {
  const lines = [planHeading(p)];
  if (p.expectation) lines.push(`  ${p.expectation.words}`);
  for (const c of p.checks) {
    lines.push(`  ${checkLine(c)}`);
    // What failed, and how to allow what could not run (the driver option for the counters, where the tool is looked for).
    if (options.details && (c.status === 'failed' || c.status === 'could-not-run')) for (const d of c.details) lines.push(`      ${d}`);
  }
  return lines;
}

/** The whole report as the CLI prints it: each plan, then the verdict. */
export function reportLines(report: CheckReport, options: { details?: boolean } = {}): string[] {
  return [
    `Checked ${report.plans.length === 1 ? '1 plan' : `${report.plans.length} plans`} ${report.device ? `on ${report.device}` : 'without a GPU'} in ${formatDuration(report.durationMs)}.`,
    '',
    ...report.plans.flatMap((p) => [...planLines(p, options), '']),
    report.headline,
  ];
}
