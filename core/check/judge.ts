import { formatNumber, partOf, plural } from '../format';
import { noCountersMessage } from '../kernel-profile/no-counters';
import type { Profile } from '../kernel-profile/profile';
import { profileFindings, sectorsPerRequest, type ProfileThresholds } from '../kernel-profile/profile-findings';
import type { RunOutcome } from '../runner/run-outcome';
import type { SanitizerTool } from '../sanitizer/findings';
import { describeGroup } from '../sanitizer/group';
import type { SanitizeReport } from '../sanitizer/sanitize-report';
import { launchRefusals, memoryRefusals, type PlanCheck } from '../validate/plan-check';
import { couldNotRun, type CheckName, type CheckResult } from './check-model';

/**
 * Each check's verdict from what its service returned: pure, so the CLI, the UI and the tests judge alike. A verdict
 * needs evidence: a tool that never watched the plan run to its end, or a profile without counters, could not run.
 */

const result = (check: CheckName, status: 'passed' | 'failed', summary: string, details: string[] = []): CheckResult => ({
  check,
  status,
  summary,
  details,
  ms: null,
});

/** The statuses of a run that reached the device and ran at least in part. */
const ranOnDevice = (o: RunOutcome) => o.status === 'ok' || o.status === 'cuda-error' || o.status === 'runner-died';

/** Why the plan never ran, in words, from its outcome (null when it ran). */
export function neverRan(o: RunOutcome): string | null {
  if (ranOnDevice(o)) return null;
  if (o.status === 'cancelled') return 'it was cancelled';
  return o.problem ? `${o.problem.title.replace(/\.$/, '')}` : o.diagnosis.headline;
}

export interface ValidatorFacts {
  check: PlanCheck;
  deviceName: string;
  /** Kernels whose compiled resources could not be known (a compile failed, the compiler did not say), with why. */
  unknown: string[];
}

/** The launch validator on the whole plan: every launch and every buffer against the device. */
export function judgeValidator(v: ValidatorFacts): CheckResult {
  const refusals = [...launchRefusals(v.check.launches), ...memoryRefusals(v.check.memory)];
  if (refusals.length) return result('validator', 'failed', `The plan would fail on ${v.deviceName}: ${refusals[0]}`, [...refusals.slice(1), ...v.unknown]);
  if (v.unknown.length)
    return couldNotRun('validator', `Only the device's limits could be checked: ${v.unknown[0]}`, [
      ...v.unknown.slice(1),
      'A launch also needs the kernel’s registers and shared memory to be checked whole.',
    ]);
  const warnings = [
    ...v.check.launches.flatMap((c) => c.findings.filter((f) => f.severity === 'warning').map((f) => `Step ${c.stepIndex + 1} (${c.label}): ${f.message}`)),
    ...v.check.memory.filter((f) => f.severity === 'warning').map((f) => f.message),
  ];
  return result(
    'validator',
    'passed',
    `Every launch (${v.check.launches.length}) and every buffer fits ${v.deviceName}${warnings.length ? `, with ${plural(warnings.length, 'warning')}` : ''}.`,
    warnings,
  );
}

/** The run itself: it ran to the end and its diagnosis found nothing (the determinism check is its own row). */
export function judgeRun(o: RunOutcome): CheckResult {
  const d = o.diagnosis;
  if (o.status === 'unavailable') return couldNotRun('run', o.problem?.title ?? d.headline, o.problem ? [o.problem.detail, o.problem.remedy] : []);
  if (o.status === 'cancelled') return couldNotRun('run', 'The run was cancelled.');
  if (o.status === 'ok' && (d.severity === 'ok' || d.kind === 'nondeterministic'))
    return result(
      'run',
      'passed',
      d.kind === 'nondeterministic' ? 'Ran to the end without an error (its results differ between runs: see determinism).' : d.headline,
    );
  return result('run', 'failed', d.headline, [...d.specifics, ...d.next]);
}

const valueWords = (n: number | null) => formatNumber(n);

/** The determinism check: the launches again on the same inputs, every read-back compared bit for bit. */
export function judgeDeterminism(o: RunOutcome): CheckResult {
  const why = neverRan(o);
  if (why) return couldNotRun('determinism', `The plan never ran: ${why}.`);
  const report = o.result?.checks.determinism;
  if (!o.result) return couldNotRun('determinism', `The run did not finish: ${o.diagnosis.headline}.`);
  if (!report) return couldNotRun('determinism', 'The run reported no determinism check.');
  if (report.status !== 'compared')
    return couldNotRun('determinism', `Not compared with a second run: ${report.reason ?? (report.status === 'off' ? 'turned off' : 'skipped')}.`);
  if (!report.differences.length)
    return result(
      'determinism',
      'passed',
      `${report.runs === 1 ? 'A second run' : `${report.runs} more runs`} on the same inputs gave bit-identical read-backs (${report.ms.toFixed(1)} ms).`,
    );
  const lines = report.differences.map(
    (d) =>
      `${d.buffer} came back different${d.run > 1 ? ` on run ${d.run + 1}` : ''} in ${partOf(d.differing, d.count, 'element')}; the first, [${d.firstIndex}], was ${valueWords(d.first)} and then ${valueWords(d.second)}.`,
  );
  return result('determinism', 'failed', `Results differ between two identical runs: ${lines[0]}`, [
    ...lines.slice(1),
    'A result that changes between identical runs is usually a data race or a read of memory nothing wrote (racecheck and initcheck name the lines); floating-point atomics add in a different order each run.',
  ]);
}

/** One compute-sanitizer tool's run of the plan: found something, found nothing in a whole run, or could not say. */
export function judgeSanitizer(tool: SanitizerTool, report: SanitizeReport, run: RunOutcome): CheckResult {
  if (report.verdict === 'found') {
    const groups = report.groups.filter((g) => !g.heldBy);
    const first = groups[0];
    const sentence = (g: (typeof groups)[number]) => `${describeGroup(g, report.summary)}${g.addressNamed ? ` The address: ${g.addressNamed}.` : ''}`;
    return result(tool, 'failed', first ? `${report.headline} ${sentence(first)}` : report.headline, [
      ...groups.slice(1, 8).map(sentence),
      ...(groups.length > 8 ? [`… and ${plural(groups.length - 8, 'more place')}.`] : []),
    ]);
  }
  const why = neverRan(run);
  if (why) return couldNotRun(tool, `The plan did not run under ${tool}: ${why}.`);
  if (report.verdict === 'clean') {
    if (run.status === 'ok') return result(tool, 'passed', report.headline.replace(/^✓ /, ''), report.details);
    return couldNotRun(tool, `${tool} found nothing in what ran, but the run stopped early: ${run.diagnosis.headline}. What came after was not checked.`);
  }
  return couldNotRun(tool, report.headline, report.details);
}

/** The kernels' profiles for coalescing and occupancy: each profiled launch, or why it has none. */
export type ProfiledLaunch = { entry: string; profile: Profile } | { entry: string; failed: string };

const COUNTERS_MISSING = (entry: string) =>
  `Nsight Compute gave no per-line source counters for ${entry}, so the sectors each line needs are not known (the kernel must be compiled with -lineinfo, which the workbench always adds).`;

/** Why a profile cannot judge coalescing or occupancy, or null when it can. */
function withoutCounters(launch: ProfiledLaunch): { summary: string; details: string[] } | null {
  if ('failed' in launch) return { summary: launch.failed, details: [] };
  const p = launch.profile;
  if (p.counters) return null;
  const words = noCountersMessage(p.noCounters?.reason ?? 'ncu-failed', p.noCounters?.detail ?? '', p.kernel.entry);
  return { summary: words.headline, details: [words.body.replace(/ Still given below:.*$/s, '')] };
}

/** Several kernels' verdicts as one: any failure fails it; else any that could not run makes it could-not-run. */
function combine(check: CheckName, parts: CheckResult[]): CheckResult {
  const failed = parts.filter((p) => p.status === 'failed');
  if (failed.length) return { ...failed[0]!, details: [...failed[0]!.details, ...failed.slice(1).map((f) => f.summary)] };
  const cannot = parts.find((p) => p.status === 'could-not-run');
  if (cannot) return cannot;
  if (parts.length === 1) return parts[0]!;
  return result(
    check,
    'passed',
    parts.map((p) => p.summary).join(' '),
    parts.flatMap((p) => p.details),
  );
}

/** Coalescing: no line of any profiled kernel moves `uncoalescedRatio` times the sectors its accesses need. */
export function judgeCoalescing(launches: ProfiledLaunch[], thresholds: ProfileThresholds): CheckResult {
  if (!launches.length) return couldNotRun('coalescing', 'The plan launches no kernel to profile.');
  return combine(
    'coalescing',
    launches.map((launch) => {
      const missing = withoutCounters(launch);
      if (missing) return couldNotRun('coalescing', missing.summary, missing.details);
      const { profile } = launch as { profile: Profile };
      const c = profile.counters!;
      const problems = profileFindings(profile, thresholds).filter((f) => f.id === 'uncoalesced' && f.severity === 'problem');
      if (problems.length)
        return result('coalescing', 'failed', `${profile.kernel.entry} (${profile.kernel.sourceFile}) ${problems[0]!.headline.replace(/^Line/, 'line')}.`, [
          ...problems.slice(1).map((p) => `${p.headline}.`),
          problems[0]!.detail,
        ]);
      const judged = c.lines.some((l) => (l.loads?.idealSectors ?? 0) > 0 || (l.stores?.idealSectors ?? 0) > 0);
      if (!judged && c.loads.requests + c.stores.requests > 0) return couldNotRun('coalescing', COUNTERS_MISSING(profile.kernel.entry));
      return result(
        'coalescing',
        'passed',
        `${profile.kernel.entry}: no line moves ${thresholds.uncoalescedRatio}× the sectors its accesses need (loads ${sectorsPerRequest(c.loads)}, stores ${sectorsPerRequest(c.stores)} sectors per request).`,
      );
    }),
  );
}

/** Occupancy: each profiled kernel's achieved occupancy against the minimum the config sets (none by default). */
export function judgeOccupancy(launches: ProfiledLaunch[], thresholds: ProfileThresholds): CheckResult {
  if (!launches.length) return couldNotRun('occupancy', 'The plan launches no kernel to profile.');
  return combine(
    'occupancy',
    launches.map((launch) => {
      const missing = withoutCounters(launch);
      if (missing) return couldNotRun('occupancy', missing.summary, missing.details);
      const { profile } = launch as { profile: Profile };
      const finding = profileFindings(profile, thresholds).find((f) => f.id === 'occupancy')!;
      const minimum =
        thresholds.minAchievedOccupancyPct > 0 ? '' : ' (no minimum is set: minAchievedOccupancyPct in gpu-workbench-check.json fails a kernel below it)';
      return result('occupancy', finding.severity === 'problem' ? 'failed' : 'passed', `${profile.kernel.entry}: ${finding.headline}${minimum}.`, [
        finding.detail,
      ]);
    }),
  );
}

/** A check the configuration leaves out. */
export const offCheck = (check: CheckName, configPath: string | null): CheckResult => ({
  check,
  status: 'off',
  summary: `Not asked for: ${configPath ?? 'the configuration'} leaves ${check} out of its checks.`,
  details: [],
  ms: null,
});
