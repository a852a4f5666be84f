/**
 * The run diagnosis as a table of rules in priority order (ARCHITECTURE.md §4b): each rule reads the run's facts
 * and returns a finding or nothing; the first finding wins. Findings hold facts only (which failure, which buffer,
 * which numbers); the sentences a person reads are built from them in one place, diagnosis-sentences.ts.
 */
import { isOutOfMemory, lookupCode, type CatalogEntry } from '../cuda/error-catalog';
import type { Comparison } from '../plan/compare';
import { floatAtomicLines } from '../plan/determinism';
import { isFloatType } from '../plan/element-types';
import type { PoisonScan } from '../plan/poison';
import type { Finding } from '../validate/validate-launch';
import { parseDeviceAsserts, type DeviceAssert } from './device-output';
import type { Diagnosis, DiagnosisInput } from './diagnose';
import type { DeterminismDifference, GuardViolation, PoisonProbe, RunFailure, RunResult, StaleUse, UninitialisedUse } from './run-result';

/** The run's facts as the rules read them: what diagnoseRun was given, and what follows from it at once. */
export interface RunFacts extends DiagnosisInput {
  /** A step of the run by its index, with the label the run shows. */
  stepAt: (index: number | null) => Diagnosis['step'];
  /** A kernel of the plan by its id, with its entry point. */
  kernelOf: (id: string | null) => Diagnosis['kernel'];
  /** The CUDA call that failed, where the run has a result that says so. */
  fault: Fault | null;
}

/** A failed call, where it happened, what the error catalog says of it, and the freed buffers the failing launch was given. */
export interface Fault {
  failure: RunFailure;
  step: Diagnosis['step'];
  kernel: Diagnosis['kernel'];
  entry: CatalogEntry | undefined;
  stale: StaleUse[];
}

type LaunchStep = Extract<NonNullable<DiagnosisInput['plan']>['steps'][number], { op: 'launch' }>;
/** The plan's only launch, when it has exactly one: the one a runner that died must have been running. */
export type OnlyLaunch = { index: number; step: LaunchStep } | null;

/** What the rules found. `kind` is the id of the rule that found it. */
export type RunFinding =
  | { kind: 'could-not-start'; status: 'invalid' | 'compile-error' | 'unavailable' }
  | { kind: 'cancelled' }
  | { kind: 'watchdog'; launch: OnlyLaunch }
  | { kind: 'runner-crashed'; launch: OnlyLaunch }
  | { kind: 'no-result' }
  | { kind: 'out-of-memory'; fault: Fault }
  | { kind: 'invalid-launch-configuration'; fault: Fault; errors: Finding[] }
  | { kind: 'module-load'; fault: Fault }
  | { kind: 'plan-error'; fault: Fault }
  | { kind: 'device-assert'; fault: Fault; asserts: DeviceAssert[] }
  | { kind: 'fault-on-freed-buffer'; fault: Fault; memoryFault: boolean }
  | { kind: 'cuda-error'; fault: Fault; memoryFault: boolean }
  | { kind: 'out-of-bounds-write'; violations: GuardViolation[] }
  | { kind: 'use-after-free'; use: StaleUse }
  | { kind: 'wrong-result-from-unwritten-memory'; comparison: Comparison; use: UninitialisedUse }
  | { kind: 'wrong-result'; comparison: Comparison; downloadStep: number | null }
  | ({ kind: 'unwritten-memory-read-back' } & UnwrittenReadBack)
  | { kind: 'nondeterministic'; difference: DeterminismDifference; atomics: string[] }
  | { kind: 'leak'; leaks: RunResult['leaks'] }
  | { kind: 'ok' };

/** A read-back buffer that holds the poison pattern, or NaN that may come from it, and the evidence for each. */
export interface UnwrittenReadBack {
  buffer: RunResult['buffers'][number];
  poison: PoisonScan;
  float: boolean;
  /** NaN the kernel computed (NaN that is not the poison's own bytes); 0 for an integer buffer. */
  computed: number;
  /** The unwritten launch argument to blame: this buffer's, else the first. */
  read: UninitialisedUse | undefined;
  /** The probe's answer for this buffer (the launches again with unwritten memory zeroed). */
  probed: PoisonProbe['buffers'][number] | undefined;
  /** NaN that zeroing turned into numbers; null where the probe did not run. */
  fromPoison: number | null;
  /** The computed NaN are blamed on the unwritten memory (the probe confirmed it, or could not run). */
  suspect: boolean;
  /** The poison itself came back, or the probe proved the NaN came from it. */
  confirmed: boolean;
  probeReason: string | null;
}

export interface RunRule {
  id: RunFinding['kind'];
  judge: (facts: RunFacts) => RunFinding | null;
}

/** CUDA_ERROR_INVALID_VALUE, cudaErrorInvalidConfiguration, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: what a launch configuration the device cannot run returns. */
const LAUNCH_CONFIG_CODES: ReadonlySet<number> = new Set([1, 9, 701]);
/** CUDA_ERROR_ASSERT: a device-side assert failed. */
const CUDA_ERROR_ASSERT = 710;
/** Illegal address, misaligned address, launch failed, invalid PC, invalid address space, illegal instruction: what memcheck pins to a line. */
const MEMORY_FAULT_CODES: ReadonlySet<number> = new Set([700, 716, 719, 718, 717, 715]);

export function runFacts(input: DiagnosisInput): RunFacts {
  const { result, plan } = input;
  const stepAt = (index: number | null): Diagnosis['step'] => {
    if (index === null || !result) return null;
    const s = result.steps[index];
    return s ? { index, label: s.label, op: s.op } : null;
  };
  const kernelOf = (id: string | null): Diagnosis['kernel'] => {
    if (!id) return null;
    return { id, entry: plan?.kernels.find((k) => k.id === id)?.entry ?? result?.functions.find((f) => f.kernel === id)?.entry ?? id };
  };
  const f = result?.failure;
  const fault = f
    ? {
        failure: f,
        step: stepAt(f.stepIndex),
        kernel: kernelOf(f.kernel),
        entry: f.error.library === 'cuda' ? lookupCode(f.error.code) : undefined,
        stale: result.checks.staleUses.filter((s) => s.stepIndex === f.stepIndex),
      }
    : null;
  return { ...input, stepAt, kernelOf, fault };
}

function onlyLaunch(plan: DiagnosisInput['plan']): OnlyLaunch {
  const launches = plan?.steps.flatMap((step, index) => (step.op === 'launch' ? [{ index, step }] : [])) ?? [];
  return launches.length === 1 ? launches[0]! : null;
}

/** A rule about the failed call: it applies only where the run has one. */
const onFault =
  (judge: (fault: Fault, facts: RunFacts & { result: RunResult }) => RunFinding | null) =>
  (facts: RunFacts): RunFinding | null =>
    facts.fault && facts.result ? judge(facts.fault, { ...facts, result: facts.result }) : null;

/** A rule about the checks of a run that completed: it applies only where the run has a result. */
const onResult =
  (judge: (result: RunResult, facts: RunFacts) => RunFinding | null) =>
  (facts: RunFacts): RunFinding | null =>
    facts.result ? judge(facts.result, facts) : null;

const isCuda = (f: RunFailure) => f.error.library === 'cuda';
const isMemoryFault = (f: RunFailure) => MEMORY_FAULT_CODES.has(f.error.code) && f.op === 'launch';
const firstWrong = (result: RunResult) => result.checks.comparisons.find((c) => c.mismatches > 0);

/** Whether a second run of the same launches on the same inputs came back different. */
const nondeterministic = (result: RunResult) => (result.checks.determinism?.differences.length ?? 0) > 0;

/**
 * The unwritten launches to blame for a wrong read-back, only on evidence that the poison reached it: the
 * compared buffer itself was passed unwritten and still holds the exact poison bytes, or the probe (the
 * launches again with that memory zeroed) turned its NaN into numbers. NaN alone is no evidence: a race
 * reading stale shared memory makes NaN too, even the poison's own bytes (seen on an H100: a tile left by an
 * earlier kernel), and a run that differs from itself is a race first, whatever its read-backs hold.
 */
export function poisonReachedComparison(result: RunResult, buffer: string): UninitialisedUse[] {
  if (nondeterministic(result)) return [];
  const unwritten = result.checks.uninitialised;
  const direct = unwritten.filter((u) => u.buffer === buffer);
  if (direct.length && (result.buffers.find((b) => b.name === buffer)?.poison?.poisonCount ?? 0) > 0) return direct;
  const probe = result.checks.poisonProbe;
  const probed = probe?.status === 'ran' ? probe.buffers.find((b) => b.buffer === buffer) : undefined;
  if (!probed || probed.nanInFirst <= probed.nanWithZeros) return [];
  return direct.length ? direct : unwritten;
}

/** Source lines with atomics, when the buffer that changed holds floating-point values. */
export function floatAtomicsIn(plan: DiagnosisInput['plan'], d: DeterminismDifference): string[] {
  if (!isFloatType(d.type) || !plan) return [];
  return plan.kernels.flatMap((k) => floatAtomicLines(k.source).map((line) => `${k.sourceName}:${line}`));
}

/**
 * The first read-back buffer that holds the poison pattern, or NaN where a kernel computed with it: memory that
 * nothing wrote reached the result. Needs no expectation.
 */
export function unwrittenReadBack(result: RunResult): UnwrittenReadBack | null {
  if (!result.checks.poison) return null;
  const reads = result.checks.uninitialised;
  const probe = result.checks.poisonProbe;
  const differing = new Set((result.checks.determinism?.differences ?? []).map((d) => d.buffer));
  for (const buffer of result.buffers) {
    const poison = buffer.poison;
    // A buffer that came back different from an identical run is a race's; the poison bytes in it may be stale memory it read.
    if (!poison || differing.has(buffer.name)) continue;
    const float = isFloatType(buffer.type);
    const computed = float ? poison.nanCount - poison.poisonCount : 0;
    const read = reads.find((u) => u.buffer === buffer.name) ?? reads[0];
    // NaN a kernel computed is blamed on the poison only when zeroing that memory made numbers of it.
    const probed = probe?.buffers.find((x) => x.buffer === buffer.name);
    const fromPoison = probe?.status === 'ran' ? (probed && !nondeterministic(result) ? probed.nanInFirst - probed.nanWithZeros : 0) : null;
    const suspect = computed > 0 && read !== undefined && (fromPoison === null || fromPoison > 0);
    if (poison.poisonCount === 0 && !suspect) continue;
    const confirmed = poison.poisonCount > 0 || (fromPoison !== null && fromPoison > 0);
    return { buffer, poison, float, computed, read, probed, fromPoison, suspect, confirmed, probeReason: probe?.reason ?? null };
  }
  return null;
}

/** The rules, first match wins: a run that did not start, then one that died, then the failed call, then the checks. */
export const RUN_RULES: readonly RunRule[] = [
  {
    id: 'could-not-start',
    judge: ({ status }) => (status === 'invalid' || status === 'compile-error' || status === 'unavailable' ? { kind: 'could-not-start', status } : null),
  },
  { id: 'cancelled', judge: ({ status }) => (status === 'cancelled' ? { kind: 'cancelled' } : null) },
  {
    id: 'watchdog',
    judge: ({ status, exit, plan }) => (status === 'runner-died' && exit?.kind === 'watchdog' ? { kind: 'watchdog', launch: onlyLaunch(plan) } : null),
  },
  { id: 'runner-crashed', judge: ({ status, plan }) => (status === 'runner-died' ? { kind: 'runner-crashed', launch: onlyLaunch(plan) } : null) },
  { id: 'no-result', judge: ({ result }) => (result ? null : { kind: 'no-result' }) },
  {
    id: 'out-of-memory',
    judge: onFault((fault) => (fault.failure.op === 'alloc' && isOutOfMemory(fault.failure.error) ? { kind: 'out-of-memory', fault } : null)),
  },
  {
    id: 'invalid-launch-configuration',
    judge: onFault((fault, { launchFindings }) => {
      const f = fault.failure;
      if (f.op !== 'launch' || !isCuda(f) || !LAUNCH_CONFIG_CODES.has(f.error.code)) return null;
      return { kind: 'invalid-launch-configuration', fault, errors: launchFindings.filter((x) => x.severity === 'error') };
    }),
  },
  { id: 'module-load', judge: onFault((fault) => (fault.failure.op === 'load' ? { kind: 'module-load', fault } : null)) },
  { id: 'plan-error', judge: onFault((fault) => (fault.failure.error.library === 'workbench' ? { kind: 'plan-error', fault } : null)) },
  {
    id: 'device-assert',
    judge: onFault((fault, { result }) => {
      if (!isCuda(fault.failure) || fault.failure.error.code !== CUDA_ERROR_ASSERT) return null;
      const asserts = parseDeviceAsserts((result.deviceOutput ?? []).map((o) => o.text).join('\n'));
      return asserts.length ? { kind: 'device-assert', fault, asserts } : null;
    }),
  },
  {
    id: 'fault-on-freed-buffer',
    judge: onFault((fault) => (fault.stale.length ? { kind: 'fault-on-freed-buffer', fault, memoryFault: isMemoryFault(fault.failure) } : null)),
  },
  { id: 'cuda-error', judge: onFault((fault) => ({ kind: 'cuda-error', fault, memoryFault: isMemoryFault(fault.failure) })) },
  {
    id: 'out-of-bounds-write',
    judge: onResult(({ checks }) => (checks.guardViolations.length ? { kind: 'out-of-bounds-write', violations: checks.guardViolations } : null)),
  },
  { id: 'use-after-free', judge: onResult(({ checks }) => (checks.staleUses.length ? { kind: 'use-after-free', use: checks.staleUses[0]! } : null)) },
  {
    id: 'wrong-result-from-unwritten-memory',
    judge: onResult((result) => {
      const comparison = firstWrong(result);
      const uses = comparison && result.checks.poison ? poisonReachedComparison(result, comparison.buffer) : [];
      return comparison && uses.length ? { kind: 'wrong-result-from-unwritten-memory', comparison, use: uses[0]! } : null;
    }),
  },
  {
    id: 'wrong-result',
    judge: onResult((result, { plan }) => {
      const comparison = firstWrong(result);
      if (!comparison) return null;
      const download = plan?.steps.findIndex((s) => s.op === 'download' && s.buffer === comparison.buffer && s.expect) ?? -1;
      return { kind: 'wrong-result', comparison, downloadStep: download >= 0 ? download : null };
    }),
  },
  {
    id: 'unwritten-memory-read-back',
    judge: onResult((result) => {
      const found = unwrittenReadBack(result);
      return found ? { kind: 'unwritten-memory-read-back', ...found } : null;
    }),
  },
  {
    id: 'nondeterministic',
    judge: onResult((result, { plan }) => {
      const difference = result.checks.determinism?.differences[0];
      return difference ? { kind: 'nondeterministic', difference, atomics: floatAtomicsIn(plan, difference) } : null;
    }),
  },
  { id: 'leak', judge: onResult(({ leaks }) => (leaks.length ? { kind: 'leak', leaks } : null)) },
  { id: 'ok', judge: () => ({ kind: 'ok' }) },
];

/** The first rule's finding: every run gets one (the last rule always answers). */
export function judgeRun(facts: RunFacts): RunFinding {
  for (const rule of RUN_RULES) {
    const finding = rule.judge(facts);
    if (finding) return finding;
  }
  return { kind: 'ok' };
}
