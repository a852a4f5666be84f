/**
 * The run diagnosis in words: every sentence a person reads about a run, built from the finding the rules
 * (diagnosis-rules.ts) chose and the run's facts. One describer per finding.
 */
import { explanationFor } from '../cuda/explanations';
import { formatBytes, partOf, plural, thousands } from '../format';
import type { Comparison } from '../plan/compare';
import { stepLabel } from '../plan/step-label';
import type { SanitizerTool } from '../sanitizer/findings';
import type { DeviceAssert } from './device-output';
import type { Diagnosis } from './diagnose';
import { floatAtomicsIn, type Fault, type OnlyLaunch, type RunFacts, type RunFinding } from './diagnosis-rules';
import type { RunResult } from './run-result';
import { sanitizerCommand } from './sanitizer-command';

/** At most this many of a kind (asserts, processes, guard violations, differences) are told one by one. */
const SHOWN_FIGURES = 4;

/** The sentence for a sticky error: the only place it is said. */
export const STICKY_SENTENCE = 'This error is sticky: the CUDA context is dead. The workbench discarded that runner; the next run uses a fresh one at once.';
const CANCELLED_DETAIL = 'It was stopped where it was: a compile under way was stopped, a runner at work was killed.';
const LAUNCH_SYNCHRONISED =
  'Every launch is followed by a synchronisation (what CUDA_LAUNCH_BLOCKING=1 does), so the error belongs to this launch, not a later call.';
const DURING_POISON_PROBE =
  'The first run of the plan completed; this error came when the launches ran again with the memory nothing had written zeroed instead of poisoned: the kernel depends on that memory.';
const DURING_DETERMINISM_RUN =
  'The first run of the plan completed; this error came when the determinism check ran the same launches again on the same inputs — a kernel whose behaviour changes between identical runs (a race, or a read of memory nothing wrote).';
const INITCHECK_WHY = 'initcheck names the source line that reads memory never written.';

const BASE: Diagnosis = {
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

// NaN travels through JSON (the CLI's --json, the serve transport) as null.
const fmt = (n: number | null) =>
  n === null || Number.isNaN(n) ? 'NaN' : Number.isInteger(n) || !Number.isFinite(n) ? String(n) : n.toPrecision(7).replace(/\.?0+$/, '');

function sanitizerOffer(tool: SanitizerTool, why: string, planPath: string | null | undefined): Diagnosis['sanitizer'] {
  return { tool, why, command: sanitizerCommand(tool, planPath ?? null), available: false };
}

/** How the runner ended, as the process supervisor classified it (core/runner/protocol.ts). */
const saidOnExit = (facts: RunFacts) => [facts.exit?.summary ?? ''].filter(Boolean);

/** The plan's only launch as the diagnosis names it: its step and its kernel. */
function launchPlace(launch: OnlyLaunch, facts: RunFacts): Pick<Diagnosis, 'step' | 'kernel'> {
  if (!launch) return { step: null, kernel: null };
  return { step: { index: launch.index, label: stepLabel(launch.step, facts.plan), op: 'launch' }, kernel: facts.kernelOf(launch.step.kernel) };
}

/** The failed asserts in words: the most frequent site first, the first thread that failed it, and how many did. */
function describeAsserts(asserts: DeviceAssert[]): { first: DeviceAssert; sentences: string[] } {
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

/** What every failed call's diagnosis carries: where, the error, its explanation, and what the workbench knows of it. */
function faultCommon(fault: Fault) {
  const f = fault.failure;
  const error: Diagnosis['error'] = {
    name: f.error.name,
    code: f.error.code,
    api: f.error.api,
    message: f.error.message,
    runtimeName: fault.entry?.runtimeName ?? null,
    sticky: f.sticky,
    library: f.error.library,
  };
  const where = fault.step ? `at step ${fault.step.index + 1} (${fault.step.label})` : f.op === 'load' ? 'while loading the module' : '';
  const stale = fault.stale.map((s) => `Buffer ${s.buffer} was freed at step ${s.freedAtStep + 1}, and this launch was given its dangling pointer.`).reverse();
  const specifics = [
    ...stale,
    ...(f.duringDeterminismRun ? [DURING_DETERMINISM_RUN] : []),
    ...(f.duringPoisonProbe ? [DURING_POISON_PROBE] : []),
    ...(f.op === 'launch' ? [LAUNCH_SYNCHRONISED] : []),
    ...(f.sticky ? [STICKY_SENTENCE] : []),
  ];
  const explanation = explanationFor(fault.entry);
  const common = { ...BASE, severity: 'error' as const, step: fault.step, kernel: fault.kernel, error, explanation };
  return { common, where, specifics, explanation };
}

/** The memory of an allocation that failed: asked against free, and who else holds the device. */
function outOfMemory(fault: Fault, facts: RunFacts): Diagnosis {
  const { common, where, specifics } = faultCommon(fault);
  const m = fault.failure.memory ?? null;
  if (m) {
    specifics.unshift(
      `Asked for ${formatBytes(m.requestedBytes)}; the device has ${formatBytes(m.freeBytes)} free of ${formatBytes(m.totalBytes)}${m.requestedBytes > m.totalBytes ? ' — more than the whole device' : ''}.`,
    );
    for (const p of (facts.processes ?? []).filter((p) => p.pid !== facts.result?.runnerPid && (p.usedBytes ?? 0) > 0).slice(0, SHOWN_FIGURES)) {
      const who = facts.ownPids?.includes(p.pid) ? 'a GPU Workbench runner (its CUDA context)' : p.name || 'unknown';
      specifics.push(`Process ${p.pid} (${who}) holds ${formatBytes(p.usedBytes ?? 0)} on this device.`);
    }
  }
  return {
    ...common,
    kind: 'out-of-memory',
    headline: `Out of device memory ${where}`,
    specifics,
    memory: m ? { ...m, processes: facts.processes } : null,
    next: [
      m && m.requestedBytes > m.totalBytes
        ? 'No device this size can hold it: split the data into pieces that fit and process them in turn.'
        : 'Free what you no longer need, make the buffer smaller, or stop the processes that hold the device.',
    ],
  };
}

function deviceAssert(fault: Fault, asserts: DeviceAssert[]): Diagnosis {
  const { common, where, specifics, explanation } = faultCommon(fault);
  const told = describeAsserts(asserts);
  return {
    ...common,
    kind: 'cuda-error',
    headline: `A device-side assert failed at ${told.first.file}:${told.first.line}: \`${told.first.condition}\` (${fault.failure.error.name} ${where})`,
    specifics: [...told.sentences, ...specifics],
    sourceLocation: { file: told.first.file, line: told.first.line },
    next: [
      `The assert states what the kernel assumed; find why \`${told.first.condition}\` is false for the threads named (often a missing bounds check: a grid rounded up has threads past the end).`,
      ...(explanation?.next ?? []),
    ],
  };
}

/** Any other failed call; a launch that was given a freed buffer is named a use after free. */
function cudaError(fault: Fault, memoryFault: boolean, facts: RunFacts): Diagnosis {
  const { common, where, specifics, explanation } = faultCommon(fault);
  const freed = fault.stale[0];
  return {
    ...common,
    kind: freed ? 'use-after-free' : 'cuda-error',
    buffer: freed?.buffer ?? null,
    headline: freed
      ? `${fault.kernel?.entry ?? 'The kernel'} used buffer ${freed.buffer} after it was freed: ${fault.failure.error.name} ${where}`
      : `${fault.failure.error.name} ${where}`,
    specifics,
    sanitizer: memoryFault
      ? sanitizerOffer(
          'memcheck',
          'memcheck names the faulting source line, the thread and block, and the address against the nearest allocation.',
          facts.planPath,
        )
      : null,
    next: explanation?.next ?? [],
  };
}

function outOfBoundsWrite(violations: RunResult['checks']['guardViolations'], facts: RunFacts): Diagnosis {
  const v = violations[0]!;
  const d = v.damage;
  const range =
    d.side === 'after'
      ? `elements ${d.nearestElement}${d.farthestElement > d.nearestElement ? `–${d.farthestElement}` : ''} of a ${thousands(v.count)}-element buffer (valid indices 0–${thousands(v.count - 1)})`
      : `elements ${d.farthestElement}${d.nearestElement > d.farthestElement ? ` to ${d.nearestElement}` : ''}, before its start`;
  return {
    ...BASE,
    kind: 'out-of-bounds-write',
    severity: 'error',
    headline: `${v.entry} wrote past the ${d.side === 'after' ? 'end' : 'start'} of buffer ${v.buffer} at step ${v.stepIndex + 1}`,
    step: facts.stepAt(v.stepIndex),
    kernel: facts.kernelOf(v.kernel),
    buffer: v.buffer,
    specifics: [
      `It wrote ${range}: ${plural(d.bytesChanged, 'byte')} of the guard region the workbench keeps around every buffer changed.`,
      'No CUDA error was raised: the write landed in mapped memory. A host program would corrupt a neighbouring allocation silently.',
      ...violations
        .slice(1, SHOWN_FIGURES)
        .map((w) => `Also: ${w.entry} wrote ${w.damage.side === 'after' ? 'past the end' : 'before the start'} of ${w.buffer} at step ${w.stepIndex + 1}.`),
    ],
    sanitizer: sanitizerOffer('memcheck', 'memcheck names the source line and thread of the out-of-bounds write.', facts.planPath),
    next: [
      d.side === 'after' && d.nearestElement === v.count
        ? 'An index one past the end: look for `<=` where `<` belongs, or a size computed one too large.'
        : 'Threads past the end of the data: guard the access with `if (i < n)`, since the grid is rounded up to whole blocks.',
    ],
  };
}

function unwrittenReadBack(found: Extract<RunFinding, { kind: 'unwritten-memory-read-back' }>, facts: RunFacts): Diagnosis {
  const { buffer: b, poison: p, float, computed, read, probed, fromPoison, suspect } = found;
  const entry = read ? (facts.kernelOf(read.kernel)?.entry ?? read.kernel) : null;
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
      `${plural(computed, 'element')} of ${b.name} ${computed === 1 ? 'is' : 'are'} NaN, and step ${read!.stepIndex + 1} passed ${read!.buffer} to ${entry} before anything wrote it: the NaN may come from that memory${found.probeReason ? `; the workbench could not confirm it (${found.probeReason})` : ''}.`,
    );
  specifics.push(
    'The workbench fills memory no upload initialises with 0xFF bytes. In a host program it holds whatever was there before — often zeros, so the bug hides until it does not.',
  );
  const first = p.poisonCount > 0 ? p.firstPoisonIndex : (probed?.firstIndex ?? p.firstNanIndex);
  return {
    ...BASE,
    kind: 'uninitialised-read',
    severity: float && found.confirmed ? 'error' : 'warning',
    headline:
      p.poisonCount === 0
        ? `${entry} read memory nothing had written: ${b.name} holds ${fromPoison ?? computed} NaN ${fromPoison !== null ? 'from' : 'that may come from'} the poison pattern, the first at index ${first}`
        : `${b.name} holds memory nothing had written: ${partOf(p.poisonCount, b.count, 'element')}, the first at index ${first}`,
    kernel: read ? facts.kernelOf(read.kernel) : null,
    buffer: b.name,
    step: facts.stepAt(read?.stepIndex ?? null),
    specifics,
    sanitizer: sanitizerOffer('initcheck', INITCHECK_WHY, facts.planPath),
    next: [
      `Initialise what the kernel reads before it runs (an upload, cudaMemset, or "=0" on the buffer), make the kernel write every element it reads with = first, or check that the grid covers every element of ${b.name}.`,
      'compute-sanitizer --tool initcheck names the source line that reads memory never written.',
    ],
  };
}

function nondeterministic(found: Extract<RunFinding, { kind: 'nondeterministic' }>, facts: RunFacts): Diagnosis {
  const { difference: d, atomics } = found;
  return {
    ...BASE,
    kind: 'nondeterministic',
    severity: atomics.length ? 'warning' : 'error',
    headline: `Results differ between two identical runs: ${partOf(d.differing, d.count, 'element')} of ${d.buffer}, the first at index ${d.firstIndex} (${fmt(d.first)}, then ${fmt(d.second)})`,
    step: facts.stepAt(d.stepIndex),
    buffer: d.buffer,
    specifics: determinismSentences(facts.result!, facts.plan),
    sanitizer: atomics.length
      ? null
      : sanitizerOffer('racecheck', 'A result that changes between identical runs is usually a data race; racecheck names the two accesses.', facts.planPath),
    next: atomics.length
      ? [
          'If the differences are only in the last bits, they are the atomics’ rounding: compare with a tolerance. For bit-identical results, reduce in a fixed order (a tree reduction per block, then one pass over the blocks).',
        ]
      : [
          'Look for threads that read what other threads write without a barrier between them (a missing __syncthreads()), or for reads of memory no launch wrote.',
        ],
  };
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
function determinismSentences(result: RunResult, plan: RunFacts['plan']): string[] {
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

type Describers = { [K in RunFinding['kind']]: (finding: Extract<RunFinding, { kind: K }>, facts: RunFacts) => Diagnosis };

/** One describer per finding, in the rules' order. From 'no-result' on, the run has a result (that rule took those without). */
const DESCRIBE: Describers = {
  'could-not-start': ({ status }, { problem: p }) => ({
    ...BASE,
    kind: status === 'invalid' ? 'invalid-plan' : status,
    severity: 'error',
    headline: p?.title ?? 'The run could not start',
    specifics: p ? p.detail.split('\n').filter(Boolean) : [],
    next: p ? [p.remedy] : [],
  }),
  cancelled: (_, facts) => ({
    ...BASE,
    kind: 'cancelled',
    severity: 'warning',
    headline: 'The run was cancelled',
    specifics: [facts.exit?.summary || CANCELLED_DETAIL],
    next: ['Run again when you are ready: a fresh runner is already up.'],
  }),
  watchdog: ({ launch }, facts) => {
    const place = launchPlace(launch, facts);
    return {
      ...BASE,
      kind: 'watchdog',
      severity: 'error',
      headline: `The run did not finish in time${launch ? `: ${place.kernel?.entry ?? 'the kernel'} never returned` : ''}; the watchdog stopped it`,
      ...place,
      specifics: saidOnExit(facts),
      next: [
        'Look for a loop whose exit condition no thread can reach, a spin-wait on memory no one writes, or a __syncthreads() that only some threads reach.',
        'If the kernel is just slow, raise the time limit (--timeout, or Time limit in the run form).',
      ],
    };
  },
  'runner-crashed': ({ launch }, facts) => ({
    ...BASE,
    kind: 'runner-crashed',
    severity: 'error',
    headline: 'The runner process died during the run',
    ...launchPlace(launch, facts),
    specifics: saidOnExit(facts),
    next: ['Run again; a fresh runner is already up. If it repeats, run it under compute-sanitizer.'],
  }),
  'no-result': (_, { problem }) => ({ ...BASE, kind: 'cuda-error', severity: 'error', headline: problem?.title ?? 'The run failed' }),
  'out-of-memory': ({ fault }, facts) => outOfMemory(fault, facts),
  'invalid-launch-configuration': ({ fault, errors }, facts) => {
    const { common, specifics, explanation } = faultCommon(fault);
    return {
      ...common,
      kind: 'invalid-launch',
      headline: `${fault.kernel?.entry ?? 'The kernel'} could not be launched with this configuration: ${fault.failure.error.name}`,
      specifics: [...errors.map((x) => x.message).reverse(), ...specifics],
      launchFindings: facts.launchFindings,
      next: errors.flatMap((x) => (x.fix ? [x.fix] : [])).concat(errors.length ? [] : (explanation?.next ?? [])),
    };
  },
  'module-load': ({ fault }) => {
    const { common, specifics, explanation } = faultCommon(fault);
    return {
      ...common,
      kind: 'module-load',
      headline: `The driver could not load the compiled kernel: ${fault.failure.error.name}`,
      specifics,
      next: explanation?.next ?? ['Check `gpu-workbench doctor`: the driver may be older than the toolkit that compiled the kernel.'],
    };
  },
  'plan-error': ({ fault }) => {
    const { common, specifics } = faultCommon(fault);
    return {
      ...common,
      kind: 'plan-error',
      headline: `The plan cannot do step ${fault.step ? fault.step.index + 1 : '?'}: ${fault.failure.error.message}`,
      specifics,
      next: ['Fix the plan and run again.'],
    };
  },
  'device-assert': ({ fault, asserts }) => deviceAssert(fault, asserts),
  'fault-on-freed-buffer': ({ fault, memoryFault }, facts) => cudaError(fault, memoryFault, facts),
  'cuda-error': ({ fault, memoryFault }, facts) => cudaError(fault, memoryFault, facts),
  'out-of-bounds-write': ({ violations }, facts) => outOfBoundsWrite(violations, facts),
  'use-after-free': ({ use: s }, facts) => ({
    ...BASE,
    kind: 'use-after-free',
    severity: 'error',
    headline: `Step ${s.stepIndex + 1} launched ${facts.kernelOf(s.kernel)?.entry} with buffer ${s.buffer}, freed at step ${s.freedAtStep + 1}`,
    step: facts.stepAt(s.stepIndex),
    kernel: facts.kernelOf(s.kernel),
    buffer: s.buffer,
    specifics: ['The launch did not fault this time: freed device memory can stay mapped. The results are not to be trusted.'],
    sanitizer: sanitizerOffer('memcheck', 'memcheck reports every access to freed memory.', facts.planPath),
    next: ['Free a buffer only after the last launch that uses it.'],
  }),
  'wrong-result-from-unwritten-memory': ({ comparison, use: u }, facts) => ({
    ...BASE,
    kind: 'uninitialised-read',
    severity: 'error',
    headline: `${facts.kernelOf(u.kernel)?.entry} read buffer ${u.buffer} before anything wrote it`,
    step: facts.stepAt(u.stepIndex),
    kernel: facts.kernelOf(u.kernel),
    buffer: u.buffer,
    specifics: [
      mismatchSentence(comparison),
      `Buffer ${u.buffer} was allocated but never uploaded before step ${u.stepIndex + 1} passed it to ${facts.kernelOf(u.kernel)?.entry}; the workbench fills new allocations with 0xFF bytes (NaN, or −1), and that is what came back.`,
      'In a host program this memory holds whatever was there before — often zeros, so the bug hides until it does not.',
    ],
    sanitizer: sanitizerOffer('initcheck', INITCHECK_WHY, facts.planPath),
    next: [`Initialise ${u.buffer} before the kernel reads it (an upload step, cudaMemset), or make the kernel write it with = before reading it.`],
  }),
  'wrong-result': ({ comparison: c, downloadStep }, facts) => ({
    ...BASE,
    kind: 'wrong-result',
    severity: 'error',
    headline: `Wrong result in ${c.buffer}: ${partOf(c.mismatches, c.checked, 'element')} ${c.mismatches === 1 ? 'differs' : 'differ'} from ${c.against}, the first at index ${c.first[0]?.index}`,
    step: facts.stepAt(downloadStep),
    kernel: null,
    buffer: c.buffer,
    sanitizer: sanitizerOffer(
      'racecheck',
      'A result that is wrong without any error is often a data race (a missing __syncthreads()); racecheck names the two accesses.',
      facts.planPath,
    ),
    specifics: [mismatchSentence(c), ...mismatchPattern(c), ...determinismSentences(facts.result!, facts.plan)],
    next: ['Look at the first mismatching index: which thread and block wrote it, and what it read.'],
  }),
  'unwritten-memory-read-back': (found, facts) => unwrittenReadBack(found, facts),
  nondeterministic: (found, facts) => nondeterministic(found, facts),
  leak: ({ leaks }) => ({
    ...BASE,
    kind: 'leak',
    severity: 'warning',
    headline: `The plan never frees ${leaks.map((l) => l.name).join(', ')} (${formatBytes(leaks.reduce((sum, l) => sum + l.bytes, 0))})`,
    specifics: [
      'The workbench freed them at teardown; a host program that runs this in a loop would lose this much device memory on every pass.',
      ...leaks.map((l) => `${l.name}: ${formatBytes(l.bytes)}`),
    ],
    next: ['Add a free step for each buffer after its last use.'],
  }),
  ok: (_, facts) => ({
    ...BASE,
    headline: okHeadline(facts.result!),
    specifics: [
      ...facts.result!.buffers.filter((b) => b.nanCount > 0).map((b) => `Buffer ${b.name} holds ${plural(b.nanCount, 'NaN value')}.`),
      ...checksNotRun(facts.result!),
    ],
  }),
};

/** The diagnosis a person reads for a finding. */
export function describeRun(finding: RunFinding, facts: RunFacts): Diagnosis {
  const describe = DESCRIBE[finding.kind] as (finding: RunFinding, facts: RunFacts) => Diagnosis;
  return describe(finding, facts);
}
