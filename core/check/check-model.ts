/**
 * The `check` gate's report (issue 28): every check an expert makes before shipping a kernel, for each plan — the
 * launch validator, a run with the determinism check, the four compute-sanitizer tools, and the profile's coalescing
 * and occupancy — each passed, failed with its finding in words, or could not run with the reason. Silence is a
 * verdict: a check that could not run is never counted as passed, and a report in which nothing ran says so.
 */

import * as z from 'zod';

import { schemaFor } from '../api/typed-schema';

/** The checks, in the order the report lists them. */
export const CHECK_NAMES = ['validator', 'run', 'determinism', 'memcheck', 'racecheck', 'initcheck', 'synccheck', 'coalescing', 'occupancy'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** What each check is, in a few words (the report's legend, the UI's rows). */
export const CHECK_WORDS: Record<CheckName, string> = {
  validator: 'every launch and buffer against the device',
  run: 'a run to the end, results compared',
  determinism: 'a second run, read-backs compared bit for bit',
  memcheck: 'compute-sanitizer memcheck, with the leak check',
  racecheck: 'compute-sanitizer racecheck: shared-memory hazards',
  initcheck: 'compute-sanitizer initcheck: reads of memory never written',
  synccheck: 'compute-sanitizer synccheck: barriers',
  coalescing: 'sectors per request of each line, by Nsight Compute',
  occupancy: 'achieved occupancy, by Nsight Compute',
};

/**
 * passed and failed are verdicts on evidence; could-not-run says why there is none (no GPU, no tool, a run that never
 * started); off is a check the configuration leaves out.
 */
export type CheckStatus = 'passed' | 'failed' | 'could-not-run' | 'off';

export interface CheckResult {
  check: CheckName;
  status: CheckStatus;
  /** One line: the finding (failed), what was seen (passed), or why not (could-not-run, off). */
  summary: string;
  /** Further lines: every finding, the fix, how to allow what was missing. */
  details: string[];
  /** How long the check took (the work it shares with others counted in each), null when it did not run. */
  ms: number | null;
}

export type SampleVariant = 'broken' | 'fixed';

/**
 * What a failure-gallery sample expects of a variant: its broken variant fails its own check (with its finding); its
 * fixed variant passes every check.
 */
export interface ExpectationResult {
  variant: SampleVariant;
  /** The check the broken variant must fail; null for a fixed variant. */
  check: CheckName | null;
  /** yes: as expected; no: not as expected; unconfirmed: a check it depends on could not run. */
  met: 'yes' | 'no' | 'unconfirmed';
  /** In words: "failed memcheck, as expected", "passed every check", "initcheck could not run: …". */
  words: string;
}

/** Where a plan came from: a plan file, a source file with launch flags, or a gallery sample's variant. */
export type PlanOrigin = { kind: 'plan' } | { kind: 'source' } | { kind: 'sample'; sample: string; variant: SampleVariant };

export interface PlanReport {
  /** As the report names it: the plan file, "oob-off-by-one (broken)", "kernel.cu --kernel scale". */
  label: string;
  planPath: string | null;
  origin: PlanOrigin;
  /** Every check, in CHECK_NAMES order. */
  checks: CheckResult[];
  /** Present for a gallery sample. */
  expectation: ExpectationResult | null;
  /** Where the plan's thresholds and timeouts came from: a gpu-workbench-check.json, or the defaults. */
  configPath: string | null;
  verdict: Verdict;
  durationMs: number;
}

/**
 * passed: every check asked for ran and passed (for a sample: as expected). failed: a check failed (for a sample: not
 * as expected). incomplete: nothing failed, but some check could not run. nothing-ran: no check could run at all.
 */
export type Verdict = 'passed' | 'failed' | 'incomplete' | 'nothing-ran';

export interface CheckReport {
  kind: 'gpu-workbench-check';
  version: 1;
  startedAt: string;
  durationMs: number;
  /** The device the checks ran on, or null where there was none. */
  device: string | null;
  plans: PlanReport[];
  verdict: Verdict;
  /** One sentence: the verdict with its counts. */
  headline: string;
  counts: Record<CheckStatus, number>;
}

const verdictSchema = z.enum(['passed', 'failed', 'incomplete', 'nothing-ran']);
const checkStatusSchema = z.enum(['passed', 'failed', 'could-not-run', 'off']);
const checkName = z.enum(CHECK_NAMES);

/** What check.plan answers (and `gpu-workbench check --json` prints). */
export const checkReportSchema = schemaFor<CheckReport>()(
  z.object({
    kind: z.literal('gpu-workbench-check'),
    version: z.literal(1),
    startedAt: z.string(),
    durationMs: z.number().min(0),
    device: z.string().nullable(),
    plans: z.array(
      z.object({
        label: z.string(),
        planPath: z.string().nullable(),
        origin: z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('plan') }),
          z.object({ kind: z.literal('source') }),
          z.object({ kind: z.literal('sample'), sample: z.string(), variant: z.enum(['broken', 'fixed']) }),
        ]),
        checks: z.array(
          z.object({ check: checkName, status: checkStatusSchema, summary: z.string(), details: z.array(z.string()), ms: z.number().nullable() }),
        ),
        expectation: z
          .object({ variant: z.enum(['broken', 'fixed']), check: checkName.nullable(), met: z.enum(['yes', 'no', 'unconfirmed']), words: z.string() })
          .nullable(),
        configPath: z.string().nullable(),
        verdict: verdictSchema,
        durationMs: z.number().min(0),
      }),
    ),
    verdict: verdictSchema,
    headline: z.string(),
    counts: z.record(checkStatusSchema, z.number().int().min(0)),
  }),
);

/** The exit code of `gpu-workbench check` for each verdict (main/cli/exit-codes.ts holds the same numbers). */
export const VERDICT_EXIT: Record<Verdict, number> = { passed: 0, failed: 1, 'nothing-ran': 2, incomplete: 3 };

const ran = (c: CheckResult) => c.status === 'passed' || c.status === 'failed';

/** A plan's verdict from its checks alone (a plan file, or a fixed variant). */
export function checksVerdict(checks: readonly CheckResult[]): Verdict {
  if (checks.some((c) => c.status === 'failed')) return 'failed';
  if (!checks.some(ran)) return 'nothing-ran';
  return checks.some((c) => c.status === 'could-not-run') ? 'incomplete' : 'passed';
}

/** A plan's verdict: for a sample, whether it did what its expectation says; else its checks'. */
export function planVerdict(checks: readonly CheckResult[], expectation: ExpectationResult | null): Verdict {
  if (!expectation) return checksVerdict(checks);
  if (expectation.met === 'yes') return 'passed';
  if (expectation.met === 'no') return 'failed';
  return checks.some(ran) ? 'incomplete' : 'nothing-ran';
}

/** The whole report's verdict: any plan failed fails it; every plan passed passes it; nothing ran anywhere says so. */
export function reportVerdict(plans: readonly Pick<PlanReport, 'verdict'>[]): Verdict {
  if (plans.some((p) => p.verdict === 'failed')) return 'failed';
  if (plans.length && plans.every((p) => p.verdict === 'passed')) return 'passed';
  if (plans.every((p) => p.verdict === 'nothing-ran')) return 'nothing-ran';
  return 'incomplete';
}

export function countStatuses(plans: readonly Pick<PlanReport, 'checks'>[]): Record<CheckStatus, number> {
  const counts: Record<CheckStatus, number> = { passed: 0, failed: 0, 'could-not-run': 0, off: 0 };
  for (const p of plans) for (const c of p.checks) counts[c.status]++;
  return counts;
}

const plansWord = (n: number) => (n === 1 ? '1 plan' : `${n} plans`);

/** The report's one sentence: what the verdict is and why, never "passed" where something could not run. */
export function reportHeadline(plans: readonly PlanReport[], verdict: Verdict): string {
  const counts = countStatuses(plans);
  const of = (v: Verdict) => plans.filter((p) => p.verdict === v).length;
  const tally = `${counts.passed} passed, ${counts.failed} failed, ${counts['could-not-run']} could not run${counts.off ? `, ${counts.off} off` : ''}`;
  const samples = plans.some((p) => p.expectation);
  switch (verdict) {
    case 'passed':
      return `✓ ${samples ? `Every one of ${plansWord(plans.length)} did what it should` : `Every check passed on ${plansWord(plans.length)}`} (${tally}).`;
    case 'failed':
      return `✗ ${of('failed')} of ${plansWord(plans.length)} ${samples ? 'did not do what it should' : 'failed a check'} (${tally}).`;
    case 'nothing-ran':
      return `Nothing could be checked: no check could run on ${plansWord(plans.length)} (${tally}). This is not a pass.`;
    case 'incomplete':
      return `Incomplete: nothing failed, but ${counts['could-not-run']} ${counts['could-not-run'] === 1 ? 'check' : 'checks'} could not run (${tally}). This is not a pass.`;
  }
}

/** The report of a whole `check`, from its plans. */
export function makeReport(plans: PlanReport[], startedAt: string, durationMs: number, device: string | null): CheckReport {
  const verdict = reportVerdict(plans);
  return {
    kind: 'gpu-workbench-check',
    version: 1,
    startedAt,
    durationMs,
    device,
    plans,
    verdict,
    headline: reportHeadline(plans, verdict),
    counts: countStatuses(plans),
  };
}

/** A check that could not run, with why. */
export const couldNotRun = (check: CheckName, summary: string, details: string[] = []): CheckResult => ({
  check,
  status: 'could-not-run',
  summary,
  details,
  ms: null,
});

/** What a check streams as it goes: each check as it ends, each plan as it ends. */
export type CheckEvent = { kind: 'check'; plan: string; result: CheckResult } | { kind: 'plan'; report: PlanReport; done: number; total: number };
