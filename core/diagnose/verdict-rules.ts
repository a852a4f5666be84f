import { formatBytes, thousands } from '../format';
import type { FindingGroup } from '../sanitizer/findings';
import { firstRun, runsOf, type Evidence, type RunEvidence } from './evidence';
import { deathSignal, isCrashSignal } from './read-failure';
import { notFaultExplanation } from './python-errors';
import { shortCommand } from './launch-line';
import { placeOf, placeText, type SourcePlace, type Verdict } from './verdict';
import { andList, shellWords } from '../text/shell-words';

/** Where and with what the program ran (the report's program), for advice that shows the command to run it again. */
export interface ProgramPlace {
  cwd: string;
  envChanges: Readonly<Record<string, string>>;
}

type VerdictRule = { id: string; judge: (e: Evidence, program: ProgramPlace | null) => Omit<Verdict, 'rule'> | null };

const finished = (r: RunEvidence | undefined | null): r is RunEvidence => !!r && !r.exit.outOfBudget && !r.exit.cancelled;
const lastOf = (e: Evidence, kind: RunEvidence['kind']) => runsOf(e, kind).filter(finished).at(-1) ?? null;
const groupsOf = (r: RunEvidence | null, kind: FindingGroup['kind']) => (r?.sanitizer?.groups ?? []).filter((g) => g.kind === kind && !heldByAllocator(g));
/** A leak a caching allocator or the workbench held at exit is not the user's (the sanitizer report marks it). */
const heldByAllocator = (g: FindingGroup) => g.heldBy != null;
const framePlace = (g: FindingGroup): SourcePlace | null =>
  g.userFrame?.file && g.userFrame.line ? { file: g.userFrame.file, line: g.userFrame.line, code: null, function: g.userFrame.func } : null;
/** The Python line that launched a group's kernel: the tool's host stack, else the one call of the RawKernel in its file. */
const launchPlace = (run: RunEvidence | null, g: FindingGroup): SourcePlace | null => {
  const found = run?.sanitizer?.launchLines.find((l) => l.key === g.key);
  return framePlace(g) ?? (found ? { file: found.file, line: found.line, code: null, function: null } : null);
};
const kernelOf = (g: FindingGroup) => (g.where ? { name: g.where.func, file: g.where.path, line: g.where.line } : null);
const kernelText = (k: { name: string; file: string | null; line: number | null }) =>
  `${k.name}${k.file ? ` (${k.file.split('/').pop()}${k.line ? `:${k.line}` : ''})` : ''}`;
const mappedWhere = (g: FindingGroup) =>
  g.sourceMapped ? { name: g.where?.func ?? 'kernel', file: g.sourceMapped.file, line: g.sourceMapped.line } : kernelOf(g);

/** The operation's true line: the blocking re-run's, else the sanitizer's launch frame, else the first run's. */
function trueLine(e: Evidence, memcheck: RunEvidence | null): { line: SourcePlace | null; misleading: SourcePlace | null; how: string } {
  const first = firstRun(e)!;
  const blocking = lastOf(e, 'blocking');
  const reported = placeOf(first.failure.userFrame);
  if (blocking?.failure.userFrame) {
    const line = placeOf(blocking.failure.userFrame)!;
    const moved = reported && (reported.file !== line.file || reported.line !== line.line);
    return { line, misleading: moved ? reported : null, how: moved ? 'found by the re-run with CUDA_LAUNCH_BLOCKING=1' : 'confirmed by the blocking re-run' };
  }
  const launched = memcheck?.sanitizer?.groups.map((g) => launchPlace(memcheck, g)).find((p) => p !== null) ?? null;
  if (launched) return { line: launched, misleading: reported, how: 'from the launch stack memcheck recorded' };
  if (first.failure.launchBlocking === true) return { line: reported, misleading: null, how: 'CUDA_LAUNCH_BLOCKING=1 was already set' };
  return { line: reported, misleading: null, how: 'where the error surfaced: the real operation may be earlier (no blocking re-run was made)' };
}

function hiddenGpu(e: Evidence): Omit<Verdict, 'rule'> | null {
  const first = firstRun(e);
  const visible = e.environment.checks.find((c) => c.id === 'cuda-visible-devices' || c.id === 'cuda-visible-devices-missing');
  if (!first || first.failure.category !== 'cuda-error' || !visible || visible.status === 'ok') return null;
  const noDevice = /No CUDA GPUs are available|no CUDA-capable device|cudaErrorNoDevice|CUDA_ERROR_NO_DEVICE|invalid device ordinal/i.test(first.output);
  if (!noDevice) return null;
  return {
    kind: 'environment',
    sentence: `The program found no GPU because ${visible.detail.replace(/\.$/, '')}.`,
    userLine: placeOf(first.failure.userFrame),
    misleadingLine: null,
    kernel: null,
    cause: `${first.failure.title}: ${visible.detail}`,
    whatToDo: [visible.remedy ?? 'Unset CUDA_VISIBLE_DEVICES, or list GPUs that exist here.'],
  };
}

function deviceAssert(e: Evidence): Omit<Verdict, 'rule'> | null {
  const first = firstRun(e);
  const assert = first?.failure.asserts[0] ?? lastOf(e, 'blocking')?.failure.asserts[0];
  if (!first || first.failure.category !== 'kernel-fault' || !assert) return null;
  const { line, misleading, how } = trueLine(e, lastOf(e, 'memcheck'));
  const op = assert.operation ? ` (${assert.operation})` : '';
  return {
    kind: 'device-assert',
    sentence: `A device-side assert failed in ${assert.kernel}${op}${line ? `, called at ${placeText(line)}` : ''}: \`${assert.condition}\` was false in ${assert.failedThreads} thread${assert.failedThreads === 1 ? '' : 's'}.`,
    userLine: line,
    misleadingLine: misleading,
    kernel: { name: assert.kernel, file: assert.file, line: assert.line },
    cause: `${assert.likelyCause ?? `The kernel's own check \`${assert.condition}\` failed at ${assert.file}:${assert.line}.`} The line is ${how}${misleading ? `; the first run blamed ${placeText(misleading)}, a later call that only reported the error` : ''}.`,
    whatToDo: [
      ...(assert.likelyCause ? [] : ['Check the inputs of that call against the condition the kernel asserts.']),
      'The context is dead after a device-side assert: restart the process (in Jupyter, the kernel) after fixing it.',
    ],
  };
}

function memoryFault(e: Evidence): Omit<Verdict, 'rule'> | null {
  const first = firstRun(e);
  const memcheck = lastOf(e, 'memcheck');
  const access = groupsOf(memcheck, 'memory-access')[0] ?? groupsOf(memcheck, 'device-error')[0];
  if (!first || !access) return null;
  const faulted = first.failure.category === 'kernel-fault';
  const { line, misleading, how } = faulted
    ? trueLine(e, memcheck)
    : { line: launchPlace(memcheck, access), misleading: null, how: 'from the launch stack memcheck recorded' };
  const kernel = mappedWhere(access);
  const threads = access.count > 1 ? `${access.count} accesses` : 'one access';
  return {
    kind: 'memory-fault',
    sentence: `${access.text.replace(/\.$/, '')} in ${kernel ? kernelText(kernel) : 'a kernel'}${line ? `, launched at ${placeText(line)}` : ''}${faulted ? '' : ' — it did not crash the program, but the result is not to be trusted'}.`,
    userLine: line ?? launchPlace(memcheck, access),
    misleadingLine: misleading,
    kernel,
    cause: `memcheck saw ${threads} outside what the program allocated${nearestText(access)}${access.example.thread ? `, first by thread (${dim(access.example.thread)}) of block (${access.example.block ? dim(access.example.block) : '?'})` : ''}. The Python line is ${how}.`,
    whatToDo: [
      'Check the kernel’s index against the size of the array it reads or writes (a bounds test `if (i < n)`, not `<=`), and the grid against the data: the last block often runs past the end.',
    ],
  };
}

const dim = (d: { x: number; y: number; z: number }) => `${d.x},${d.y},${d.z}`;
function nearestText(g: FindingGroup): string {
  const n = g.example.nearest;
  if (!n) return '';
  const where = n.side === 'inside' ? 'inside' : `${thousands(n.distance)} bytes ${n.side}`;
  return ` (${where} the allocation at ${n.allocation} of ${thousands(n.allocationSize)} bytes)`;
}

/** The advice a first run's error gives, less what the diagnosis has already done (a blocking re-run, memcheck). */
function notYetDone(e: Evidence, advice: string[]): string[] {
  const blocking = lastOf(e, 'blocking') !== null;
  const memcheckRun = lastOf(e, 'memcheck');
  const memcheck = memcheckRun !== null && memcheckLooked(memcheckRun);
  const left = advice.filter((a) => !(blocking && /CUDA_LAUNCH_BLOCKING/.test(a)) && !(memcheck && /compute-sanitizer|memcheck/.test(a)));
  return left.length ? left : ['Fix the operation at the line above: its inputs (indices, sizes, pointers) against what the kernel was given.'];
}

/**
 * memcheck watched the run and said what it saw: it found something or nothing, or the program crashed on the host
 * under it (the tool then has no summary to print, but watched every kernel up to the crash). Not a tool that failed
 * by itself, or was stopped.
 */
const memcheckLooked = (r: RunEvidence) =>
  !r.sanitizer?.unavailable &&
  (r.sanitizer?.verdict === 'clean' || r.sanitizer?.verdict === 'found' || (r.sanitizer?.verdict === 'tool-failed' && r.failure.category === 'host-crash'));

function memcheckSaid(e: Evidence): string {
  const memcheck = lastOf(e, 'memcheck');
  if (!memcheck?.sanitizer) return '';
  if (memcheck.sanitizer.unavailable) return ` memcheck could not run (${memcheck.sanitizer.unavailable.replace(/\.$/, '')}).`;
  if (!memcheckLooked(memcheck)) return ` memcheck gave no verdict (${memcheck.sanitizer.headline.replace(/\.$/, '')}).`;
  return ' memcheck saw no out-of-bounds or misaligned access.';
}

function kernelFault(e: Evidence): Omit<Verdict, 'rule'> | null {
  const first = firstRun(e);
  if (first?.failure.category !== 'kernel-fault') return null;
  const { line, misleading, how } = trueLine(e, lastOf(e, 'memcheck'));
  return {
    kind: 'kernel-fault',
    sentence: `A kernel failed with ${first.failure.error?.name ?? 'a fault'}${line ? `, in the operation at ${placeText(line)}` : ''}.`,
    userLine: line,
    misleadingLine: misleading,
    kernel: null,
    cause: `${first.failure.title}. The line is ${how}.${memcheckSaid(e)}`,
    whatToDo: notYetDone(e, first.failure.specifics).slice(0, 3),
  };
}

function outOfMemory(e: Evidence): Omit<Verdict, 'rule'> | null {
  const first = firstRun(e);
  if (first?.failure.category !== 'out-of-memory') return null;
  const oom = first.failure.oom;
  const picture = lastOf(e, 'allocator-history')?.oomPicture ?? null;
  const line = placeOf(first.failure.userFrame);
  const request = oom ? formatBytes(oom.requestedBytes) : null;
  const alive =
    picture?.aliveByLine
      .slice(0, 3)
      .map((a) => `${formatBytes(a.bytes)} from ${a.frame ? `${a.frame.file.split('/').pop()}:${a.frame.line}` : 'lines not recorded'}`) ?? [];
  const holder = oom?.bigHolder?.who === 'other-process' ? describeOtherProcess(e, oom.bigHolder.pid, oom.bigHolder.bytes) : null;
  const why =
    holder ??
    (oom?.cause === 'request-larger-than-gpu' || oom?.cause === 'request-most-of-gpu'
      ? `the request alone is ${oom.totalBytes ? Math.round((oom.requestedBytes / oom.totalBytes) * 100) : '?'}% of the GPU`
      : oom?.cause === 'fragmentation'
        ? 'the free memory is there but fragmented'
        : oom?.cause === 'this-process'
          ? 'this process already holds most of the GPU'
          : 'the GPU had too little free');
  return {
    kind: 'out-of-memory',
    sentence: `Out of GPU memory${line ? ` at ${placeText(line)}` : ''}${request ? `, asking for ${request}` : ''}: ${why}.`,
    userLine: line,
    misleadingLine: null,
    kernel: null,
    cause: [
      alive.length
        ? `Alive at the failure: ${alive.join(', ')}.`
        : picture?.missing
          ? `No allocator history: ${picture.missing}`
          : picture
            ? 'PyTorch itself held nothing at the failure.'
            : null,
      ...first.failure.specifics.slice(0, -1),
    ]
      .filter(Boolean)
      .join(' '),
    whatToDo: first.failure.specifics.slice(-1),
  };
}

/** "process 547 (a child of the program: python3 -c … cache-server), 119 GiB". */
export function describeOtherProcess(e: Evidence, pid: number | null, bytes: number): string {
  const seen = pid === null ? undefined : e.runs.flatMap((r) => r.processes ?? []).find((p) => p.pid === pid);
  const before = pid === null ? undefined : e.environment.processes.find((p) => p.pid === pid);
  const what = seen
    ? `${seen.childOfProgram ? 'a child of the program' : 'another process'}${seen.command ? `: ${shortCommand(seen.command)}` : ''}`
    : before
      ? `running before the program started${before.command ? `: ${shortCommand(before.command)}` : ''}`
      : 'another process';
  return `${pid === null ? 'other processes' : `process ${pid}`} (${what}) held ${formatBytes(bytes)}`;
}

function hostCrash(e: Evidence): Omit<Verdict, 'rule'> | null {
  const first = firstRun(e);
  const signal = first ? deathSignal(first.exit) : null;
  if (!first || !isCrashSignal(signal)) return null;
  const handler = lastOf(e, 'fault-handler');
  const line = placeOf(handler?.failure.userFrame ?? first.failure.userFrame);
  const memcheck = lastOf(e, 'memcheck');
  const deviceFound = groupsOf(memcheck, 'memory-access').length + groupsOf(memcheck, 'device-error').length > 0;
  const memcheckSays = !memcheck?.sanitizer
    ? 'memcheck could not run, so a device fault is not ruled out'
    : memcheck.sanitizer.unavailable
      ? `memcheck could not run (${memcheck.sanitizer.unavailable}), so a device fault is not ruled out`
      : deviceFound
        ? 'memcheck found a device fault before the crash: fix that first'
        : !memcheckLooked(memcheck)
          ? `memcheck gave no verdict (${memcheck.sanitizer.headline.replace(/\.$/, '')}), so a device fault is not ruled out`
          : 'memcheck saw no device error, so the fault is in host code';
  const via = handler?.failure.innermost ? ` inside ${handler.failure.innermost.function}` : '';
  return {
    kind: 'host-crash',
    sentence: `The process crashed on the host with ${signal}${line ? ` at ${placeText(line)}${via}` : ''}; ${memcheckSays}.`,
    userLine: line,
    misleadingLine: null,
    kernel: null,
    cause: `${first.failure.exitText}. ${line ? `Python's fault handler named the line.` : 'No line was found (the program is not Python, or the crash was in a thread the fault handler did not see).'}`,
    whatToDo: [
      'In ctypes code the usual causes are a device pointer read or written on the host (cudaMalloc memory is not host memory: copy it with cudaMemcpy first), and a function without argtypes/restype, so a 64-bit pointer was cut to a 32-bit int.',
    ],
  };
}

function notAFault(e: Evidence): Omit<Verdict, 'rule'> | null {
  const first = firstRun(e);
  if (!first || (first.failure.category !== 'python-error' && first.failure.category !== 'cuda-error')) return null;
  const known = notFaultExplanation(first.failure, first.output, e);
  const line = placeOf(first.failure.userFrame);
  return {
    kind: first.failure.category,
    sentence: `${known?.sentence ?? first.failure.title}${line ? ` at ${placeText(line)}` : ''}. Not a fault: nothing to re-run.`,
    userLine: line,
    misleadingLine: null,
    kernel: null,
    cause: known?.cause ?? first.failure.title,
    whatToDo: known?.fix ? [known.fix] : first.failure.specifics.slice(0, 2),
  };
}

function sanitizerFound(kind: 'leak' | 'race' | 'uninitialised-read', tool: 'memcheck' | 'racecheck' | 'initcheck') {
  return (e: Evidence): Omit<Verdict, 'rule'> | null => {
    const run = lastOf(e, tool);
    const group = groupsOf(run, kind)[0];
    if (!group) return null;
    const kernel = kind === 'leak' ? null : mappedWhere(group);
    const line = launchPlace(run, group);
    const leaked = groupsOf(run, 'leak').reduce((sum, g) => sum + g.leakedBytes, 0);
    const text: Record<typeof kind, string> = {
      leak: `The program leaks ${formatBytes(leaked)} of device memory${line ? `, allocated at ${placeText(line)}` : ''}: it was never freed before exit.`,
      race: `A shared-memory race in ${kernel ? kernelText(kernel) : 'a kernel'}${line ? `, launched at ${placeText(line)}` : ''}: ${thousands(group.hazards)} hazards.`,
      'uninitialised-read': `${kernel ? kernelText(kernel) : 'A kernel'} reads device memory nothing wrote${line ? ` (launched at ${placeText(line)})` : ''}.`,
    };
    const fix: Record<typeof kind, string> = {
      leak: 'Free what you allocate (cudaFree, or let the framework own the memory), on every path out, errors included.',
      race: 'Put __syncthreads() between the writes to shared memory and the reads of other threads’ slots (in a tree reduction, one per step of the loop).',
      'uninitialised-read': 'Write the memory before reading it (cudaMemset, or the kernel that fills it), or read only the part that was written.',
    };
    return {
      kind,
      sentence: text[kind],
      userLine: line,
      misleadingLine: null,
      kernel,
      cause: `${tool} found it: ${group.text}`,
      whatToDo: [fix[kind]],
    };
  };
}

type PassKind = 'memcheck' | 'racecheck' | 'initcheck';
const isPass = (kind: string): kind is PassKind => kind === 'memcheck' || kind === 'racecheck' || kind === 'initcheck';

/** Why a pass says nothing: it could not run or gave no verdict (`reason` says why), ran out of time, was cancelled. */
interface SilentPass {
  kind: PassKind;
  state: 'could-not-run' | 'no-verdict' | 'out-of-budget' | 'cancelled';
  reason: string | null;
}

/** A reason as a clause inside a sentence: no full stop, and a capital only where the word needs one ("It" → "it"). */
const asClause = (text: string) => text.replace(/\.$/, '').replace(/^[A-Z](?=[a-z])/, (c) => c.toLowerCase());

/** Each sanitizer pass the evidence holds or asked for: clean, or why it says nothing (never "clean" when it could not look). */
function passesOf(e: Evidence): { clean: string[]; silent: SilentPass[] } {
  const clean: string[] = [];
  const silent: SilentPass[] = [];
  for (const r of e.runs) {
    if (!r.sanitizer || !isPass(r.kind)) continue;
    if (r.sanitizer.unavailable) silent.push({ kind: r.kind, state: 'could-not-run', reason: asClause(r.sanitizer.unavailable) });
    else if (r.exit.outOfBudget) silent.push({ kind: r.kind, state: 'out-of-budget', reason: null });
    else if (r.exit.cancelled) silent.push({ kind: r.kind, state: 'cancelled', reason: null });
    else if (r.sanitizer.verdict === 'clean') clean.push(r.kind);
    else silent.push({ kind: r.kind, state: 'no-verdict', reason: asClause(r.sanitizer.headline) });
  }
  for (const n of e.notRun)
    if (isPass(n.kind)) silent.push({ kind: n.kind, state: n.reason.startsWith('cancelled') ? 'cancelled' : 'out-of-budget', reason: null });
  return { clean, silent };
}

/** The silent passes in one clause each for those that share a state and a reason: "memcheck and racecheck could not run (…)". */
function silentText(silent: readonly SilentPass[]): string {
  const groups: { names: string[]; pass: SilentPass }[] = [];
  for (const pass of silent) {
    const same = groups.find((g) => g.pass.state === pass.state && g.pass.reason === pass.reason);
    if (same) same.names.push(pass.kind);
    else groups.push({ names: [pass.kind], pass });
  }
  return groups
    .map(({ names, pass }) => {
      const was = names.length === 1 ? 'was' : 'were';
      const what = {
        'could-not-run': `could not run (${pass.reason})`,
        'no-verdict': `gave no verdict (${pass.reason})`,
        'out-of-budget': `${was} stopped, or not started, when the time budget ran out`,
        cancelled: `${was} cancelled`,
      }[pass.state];
      return `${andList(names)} ${what}`;
    })
    .join('; ');
}

/**
 * What to do about passes that did not look, from why they did not: the command that runs one alone, with the program's
 * own words and folder. Its variables are named, not written out: their values may be secrets a bundle hides.
 */
function silentAdvice(e: Evidence, silent: readonly SilentPass[], program: ProgramPlace | null): string[] {
  const advice: string[] = [];
  const failed = [...new Set(silent.filter((p) => p.state === 'could-not-run' || p.state === 'no-verdict').map((p) => p.kind))];
  if (failed.length) {
    const [first, ...others] = failed;
    const also = others.length ? ` (and the same with ${andList(others.map((k) => `--tool ${k}`))})` : '';
    const cwd = program ? ` --cwd ${shellWords([program.cwd])}` : '';
    const command = `gpu-workbench sanitize --tool ${first}${cwd} -- ${shellWords(e.argv)}`;
    // As code where it can be (a backtick or a newline in it would end the span early).
    const shown = /[`\n]/.test(command) ? command : `\`${command}\``;
    const names = Object.keys(program?.envChanges ?? {});
    const variables = names.length ? ` Give it the variables the program ran with, too: ${andList(names.map((n) => `--env ${n}=…`))}.` : '';
    advice.push(`Run ${failed.length === 1 ? 'it' : 'each'} alone to see what compute-sanitizer says: ${shown}${also}.${variables}`);
  }
  if (silent.some((p) => p.state === 'out-of-budget'))
    advice.push('Diagnose it again with a longer time budget (--budget): the sanitizer passes run the program several times slower.');
  if (silent.some((p) => p.state === 'cancelled')) advice.push('Diagnose it again with the sanitizer passes, and let them finish.');
  return advice;
}

function clean(e: Evidence, program: ProgramPlace | null): Omit<Verdict, 'rule'> | null {
  const first = firstRun(e);
  if (first?.failure.category !== 'clean') return null;
  const { clean: passes, silent } = passesOf(e);
  const asked = passes.length + silent.length > 0;
  const found = passes.length ? `, and ${andList(passes)} found nothing` : '';
  if (silent.length)
    // Not ✓: a check that was asked for did not look, so what it looks for is not ruled out.
    return {
      kind: 'incomplete',
      sentence: `The program exited cleanly${found}, but not every check looked: ${silentText(silent)}.`,
      userLine: null,
      misleadingLine: null,
      kernel: null,
      cause: `${passes.length ? `Checked by: ${andList(passes)}. ` : ''}Not checked by ${andList([...new Set(silent.map((p) => p.kind))])}: what ${silent.length === 1 ? 'it looks' : 'they look'} for is not ruled out.`,
      whatToDo: silentAdvice(e, silent, program),
    };
  return {
    kind: 'clean',
    sentence: asked ? `The program exited cleanly${found}.` : 'The program exited cleanly and printed no CUDA error; the sanitizer passes were not run.',
    userLine: null,
    misleadingLine: null,
    kernel: null,
    cause: passes.length
      ? `Checked by: ${passes.join(', ')}.`
      : 'Only the run itself was watched: races, out-of-bounds accesses that did not crash and leaks are invisible to it.',
    whatToDo: asked ? [] : ['Run it again with --thorough for memcheck (with its leak check), racecheck and initcheck.'],
  };
}

/**
 * What a sanitizer pass found that no rule above names (an API call that returned an error, a barrier not reached by
 * every thread, anything else it reports): never "clean" while the tool reported it.
 */
function otherSanitizerFinding(e: Evidence): Omit<Verdict, 'rule'> | null {
  for (const tool of ['memcheck', 'racecheck', 'initcheck'] as const) {
    const run = lastOf(e, tool);
    const group = (run?.sanitizer?.groups ?? []).find((g) => !heldByAllocator(g) && g.severity !== 'info');
    if (!run || !group) continue;
    const kernel = group.where ? mappedWhere(group) : null;
    const line = launchPlace(run, group);
    const api = group.example.api;
    const what = api ? `${api.call} returned ${api.error}` : group.text.replace(/\.$/, '');
    return {
      kind: 'sanitizer-finding',
      sentence: `${tool} reported: ${what}${kernel ? ` in ${kernelText(kernel)}` : ''}${line ? `, at ${placeText(line)}` : ''}${group.count > 1 ? ` (${thousands(group.count)} times)` : ''}.`,
      userLine: line,
      misleadingLine: null,
      kernel,
      cause: `${tool} found it: ${group.text}`,
      whatToDo: [
        api
          ? `Check the result of every CUDA call (${api.call} here): an error the program ignores leaves what follows working on memory or state that is not what it expects.`
          : group.kind === 'barrier'
            ? 'Make every thread of the block reach each __syncthreads() (no barrier inside a branch that only some threads take).'
            : `Read ${tool}'s report of it in the step below.`,
      ],
    };
  }
  return null;
}

function unexplained(e: Evidence): Omit<Verdict, 'rule'> | null {
  const first = firstRun(e);
  if (!first || first.failure.category === 'stopped') return null;
  return {
    kind: 'unexplained-exit',
    sentence: `The program ${first.failure.exitText}, and printed no error the workbench recognises.`,
    userLine: placeOf(first.failure.userFrame),
    misleadingLine: null,
    kernel: null,
    cause: 'Its output holds no CUDA error, no out-of-memory and no traceback.',
    whatToDo: ['Read its output below: the program may report the failure in its own words.'],
  };
}

function stopped(e: Evidence): Omit<Verdict, 'rule'> | null {
  const first = firstRun(e);
  const why = first ? `the program ${first.failure.exitText.replace(/^stopped: /, 'was stopped: ')}` : 'it was stopped before the program ran';
  return {
    kind: 'stopped',
    sentence: `The diagnosis did not finish: ${why}.`,
    userLine: null,
    misleadingLine: null,
    kernel: null,
    cause: e.notRun.length ? `Not done: ${e.notRun.map((n) => `${n.kind} (${n.reason})`).join('; ')}.` : 'Nothing was found before it stopped.',
    whatToDo: ['Give it a longer time budget (--budget in the CLI), or make the program fail sooner (a smaller input).'],
  };
}

/** Verdicts in priority order: the first rule that concludes is the diagnosis. */
export const VERDICT_RULES: readonly VerdictRule[] = [
  { id: 'gpu-hidden-by-environment', judge: hiddenGpu },
  { id: 'device-assert', judge: deviceAssert },
  { id: 'memory-fault-found-by-memcheck', judge: memoryFault },
  { id: 'kernel-fault', judge: kernelFault },
  { id: 'out-of-memory', judge: outOfMemory },
  { id: 'host-crash', judge: hostCrash },
  { id: 'error-that-is-not-a-fault', judge: notAFault },
  { id: 'leak-found-by-memcheck', judge: sanitizerFound('leak', 'memcheck') },
  { id: 'race-found-by-racecheck', judge: sanitizerFound('race', 'racecheck') },
  { id: 'uninitialised-read-found-by-initcheck', judge: sanitizerFound('uninitialised-read', 'initcheck') },
  { id: 'other-sanitizer-finding', judge: otherSanitizerFinding },
  { id: 'clean', judge: clean },
  { id: 'unexplained-exit', judge: unexplained },
  { id: 'stopped', judge: stopped },
];

/** The diagnosis of the evidence; `program` (where and with what it ran) lets advice show the whole command. */
export function judge(e: Evidence, program: ProgramPlace | null = null): Verdict {
  for (const rule of VERDICT_RULES) {
    const v = rule.judge(e, program);
    if (v) return { ...v, rule: rule.id };
  }
  return { ...stopped(e)!, rule: 'stopped' };
}
