import { lookupCode } from '../cuda/error-catalog';
import { explanationFor, type Explanation } from '../cuda/explanations';
import type { GpuProcess } from '../devices';
import type { Problem } from '../discovery';
import { formatBytes, partOf, plural, thousands } from '../format';
import type { Comparison } from '../plan/compare';
import type { LaunchPlan } from '../plan/plan-schema';
import { parseDeviceAsserts, type DeviceAssert } from './device-output';
import { stepLabel } from '../plan/step-label';
import type { Finding } from '../validate/validate-launch';
import type { ExitClassification } from './protocol';
import type { DeterminismDifference, RunResult, UninitialisedUse } from './run-result';
import { floatAtomicLines } from '../plan/determinism';
import { isFloatType } from '../plan/element-types';
import { sanitizerCommand } from './sanitizer-command';
import type { SanitizerTool } from '../sanitizer/findings';

export type RunStatus = 'ok' | 'cuda-error' | 'compile-error' | 'unavailable' | 'runner-died' | 'invalid' | 'cancelled';

export type DiagnosisKind =
  | 'ok'
  | 'cancelled'
  | 'leak'
  | 'invalid-plan'
  | 'compile-error'
  | 'unavailable'
  | 'watchdog'
  | 'runner-crashed'
  | 'out-of-memory'
  | 'invalid-launch'
  | 'module-load'
  | 'plan-error'
  | 'cuda-error'
  | 'out-of-bounds-write'
  | 'use-after-free'
  | 'uninitialised-read'
  | 'nondeterministic'
  | 'wrong-result';

export type { SanitizerTool } from '../sanitizer/findings';

export interface Diagnosis {
  kind: DiagnosisKind;
  severity: 'ok' | 'warning' | 'error';
  headline: string;
  /** The step it happened at, 0-based, with the label the run shows. */
  step: { index: number; label: string; op: string } | null;
  kernel: { id: string; entry: string } | null;
  /** The buffer it is about, where there is one (the one written out of bounds, read uninitialised, found wrong). */
  buffer: string | null;
  error: { name: string; code: number; api: string; message: string; runtimeName: string | null; sticky: boolean; library: string } | null;
  explanation: Explanation | null;
  /** What the workbench itself saw, in sentences built from this run's numbers and names. */
  specifics: string[];
  /** The validator's findings for the failing launch, computed from the kernel's attributes as the driver reported them. */
  launchFindings: Finding[];
  memory: { requestedBytes: number; freeBytes: number; totalBytes: number; processes: GpuProcess[] | null } | null;
  /**
   * Where compute-sanitizer would pin this to a source line. The in-app re-run is a later feature; the
   * command works today from a terminal.
   */
  sanitizer: { tool: SanitizerTool; why: string; command: string; available: false } | null;
  /** The source line it points at, where the run itself says (a failed device-side assert names its line). */
  sourceLocation: { file: string; line: number } | null;
  next: string[];
}

export interface DiagnosisInput {
  status: RunStatus;
  problem: Problem | null;
  result: RunResult | null;
  exit: ExitClassification | null;
  plan: Pick<LaunchPlan, 'kernels' | 'steps'> | null;
  /** The validator's findings for the failed launch step (empty when it did not fail at a launch). */
  launchFindings: Finding[];
  /** NVML's processes on the run's device, for an out-of-memory failure. */
  processes: GpuProcess[] | null;
  /** The plan file, when there is one, for the compute-sanitizer command. */
  planPath?: string | null;
  /**
   * The workbench's own processes, so the memory they hold is named as such: its runners, spares included, and under
   * compute-sanitizer both the tool and the runner it started (main/process/own-processes.ts).
   */
  ownPids?: number[];
}

const LAUNCH_CONFIG_CODES = new Set([1, 9, 701]);
const CUDA_ERROR_ASSERT = 710;
const MEMORY_FAULT_CODES = new Set([700, 716, 719, 718, 717, 715]);
const SHOWN_FIGURES = 4;

// NaN travels through JSON (the CLI's --json, the serve transport) as null.
const fmt = (n: number | null) =>
  n === null || Number.isNaN(n) ? 'NaN' : Number.isInteger(n) || !Number.isFinite(n) ? String(n) : n.toPrecision(7).replace(/\.?0+$/, '');

function sanitizerOffer(tool: SanitizerTool, why: string, planPath: string | null | undefined): Diagnosis['sanitizer'] {
  return { tool, why, command: sanitizerCommand(tool, planPath ?? null), available: false };
}

/** The failed asserts in words: the most frequent site first, the first thread that failed it, and how many did. */
function describeAsserts(asserts: DeviceAssert[]): { first: DeviceAssert; sentences: string[] } | null {
  if (!asserts.length) return null;
  const sites = new Map<string, DeviceAssert[]>();
  for (const a of asserts) {
    const key = `${a.file}:${a.line}:${a.condition}`;
    sites.set(key, [...(sites.get(key) ?? []), a]);
  }
  const ordered = [...sites.values()].sort((x, y) => y.length - x.length);
  const sentences = ordered.slice(0, SHOWN_FIGURES).map((site) => {
    const a = site[0]!;
    const threads = site.length === 1 ? 'One thread' : `${thousands(site.length)} threads`;
    return `${threads} failed \`${a.condition}\` at ${a.file}:${a.line} in ${a.function}; the first: block (${a.block.join(',')}), thread (${a.thread.join(',')}).`;
  });
  if (ordered.length > SHOWN_FIGURES) sentences.push(`${ordered.length - SHOWN_FIGURES} more assert sites failed too (see the device output).`);
  return { first: ordered[0]![0]!, sentences };
}

/** Turns what a run produced into one verdict: what failed, where, why, and what to do next. */
export function diagnoseRun(input: DiagnosisInput): Diagnosis {
  const { result, plan } = input;
  const base: Diagnosis = {
    kind: 'ok',
    severity: 'ok',
    headline: 'The run completed without a CUDA error, and every check passed.',
    step: null,
    kernel: null,
    buffer: null,
    error: null,
    explanation: null,
    specifics: [],
    launchFindings: [],
    memory: null,
    sanitizer: null,
    sourceLocation: null,
    next: [],
  };
  const stepAt = (index: number | null): Diagnosis['step'] => {
    if (index === null || !result) return null;
    const s = result.steps[index];
    return s ? { index, label: s.label, op: s.op } : null;
  };
  const kernelOf = (id: string | null): Diagnosis['kernel'] => {
    if (!id) return null;
    return { id, entry: plan?.kernels.find((k) => k.id === id)?.entry ?? result?.functions.find((f) => f.kernel === id)?.entry ?? id };
  };

  if (input.status === 'invalid' || input.status === 'compile-error' || input.status === 'unavailable') {
    const p = input.problem;
    return {
      ...base,
      kind: input.status === 'invalid' ? 'invalid-plan' : input.status,
      severity: 'error',
      headline: p?.title ?? 'The run could not start',
      specifics: p ? p.detail.split('\n').filter(Boolean) : [],
      next: p ? [p.remedy] : [],
    };
  }

  if (input.status === 'cancelled') {
    return {
      ...base,
      kind: 'cancelled',
      severity: 'warning',
      headline: 'The run was cancelled',
      specifics: [input.exit?.summary ?? input.problem?.detail ?? ''].filter(Boolean),
      next: ['Run again when you are ready: a fresh runner is already up.'],
    };
  }

  if (input.status === 'runner-died') {
    const watchdog = input.exit?.kind === 'watchdog';
    const launches = plan?.steps.flatMap((s, i) => (s.op === 'launch' ? [{ s, i }] : [])) ?? [];
    const only = launches.length === 1 ? launches[0]! : null;
    return {
      ...base,
      kind: watchdog ? 'watchdog' : 'runner-crashed',
      severity: 'error',
      headline: watchdog
        ? `The run did not finish in time${only ? `: ${kernelOf(only.s.op === 'launch' ? only.s.kernel : null)?.entry ?? 'the kernel'} never returned` : ''}; the watchdog stopped it`
        : 'The runner process died during the run',
      step: only ? { index: only.i, label: stepLabel(only.s, plan), op: 'launch' } : null,
      kernel: only && only.s.op === 'launch' ? kernelOf(only.s.kernel) : null,
      specifics: [input.exit?.summary ?? input.problem?.detail ?? ''].filter(Boolean),
      next: watchdog
        ? [
            'Look for a loop whose exit condition no thread can reach, a spin-wait on memory no one writes, or a __syncthreads() that only some threads reach.',
            'If the kernel is just slow, raise the time limit (--timeout, or Time limit in the run form).',
          ]
        : ['Run again; a fresh runner is already up. If it repeats, run it under compute-sanitizer.'],
    };
  }

  if (!result) return { ...base, kind: 'cuda-error', severity: 'error', headline: input.problem?.title ?? 'The run failed' };

  const checks = result.checks;
  const stale = checks.staleUses;

  if (result.failure) {
    const f = result.failure;
    const entry = f.error.library === 'cuda' ? lookupCode(f.error.code) : undefined;
    const error: Diagnosis['error'] = {
      name: f.error.name,
      code: f.error.code,
      api: f.error.api,
      message: f.error.message,
      runtimeName: entry?.runtimeName ?? null,
      sticky: f.sticky,
      library: f.error.library,
    };
    const step = stepAt(f.stepIndex);
    const kernel = kernelOf(f.kernel);
    const where = step ? `at step ${step.index + 1} (${step.label})` : f.op === 'load' ? 'while loading the module' : '';
    const common = { ...base, severity: 'error' as const, step, kernel, error, explanation: explanationFor(entry) };
    const specifics: string[] = [];
    if (f.op === 'launch') {
      specifics.push(
        'Every launch is followed by a synchronisation (what CUDA_LAUNCH_BLOCKING=1 does), so the error belongs to this launch, not a later call.',
      );
    }
    if (f.duringPoisonProbe)
      specifics.unshift(
        'The first run of the plan completed; this error came when the launches ran again with the memory nothing had written zeroed instead of poisoned: the kernel depends on that memory.',
      );
    if (f.duringDeterminismRun)
      specifics.unshift(
        'The first run of the plan completed; this error came when the determinism check ran the same launches again on the same inputs — a kernel whose behaviour changes between identical runs (a race, or a read of memory nothing wrote).',
      );
    if (f.sticky) specifics.push('This error is sticky: the CUDA context is dead. The workbench discarded that runner; the next run uses a fresh one at once.');
    const staleHere = stale.filter((s) => s.stepIndex === f.stepIndex);
    for (const s of staleHere) specifics.unshift(`Buffer ${s.buffer} was freed at step ${s.freedAtStep + 1}, and this launch was given its dangling pointer.`);

    if (f.error.library === 'cuda' && f.error.code === 2 && f.op === 'alloc') {
      const m = f.memory ?? null;
      const memory = m ? { ...m, processes: input.processes } : null;
      if (m) {
        specifics.unshift(
          `Asked for ${formatBytes(m.requestedBytes)}; the device has ${formatBytes(m.freeBytes)} free of ${formatBytes(m.totalBytes)}${m.requestedBytes > m.totalBytes ? ' — more than the whole device' : ''}.`,
        );
        for (const p of (input.processes ?? []).filter((p) => p.pid !== result.runnerPid && (p.usedBytes ?? 0) > 0).slice(0, SHOWN_FIGURES)) {
          const who = input.ownPids?.includes(p.pid) ? 'a GPU Workbench runner (its CUDA context)' : p.name || 'unknown';
          specifics.push(`Process ${p.pid} (${who}) holds ${formatBytes(p.usedBytes ?? 0)} on this device.`);
        }
      }
      return {
        ...common,
        kind: 'out-of-memory',
        headline: `Out of device memory ${where}`,
        specifics,
        memory,
        next: [
          m && m.requestedBytes > m.totalBytes
            ? 'No device this size can hold it: split the data into pieces that fit and process them in turn.'
            : 'Free what you no longer need, make the buffer smaller, or stop the processes that hold the device.',
        ],
      };
    }
    if (f.op === 'launch' && f.error.library === 'cuda' && LAUNCH_CONFIG_CODES.has(f.error.code)) {
      const errors = input.launchFindings.filter((x) => x.severity === 'error');
      for (const x of errors) specifics.unshift(x.message);
      return {
        ...common,
        kind: 'invalid-launch',
        headline: `${kernel?.entry ?? 'The kernel'} could not be launched with this configuration: ${f.error.name}`,
        specifics,
        launchFindings: input.launchFindings,
        next: errors.flatMap((x) => (x.fix ? [x.fix] : [])).concat(errors.length ? [] : (explanationFor(entry)?.next ?? [])),
      };
    }
    if (f.op === 'load') {
      return {
        ...common,
        kind: 'module-load',
        headline: `The driver could not load the compiled kernel: ${f.error.name}`,
        specifics,
        next: explanationFor(entry)?.next ?? ['Check `gpu-workbench doctor`: the driver may be older than the toolkit that compiled the kernel.'],
      };
    }
    if (f.error.library === 'workbench') {
      return {
        ...common,
        kind: 'plan-error',
        headline: `The plan cannot do step ${step ? step.index + 1 : '?'}: ${f.error.message}`,
        specifics,
        next: ['Fix the plan and run again.'],
      };
    }
    if (f.error.library === 'cuda' && f.error.code === CUDA_ERROR_ASSERT) {
      const asserts = parseDeviceAsserts((result.deviceOutput ?? []).map((o) => o.text).join('\n'));
      const told = describeAsserts(asserts);
      if (told) {
        return {
          ...common,
          kind: 'cuda-error',
          headline: `A device-side assert failed at ${told.first.file}:${told.first.line}: \`${told.first.condition}\` (${f.error.name} ${where})`,
          specifics: [...told.sentences, ...specifics],
          sourceLocation: { file: told.first.file, line: told.first.line },
          next: [
            `The assert states what the kernel assumed; find why \`${told.first.condition}\` is false for the threads named (often a missing bounds check: a grid rounded up has threads past the end).`,
            ...(explanationFor(entry)?.next ?? []),
          ],
        };
      }
    }
    const memoryFault = MEMORY_FAULT_CODES.has(f.error.code);
    return {
      ...common,
      kind: staleHere.length ? 'use-after-free' : 'cuda-error',
      buffer: staleHere[0]?.buffer ?? null,
      headline: staleHere.length
        ? `${kernel?.entry ?? 'The kernel'} used buffer ${staleHere[0]!.buffer} after it was freed: ${f.error.name} ${where}`
        : `${f.error.name} ${where}`,
      specifics,
      sanitizer:
        memoryFault && f.op === 'launch'
          ? sanitizerOffer(
              'memcheck',
              'memcheck names the faulting source line, the thread and block, and the address against the nearest allocation.',
              input.planPath,
            )
          : null,
      next: explanationFor(entry)?.next ?? [],
    };
  }

  if (checks.guardViolations.length) {
    const v = checks.guardViolations[0]!;
    const d = v.damage;
    const range =
      d.side === 'after'
        ? `elements ${d.nearestElement}${d.farthestElement > d.nearestElement ? `–${d.farthestElement}` : ''} of a ${thousands(v.count)}-element buffer (valid indices 0–${thousands(v.count - 1)})`
        : `elements ${d.farthestElement}${d.nearestElement > d.farthestElement ? ` to ${d.nearestElement}` : ''}, before its start`;
    return {
      ...base,
      kind: 'out-of-bounds-write',
      severity: 'error',
      headline: `${v.entry} wrote past the ${d.side === 'after' ? 'end' : 'start'} of buffer ${v.buffer} at step ${v.stepIndex + 1}`,
      step: stepAt(v.stepIndex),
      kernel: kernelOf(v.kernel),
      buffer: v.buffer,
      specifics: [
        `It wrote ${range}: ${plural(d.bytesChanged, 'byte')} of the guard region the workbench keeps around every buffer changed.`,
        'No CUDA error was raised: the write landed in mapped memory. A host program would corrupt a neighbouring allocation silently.',
        ...checks.guardViolations
          .slice(1, SHOWN_FIGURES)
          .map((w) => `Also: ${w.entry} wrote ${w.damage.side === 'after' ? 'past the end' : 'before the start'} of ${w.buffer} at step ${w.stepIndex + 1}.`),
      ],
      sanitizer: sanitizerOffer('memcheck', 'memcheck names the source line and thread of the out-of-bounds write.', input.planPath),
      next: [
        d.side === 'after' && d.nearestElement === v.count
          ? 'An index one past the end: look for `<=` where `<` belongs, or a size computed one too large.'
          : 'Threads past the end of the data: guard the access with `if (i < n)`, since the grid is rounded up to whole blocks.',
      ],
    };
  }

  if (stale.length) {
    const s = stale[0]!;
    return {
      ...base,
      kind: 'use-after-free',
      severity: 'error',
      headline: `Step ${s.stepIndex + 1} launched ${kernelOf(s.kernel)?.entry} with buffer ${s.buffer}, freed at step ${s.freedAtStep + 1}`,
      step: stepAt(s.stepIndex),
      kernel: kernelOf(s.kernel),
      buffer: s.buffer,
      specifics: ['The launch did not fault this time: freed device memory can stay mapped. The results are not to be trusted.'],
      sanitizer: sanitizerOffer('memcheck', 'memcheck reports every access to freed memory.', input.planPath),
      next: ['Free a buffer only after the last launch that uses it.'],
    };
  }

  const wrong = checks.comparisons.filter((c) => c.mismatches > 0);
  if (wrong.length) {
    const c = wrong[0]!;
    const uninit = poisonReachedComparison(result, c.buffer);
    const poisoned = checks.poison && uninit.length > 0;
    const downloadStep = plan?.steps.findIndex((s) => s.op === 'download' && s.buffer === c.buffer && s.expect) ?? -1;
    if (poisoned) {
      const u = uninit[0]!;
      return {
        ...base,
        kind: 'uninitialised-read',
        severity: 'error',
        headline: `${kernelOf(u.kernel)?.entry} read buffer ${u.buffer} before anything wrote it`,
        step: stepAt(u.stepIndex),
        kernel: kernelOf(u.kernel),
        buffer: u.buffer,
        specifics: [
          mismatchSentence(c),
          `Buffer ${u.buffer} was allocated but never uploaded before step ${u.stepIndex + 1} passed it to ${kernelOf(u.kernel)?.entry}; the workbench fills new allocations with 0xFF bytes (NaN, or −1), and that is what came back.`,
          'In a host program this memory holds whatever was there before — often zeros, so the bug hides until it does not.',
        ],
        sanitizer: sanitizerOffer('initcheck', 'initcheck names the source line that reads memory never written.', input.planPath),
        next: [`Initialise ${u.buffer} before the kernel reads it (an upload step, cudaMemset), or make the kernel write it with = before reading it.`],
      };
    }
    return {
      ...base,
      kind: 'wrong-result',
      severity: 'error',
      headline: `Wrong result in ${c.buffer}: ${partOf(c.mismatches, c.checked, 'element')} ${c.mismatches === 1 ? 'differs' : 'differ'} from ${c.against}, the first at index ${c.first[0]?.index}`,
      step: stepAt(downloadStep >= 0 ? downloadStep : null),
      kernel: null,
      buffer: c.buffer,
      sanitizer: sanitizerOffer(
        'racecheck',
        'A result that is wrong without any error is often a data race (a missing __syncthreads()); racecheck names the two accesses.',
        input.planPath,
      ),
      specifics: [mismatchSentence(c), ...mismatchPattern(c), ...determinismSentences(result, plan)],
      next: ['Look at the first mismatching index: which thread and block wrote it, and what it read.'],
    };
  }

  const unwritten = poisonFinding(result, kernelOf);
  if (unwritten) {
    const { stepIndex, ...finding } = unwritten;
    return {
      ...base,
      ...finding,
      step: stepAt(stepIndex),
      sanitizer: sanitizerOffer('initcheck', 'initcheck names the source line that reads memory never written.', input.planPath),
    };
  }

  const differences = result.checks.determinism?.differences ?? [];
  if (differences.length) {
    const d = differences[0]!;
    const atomics = floatAtomicsIn(plan, d);
    return {
      ...base,
      kind: 'nondeterministic',
      severity: atomics.length ? 'warning' : 'error',
      headline: `Results differ between two identical runs: ${partOf(d.differing, d.count, 'element')} of ${d.buffer}, the first at index ${d.firstIndex} (${fmt(d.first)}, then ${fmt(d.second)})`,
      step: stepAt(d.stepIndex),
      buffer: d.buffer,
      specifics: determinismSentences(result, plan),
      sanitizer: atomics.length
        ? null
        : sanitizerOffer('racecheck', 'A result that changes between identical runs is usually a data race; racecheck names the two accesses.', input.planPath),
      next: atomics.length
        ? [
            'If the differences are only in the last bits, they are the atomics’ rounding: compare with a tolerance. For bit-identical results, reduce in a fixed order (a tree reduction per block, then one pass over the blocks).',
          ]
        : [
            'Look for threads that read what other threads write without a barrier between them (a missing __syncthreads()), or for reads of memory no launch wrote.',
          ],
    };
  }

  if (result.leaks.length) {
    const total = result.leaks.reduce((sum, l) => sum + l.bytes, 0);
    return {
      ...base,
      kind: 'leak',
      severity: 'warning',
      headline: `The plan never frees ${result.leaks.map((l) => l.name).join(', ')} (${formatBytes(total)})`,
      specifics: [
        'The workbench freed them at teardown; a host program that runs this in a loop would lose this much device memory on every pass.',
        ...result.leaks.map((l) => `${l.name}: ${formatBytes(l.bytes)}`),
      ],
      next: ['Add a free step for each buffer after its last use.'],
    };
  }
  const nan = result.buffers.filter((b) => b.nanCount > 0);
  if (nan.length) base.specifics.push(...nan.map((b) => `Buffer ${b.name} holds ${plural(b.nanCount, 'NaN value')}.`));
  return { ...base, headline: okHeadline(result), specifics: [...base.specifics, ...checksNotRun(result)] };
}

/** "Every check passed" names the checks that ran; one that could not run is said, not implied. */
function okHeadline(result: RunResult): string {
  const ran = ['no CUDA error'];
  if (result.checks.guardBytes > 0) ran.push('no write outside a buffer');
  if (result.checks.poison) ran.push('no read-back holding unwritten memory');
  if (result.checks.comparisons.length) ran.push(`${result.checks.comparisons.length === 1 ? 'the comparison' : 'every comparison'} matched`);
  const d = result.checks.determinism;
  if (d?.status === 'compared') ran.push(`${d.runs === 1 ? 'a second run' : `${d.runs} more runs`} gave bit-identical results`);
  return `The run completed: ${ran.join(', ')}.`;
}

function checksNotRun(result: RunResult): string[] {
  const out: string[] = [];
  const d = result.checks.determinism;
  if (d && d.status !== 'compared') out.push(`Not compared with a second run: ${d.reason ?? 'turned off'}.`);
  if (result.checks.guardBytes === 0) out.push('Guard bytes are off: a write past a buffer’s end would not be seen.');
  if (!result.checks.poison) out.push('Poison is off: a read of memory nothing wrote would not be seen.');
  return out;
}

/** The determinism check's findings in sentences, with what floating-point atomics mean for them. */
function determinismSentences(result: RunResult, plan: DiagnosisInput['plan']): string[] {
  const differences = result.checks.determinism?.differences ?? [];
  const out = differences
    .slice(0, SHOWN_FIGURES)
    .map(
      (d) =>
        `Run again on the same inputs${d.run > 1 ? ` (run ${d.run + 1})` : ''}, ${d.buffer} came back different in ${partOf(d.differing, d.count, 'element')}; the first, [${d.firstIndex}], was ${fmt(d.first)} and then ${fmt(d.second)}.`,
    );
  for (const buffer of new Set(differences.map((x) => x.buffer))) {
    const poison = result.buffers.find((b) => b.name === buffer)?.poison;
    if (poison && poison.poisonCount > 0)
      out.push(
        `${plural(poison.poisonCount, 'element')} of ${buffer} ${poison.poisonCount === 1 ? 'holds' : 'hold'} the poison pattern (every byte 0xFF), the first at index ${poison.firstPoisonIndex}: memory no thread wrote, or stale memory a racing read picked up. initcheck and racecheck tell the two apart.`,
      );
  }
  const d = differences[0];
  const atomics = d ? floatAtomicsIn(plan, d) : [];
  if (atomics.length)
    out.push(
      `The kernel uses atomic additions (${atomics.slice(0, SHOWN_FIGURES).join(', ')}) on a floating-point buffer: the order in which threads add differs from run to run, and floating-point addition is not associative, so small differences in the last bits are expected.`,
    );
  return out;
}

/** Source lines with atomics, when the buffer that changed holds floating-point values. */
function floatAtomicsIn(plan: DiagnosisInput['plan'], d: DeterminismDifference): string[] {
  if (!isFloatType(d.type) || !plan) return [];
  return plan.kernels.flatMap((k) => floatAtomicLines(k.source).map((line) => `${k.sourceName}:${line}`));
}

/**
 * A read-back buffer that holds the poison pattern, or NaN where a kernel computed with it: memory that
 * nothing wrote reached the result. Needs no expectation.
 */
function poisonFinding(
  result: RunResult,
  kernelOf: (id: string | null) => Diagnosis['kernel'],
): (Pick<Diagnosis, 'kind' | 'severity' | 'headline' | 'kernel' | 'buffer' | 'specifics' | 'next'> & { stepIndex: number | null }) | null {
  if (!result.checks.poison) return null;
  const reads = result.checks.uninitialised;
  const probe = result.checks.poisonProbe;
  const differing = new Set((result.checks.determinism?.differences ?? []).map((d) => d.buffer));
  for (const b of result.buffers) {
    const p = b.poison;
    // A buffer that came back different from an identical run is a race's; the poison bytes in it may be stale memory it read.
    if (!p || differing.has(b.name)) continue;
    const float = isFloatType(b.type);
    const computed = float ? p.nanCount - p.poisonCount : 0;
    const read = reads.find((u) => u.buffer === b.name) ?? reads[0];
    // NaN a kernel computed is blamed on the poison only when zeroing that memory made numbers of it.
    const probed = probe?.buffers.find((x) => x.buffer === b.name);
    const fromPoison = probe?.status === 'ran' ? (probed && !nondeterministic(result) ? probed.nanInFirst - probed.nanWithZeros : 0) : null;
    const suspect = computed > 0 && read !== undefined && (fromPoison === null || fromPoison > 0);
    if (p.poisonCount === 0 && !suspect) continue;
    const entry = read ? (kernelOf(read.kernel)?.entry ?? read.kernel) : null;
    const specifics: string[] = [];
    if (p.poisonCount > 0)
      specifics.push(
        `${partOf(p.poisonCount, b.count, 'element')} of ${b.name} still ${p.poisonCount === 1 ? 'holds' : 'hold'} the poison pattern (every byte 0xFF${float ? ', a NaN' : ', −1 as a signed integer'}), the first at index ${p.firstPoisonIndex}: nothing wrote them${float ? '' : ', unless the kernel writes −1 there'}.`,
      );
    if (suspect && fromPoison !== null)
      specifics.push(
        `${plural(fromPoison, 'element')} of ${b.name} ${fromPoison === 1 ? 'is' : 'are'} NaN only because of memory nothing wrote: run again with that memory zeroed instead of poisoned, they came out as numbers (the first, index ${probed!.firstIndex}). ${entry} read it before anything wrote it (step ${read!.stepIndex + 1} passed ${read!.buffer} unwritten).`,
      );
    else if (suspect)
      specifics.push(
        `${plural(computed, 'element')} of ${b.name} ${computed === 1 ? 'is' : 'are'} NaN, and step ${read!.stepIndex + 1} passed ${read!.buffer} to ${entry} before anything wrote it: the NaN may come from that memory${probe?.reason ? `; the workbench could not confirm it (${probe.reason})` : ''}.`,
      );
    specifics.push(
      'The workbench fills memory no upload initialises with 0xFF bytes. In a host program it holds whatever was there before — often zeros, so the bug hides until it does not.',
    );
    const confirmed = p.poisonCount > 0 || (fromPoison !== null && fromPoison > 0);
    const first = p.poisonCount > 0 ? p.firstPoisonIndex : (probed?.firstIndex ?? p.firstNanIndex);
    return {
      kind: 'uninitialised-read',
      severity: float && confirmed ? 'error' : 'warning',
      headline:
        p.poisonCount === 0
          ? `${entry} read memory nothing had written: ${b.name} holds ${fromPoison ?? computed} NaN ${fromPoison !== null ? 'from' : 'that may come from'} the poison pattern, the first at index ${first}`
          : `${b.name} holds memory nothing had written: ${partOf(p.poisonCount, b.count, 'element')}, the first at index ${first}`,
      kernel: read ? kernelOf(read.kernel) : null,
      buffer: b.name,
      stepIndex: read?.stepIndex ?? null,
      specifics,
      next: [
        `Initialise what the kernel reads before it runs (an upload, cudaMemset, or "=0" on the buffer), make the kernel write every element it reads with = first, or check that the grid covers every element of ${b.name}.`,
        'compute-sanitizer --tool initcheck names the source line that reads memory never written.',
      ],
    };
  }
  return null;
}

/** Whether a second run of the same launches on the same inputs came back different. */
const nondeterministic = (result: RunResult) => (result.checks.determinism?.differences.length ?? 0) > 0;

/**
 * The unwritten launches to blame for a wrong read-back, only on evidence that the poison reached it: the
 * compared buffer itself was passed unwritten and still holds the exact poison bytes, or the probe (the
 * launches again with that memory zeroed) turned its NaN into numbers. NaN alone is no evidence: a race
 * reading stale shared memory makes NaN too, even the poison's own bytes (seen on an H100: a tile left by an
 * earlier kernel), and a run that differs from itself is a race first, whatever its read-backs hold.
 */
function poisonReachedComparison(result: RunResult, buffer: string): UninitialisedUse[] {
  if (nondeterministic(result)) return [];
  const unwritten = result.checks.uninitialised;
  const direct = unwritten.filter((u) => u.buffer === buffer);
  if (direct.length && (result.buffers.find((b) => b.name === buffer)?.poison?.poisonCount ?? 0) > 0) return direct;
  const probe = result.checks.poisonProbe;
  const probed = probe?.status === 'ran' ? probe.buffers.find((b) => b.buffer === buffer) : undefined;
  if (!probed || probed.nanInFirst <= probed.nanWithZeros) return [];
  return direct.length ? direct : unwritten;
}

function mismatchSentence(c: Comparison): string {
  const m = c.first[0];
  if (!m) return `${plural(c.mismatches, 'element')} of ${c.buffer} ${c.mismatches === 1 ? 'differs' : 'differ'} from ${c.against}.`;
  return `${c.buffer}[${m.index}] is ${fmt(m.actual)} where ${c.against} says ${fmt(m.expected)}; ${partOf(c.mismatches, c.checked, 'element')} ${c.mismatches === 1 ? 'differs' : 'differ'}.`;
}

/** Hints from where the mismatches are: at the ends of the buffer (indexing), in blocks (synchronisation). */
function mismatchPattern(c: Comparison): string[] {
  const out: string[] = [];
  if (c.first.length > 1) out.push(`First mismatching indices: ${c.first.map((m) => m.index).join(', ')}.`);
  if (c.mismatches === 1 && (c.first[0]?.index === 0 || c.first[0]?.index === c.checked - 1))
    out.push('Only an end element is wrong: an off-by-one in the index or the bounds check.');
  return out;
}
