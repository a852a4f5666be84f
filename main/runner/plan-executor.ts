import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { freemem } from 'node:os';

import { isOutOfMemory, isSticky } from '../../core/cuda/error-catalog';
import { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES } from '../../core/cuda/function-attributes';
import { formatBytes } from '../../core/format';
import { initialBytes, summarizeBuffer } from '../../core/plan/buffer-data';
import { compareBuffer } from '../../core/plan/compare';
import { elementSize } from '../../core/plan/element-types';
import { diffBitwise, planDeterminism, replayableEnd } from '../../core/plan/determinism';
import { raisedDynamicSharedLimit } from '../../core/validate/launch-repair';
import { findGuardDamage, GUARD_PATTERN, POISON_BYTE } from '../../core/plan/guards';
import { nanChange, scanPoison } from '../../core/plan/poison';
import { encodePointer, encodeScalar } from '../../core/plan/kernel-args';
import { stepLabel } from '../../core/plan/step-label';
import { bytesOf, type BufferSpec, type LaunchPlan, type Step } from '../../core/plan/plan-schema';
import type { DeviceOutput } from '../../core/runner/device-output';
import { RunEventRecorder } from '../../core/runner/event-recorder';
import type { CompiledModule } from '../../core/runner/protocol';
import {
  timingStats,
  type CudaErrorInfo,
  type DeterminismReport,
  type PoisonProbe,
  type FunctionAttributes,
  type LaunchRecord,
  type RunChecksReport,
  type AllocationRecord,
  type RunResult,
  type StepRecord,
} from '../../core/runner/run-result';
import { BoundedCache } from '../../core/bounded-cache';
import type { NativeAddon } from '../native/addon';
import type { LoadedFunction } from './module-cache';
import { toCudaError } from './cuda-error';

/** Device printf text kept per step; a kernel printing in a loop can write far more. */
const DEVICE_OUTPUT_BYTES_PER_STEP = 64 * 1024;
/** Read-back data kept for paging; past this the run still reports summaries, but pages are not kept. */
const RETAINED_BYTES_LIMIT = 1024 ** 3;

class StepFailure extends Error {
  constructor(readonly error: CudaErrorInfo) {
    super(error.message);
  }
}

const workbenchError = (api: string, message: string): StepFailure =>
  new StepFailure({ library: 'workbench', api, code: -1, name: 'WORKBENCH_PLAN_ERROR', message });

interface Allocation {
  /** What cuMemAlloc returned: guards included. */
  base: bigint;
  /** What the kernel gets: past the front guard. */
  pointer: bigint;
  /** `pointer` in hex, as the result and the event log name it. */
  address: string;
  bytes: number;
}

export interface ExecutedPlan {
  result: RunResult;
  /** The read-back bytes, by buffer name, for paging (empty when over the retention limit). */
  downloads: Map<string, { type: BufferSpec['type']; bytes: Uint8Array }>;
}

/**
 * Runs a plan in this (runner) process. Every launch is followed by a synchronisation, so an error is
 * pinned to the step that caused it — what CUDA_LAUNCH_BLOCKING=1 does for a host program. Buffers
 * get guard bytes around them and start poisoned (see core/plan/guards.ts), so out-of-bounds writes
 * and reads of memory never written show up in the result rather than passing silently.
 */
export async function executePlan(
  addon: NativeAddon,
  plan: LaunchPlan,
  modules: CompiledModule[],
  device: { ordinal: number; name: string },
  /** The module's function; `loaded` when this call loaded it (a cache hit is no driver call, and no event). */
  loadFunction: (module: CompiledModule) => Promise<{ fn: LoadedFunction; loaded: boolean }>,
  runId: string,
  timeLimitMs: number | null = null,
): Promise<ExecutedPlan> {
  const runStarted = performance.now();
  const startedAtMs = Date.now();
  /** Every driver call that touches memory or time, on the run's time axis (core/runner/event-log.ts). */
  const log = new RunEventRecorder(() => performance.now(), runStarted);
  try {
    // The GPU's time zero for this run: launches are placed after it. Without it they carry no placement.
    await addon.markTimeOrigin();
  } catch {
    // An addon without it, or a context that refused the event: the launches' `gpu` lists stay empty.
  }
  const guard = plan.checks.guardBytes;
  const buffers = new Map<string, BufferSpec>(plan.buffers.map((b) => [b.name, b]));
  const allocations = new Map<string, Allocation>();
  const freed = new Map<string, { pointer: bigint; stepIndex: number }>();
  const memory: AllocationRecord[] = [];
  const written = new Set<string>();
  const functions = new Map<string, { id: number; entry: string; attributes: FunctionAttributes; loaded: LoadedFunction }>();
  const steps: StepRecord[] = [];
  const launches: LaunchRecord[] = [];
  const summaries: RunResult['buffers'] = [];
  const downloads = new Map<string, { type: BufferSpec['type']; bytes: Uint8Array }>();
  const checks: RunChecksReport = { guardBytes: guard, poison: plan.checks.poison, guardViolations: [], staleUses: [], uninitialised: [], comparisons: [] };
  let failure: RunResult['failure'] = null;
  const uploadedBeforeUse = allocStepsUploadedBeforeUse(plan);
  /** Buffers allocated with the poison pattern and never uploaded: whatever of it a kernel left shows. */
  const poisoned = new Set<string>();
  const determinism = planDeterminism(plan);
  /** The first run's read-backs by step, for the determinism check to compare with. */
  const firstRun = new Map<number, Uint8Array>();
  /** Each launch step's encoded arguments, for the replay. */
  const launchArgs = new Map<number, Uint8Array[]>();
  const deviceOutput: DeviceOutput[] = [];
  const capturing = addon.captureOutputStart();
  /** What the kernels printed since the last take, filed under the step that synchronised. */
  const takeOutput = (stepIndex: number) => {
    if (!capturing) return;
    const { text, droppedBytes } = addon.captureOutputTake(DEVICE_OUTPUT_BYTES_PER_STEP);
    if (text || droppedBytes) deviceOutput.push({ stepIndex, text, droppedBytes });
  };

  /** The failure's event in the log, for the memory figures an allocation that ran out learns after. */
  let failureEvent: ReturnType<RunEventRecorder['error']> = null;
  const fail = (stepIndex: number | null, op: string, kernel: string | null, error: unknown) => {
    const info = error instanceof StepFailure ? error.error : toCudaError(error, op);
    failure = { stepIndex, op, kernel, error: info, sticky: isSticky(info) };
    failureEvent = log.error(info);
  };

  log.phase = 'load';
  for (const module of modules) {
    try {
      log.begin();
      const { fn, loaded } = await loadFunction(module);
      if (loaded) log.moduleLoad(module.kernel, module.image.byteLength);
      else log.skip();
      const entry = plan.kernels.find((k) => k.id === module.kernel)?.entry ?? module.symbol;
      functions.set(module.kernel, { id: fn.id, entry, attributes: fn.attributes, loaded: fn });
    } catch (error) {
      fail(null, 'load', module.kernel, error);
      break;
    }
  }
  log.phase = 'run';

  const replayable = replayableEnd(plan);
  // The first run's read-backs are kept by step for the replays: the determinism check and the poison probe.
  const replayAt = typeof replayable === 'number' && (determinism.runs > 0 || plan.checks.poison) ? replayable : -1;
  for (let index = 0; index < plan.steps.length && !failure; index++) {
    if (index === replayAt) {
      await replays();
      if (failure) break; // a replay's fault is the run's: the frees after it must not replace it
    }
    const step = plan.steps[index]!;
    const started = performance.now();
    let ms: number | null = null;
    log.step = index;
    try {
      ms = await runStep(step, index);
    } catch (error) {
      fail(index, step.op, step.op === 'launch' ? step.kernel : null, error);
      const f = failure as RunResult['failure'];
      if (f && step.op === 'alloc' && isOutOfMemory(f.error)) {
        const info = await addon.memGetInfo().catch(() => null);
        f.memory = info && { requestedBytes: bytesOf(buffers.get(step.buffer)!), ...info };
        const event = failureEvent as ReturnType<RunEventRecorder['error']>; // set by fail(), which TS cannot see
        if (event) event.memory = f.memory;
      }
    }
    if (step.op === 'launch' || step.op === 'sync' || failure) takeOutput(index);
    const wallMs = performance.now() - started;
    steps.push({ index, op: step.op, label: stepLabel(step, plan), ms: failure ? null : (ms ?? wallMs), wallMs });
  }

  if (!failure && replayAt === plan.steps.length) await replays();
  checks.determinism ??= {
    status: determinism.off ? 'off' : 'skipped',
    reason: determinism.skipped ?? 'the run failed before the check',
    runs: 0,
    ms: 0,
    differences: [],
  };

  // A run that stopped early never reached its free steps: that is not a leak in the plan.
  const leaks = failure ? [] : [...allocations].map(([name, a]) => ({ name, bytes: a.bytes }));
  const contextAlive = !(failure as RunResult['failure'])?.sticky;
  if (contextAlive) {
    log.phase = 'teardown';
    log.step = null;
    for (const [name, a] of allocations) {
      log.begin();
      try {
        await addon.memFree(a.base);
        log.free(name, a.address, a.bytes, a.bytes + 2 * guard);
      } catch (error) {
        log.error(toCudaError(error, 'cuMemFree_v2'));
      }
    }
  }
  if (capturing) {
    takeOutput(Math.max(0, steps.length - 1));
    addon.captureOutputStop();
  }
  const retained = [...downloads.values()].reduce((sum, d) => sum + d.bytes.byteLength, 0) <= RETAINED_BYTES_LIMIT;
  if (!retained) downloads.clear();

  return {
    downloads,
    result: {
      runId,
      ok: failure === null,
      executeMs: performance.now() - runStarted,
      device,
      functions: [...functions].map(([kernel, f]) => ({ kernel, entry: f.entry, attributes: f.attributes })),
      steps,
      launches,
      buffers: summaries,
      leaks,
      memory,
      checks,
      pageable: [...downloads.keys()],
      failure,
      deviceOutput,
      startedAtMs,
      ...log.finish(),
      runnerPid: process.pid,
    },
  };

  async function runStep(step: Step, index: number): Promise<number | null> {
    switch (step.op) {
      case 'alloc': {
        const spec = buffers.get(step.buffer)!;
        if (allocations.has(step.buffer)) throw workbenchError('cuMemAlloc_v2', `buffer "${step.buffer}" is already allocated`);
        const bytes = bytesOf(spec);
        // Poison only what a kernel could read before the plan writes it: an upload first makes it moot.
        const poison = plan.checks.poison && !uploadedBeforeUse.has(index) ? POISON_BYTE : -1;
        log.begin();
        const base = await addon.memAllocGuarded(bytes, guard, GUARD_PATTERN, poison);
        const pointer = base + BigInt(guard);
        const address = `0x${pointer.toString(16)}`;
        // One event: the guard and poison fills are made inside the same addon call, and timed with it.
        log.alloc(step.buffer, address, bytes, bytes + 2 * guard);
        allocations.set(step.buffer, { base, pointer, address, bytes });
        memory.push({ buffer: step.buffer, address, bytes, allocatedAtStep: index, freedAtStep: null });
        freed.delete(step.buffer);
        if (poison === POISON_BYTE) poisoned.add(step.buffer);
        return null;
      }
      case 'upload': {
        const spec = buffers.get(step.buffer)!;
        const target = allocated(step.buffer, 'cuMemcpyHtoD_v2');
        const ms = await upload(spec, target);
        written.add(step.buffer);
        poisoned.delete(step.buffer);
        return ms;
      }
      case 'launch': {
        const fn = functions.get(step.kernel);
        if (!fn) throw workbenchError('cuLaunchKernel', `kernel "${step.kernel}" was not loaded`);
        const passed: string[] = [];
        const args = step.args.map((arg) => {
          if (!('buffer' in arg)) return encodeScalar(arg.scalar.type, arg.scalar.value);
          passed.push(arg.buffer);
          const stale = !allocations.has(arg.buffer) ? freed.get(arg.buffer) : undefined;
          if (stale) {
            // A host program would pass the dangling pointer; so does the runner, and says so.
            checks.staleUses.push({ stepIndex: index, kernel: step.kernel, buffer: arg.buffer, freedAtStep: stale.stepIndex });
            return encodePointer(stale.pointer);
          }
          const a = allocated(arg.buffer, 'cuLaunchKernel');
          if (!written.has(arg.buffer)) checks.uninitialised.push({ stepIndex: index, kernel: step.kernel, buffer: arg.buffer });
          return encodePointer(a.pointer);
        });
        await setDynamicSharedLimit(fn, step.sharedBytes);
        log.begin();
        const { timesMs, gpu } = await addon.launch({
          functionId: fn.id,
          grid: step.grid,
          block: step.block,
          sharedBytes: step.sharedBytes,
          args,
          warmup: step.warmup,
          repeats: step.repeats,
        });
        log.launch(step.kernel, fn.entry, step.grid, step.block, step.sharedBytes, gpu);
        launchArgs.set(index, args);
        launches.push({
          stepIndex: index,
          kernel: step.kernel,
          entry: fn.entry,
          grid: step.grid,
          block: step.block,
          sharedBytes: step.sharedBytes,
          timesMs,
          ...timingStats(timesMs),
        });
        // The kernel may have written any buffer it was given (and may have left some of it poisoned).
        for (const name of passed) if (allocations.has(name)) written.add(name);
        if (guard)
          await checkGuards(
            index,
            step.kernel,
            fn.entry,
            [...new Set(passed)].filter((name) => allocations.has(name)),
          );
        return timingStats(timesMs).medianMs;
      }
      case 'sync':
        log.begin();
        await addon.synchronize();
        log.sync();
        return null;
      case 'download': {
        const spec = buffers.get(step.buffer)!;
        const source = allocated(step.buffer, 'cuMemcpyDtoH_v2');
        log.begin();
        const { data, ms } = await addon.memcpyDtoH(source.pointer, source.bytes);
        log.copy('DtoH', step.buffer, source.bytes, 'data');
        const summary = summarizeBuffer(spec.name, spec.type, data);
        summaries.push(plan.checks.poison ? { ...summary, poison: scanPoison(spec.type, data, summary.nanCount, poisoned.has(spec.name)) } : summary);
        downloads.set(spec.name, { type: spec.type, bytes: data });
        if (replayAt > index) firstRun.set(index, data);
        if (step.expect) {
          const reference = step.expect.kind === 'buffer' ? (downloads.get(step.expect.buffer)?.bytes ?? null) : null;
          checks.comparisons.push(compareBuffer(spec.name, spec.type, data, step.expect, reference, step.tolerance));
        }
        return ms;
      }
      case 'free': {
        const a = allocated(step.buffer, 'cuMemFree_v2');
        log.begin();
        await addon.memFree(a.base);
        log.free(step.buffer, a.address, a.bytes, a.bytes + 2 * guard);
        allocations.delete(step.buffer);
        freed.set(step.buffer, { pointer: a.pointer, stepIndex: index });
        const record = [...memory].reverse().find((m) => m.buffer === step.buffer && m.freedAtStep === null);
        if (record) record.freedAtStep = index;
        return null;
      }
    }
  }

  /**
   * The buffers' initial contents, from the plan's initializer or its file. Checked against free host
   * memory first: generating a buffer larger than the host can hold would take the runner down.
   */
  async function upload(spec: BufferSpec, target: Allocation): Promise<number> {
    const bytes = bytesOf(spec);
    if (bytes > freemem() * 0.8) {
      throw workbenchError(
        'cuMemcpyHtoD_v2',
        `buffer "${spec.name}" needs ${formatBytes(bytes)} of host memory to initialise, but only ${formatBytes(freemem())} is free`,
      );
    }
    const data = spec.init?.kind === 'file' ? fileBytes(spec) : initialBytesOf(spec);
    log.begin();
    const ms = await addon.memcpyHtoD(target.pointer, data);
    log.copy('HtoD', spec.name, data.byteLength, 'data');
    return ms;
  }

  /**
   * Sets the function's dynamic shared memory limit to what this launch needs: the launch's bytes when it
   * is above the kernel's default, the default otherwise — the limit the validator assumed (the module
   * stays loaded between runs, so an earlier run's raise must not carry over).
   */
  async function setDynamicSharedLimit({ loaded }: { loaded: LoadedFunction }, sharedBytes: number): Promise<void> {
    const defaultLimit = loaded.attributes.maxDynamicSharedSizeBytes;
    const wanted = raisedDynamicSharedLimit(defaultLimit, sharedBytes);
    if ((loaded.dynamicSharedLimit ?? defaultLimit) === wanted) return;
    // Recorded only once the driver took it: a refused value leaves the function's limit as it was.
    await addon.setFunctionAttribute(loaded.id, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, wanted);
    loaded.dynamicSharedLimit = wanted;
  }

  /**
   * Runs the plan's steps before its trailing frees again, on the same allocations with the same inputs
   * (uploads repeated, unwritten memory re-poisoned), and compares every read-back with the first run's,
   * bit for bit. Races and reads of memory nothing wrote often show only this way.
   */
  /** The determinism check, then the poison probe where NaN could have come from unwritten memory. */
  async function replays(): Promise<void> {
    if (determinism.runs > 0) checks.determinism = replayFits() ?? (await checkDeterminism());
    if (!failure && poisonSuspected()) checks.poisonProbe = await probePoison();
  }

  /** A float read-back holds NaN beyond the poison pattern, and a launch received memory nothing had written. */
  function poisonSuspected(): boolean {
    return plan.checks.poison && checks.uninitialised.length > 0 && summaries.some((b) => b.poison && b.poison.nanCount > b.poison.poisonCount);
  }

  /** The launches once more with unwritten memory zeroed: NaN that turns into numbers came from the poison. */
  async function probePoison(): Promise<PoisonProbe> {
    const skipped = replayFits();
    if (skipped) return { status: 'skipped', reason: skipped.reason, buffers: [] };
    const found: PoisonProbe['buffers'] = [];
    await replayAll(0x00, 'duringPoisonProbe', (index, spec, data, first) => {
      const change = nanChange(spec.type, first, data);
      if (change) found.push({ buffer: spec.name, stepIndex: index, ...change });
    });
    return { status: 'ran', reason: null, buffers: found };
  }

  /**
   * Every step before the trailing frees once more (replayStep), a failure recorded as the run's with the
   * flag that says which replay it was. What the replay printed repeats the first run's and is dropped,
   * unless it failed: then it is the evidence.
   */
  async function replayAll(
    fill: number,
    flag: 'duringDeterminismRun' | 'duringPoisonProbe',
    onDownload: (index: number, spec: BufferSpec, data: Uint8Array, first: Uint8Array) => void,
  ): Promise<void> {
    log.phase = flag === 'duringDeterminismRun' ? 'determinism' : 'probe';
    for (let index = 0; index < replayAt && !failure; index++) {
      const step = plan.steps[index]!;
      log.step = index;
      try {
        await replayStep(step, index, fill, (spec, data, first) => onDownload(index, spec, data, first));
      } catch (error) {
        fail(index, step.op, step.op === 'launch' ? step.kernel : null, error);
        failure![flag] = true;
      }
    }
    log.phase = 'run';
    const replayFailure = failure as RunResult['failure'];
    if (replayFailure) takeOutput(replayFailure.stepIndex ?? 0);
    else if (capturing) addon.captureOutputTake(0);
  }

  /**
   * Null when the replays fit in what is left of the host's time limit (a quarter kept in hand); else the
   * report that says they were skipped, so a slow but correct plan is never killed by its own check.
   */
  function replayFits(): DeterminismReport | null {
    if (timeLimitMs === null) return null;
    const firstRunMs = performance.now() - runStarted;
    if (firstRunMs * (determinism.runs + 1) <= timeLimitMs * 0.75) return null;
    return {
      status: 'skipped',
      reason: `the first run took ${(firstRunMs / 1000).toFixed(1)} s of the ${(timeLimitMs / 1000).toFixed(0)} s time limit, so ${determinism.runs === 1 ? 'a second' : `${determinism.runs} more`} would not fit; raise the limit (--timeout) to check`,
      runs: 0,
      ms: 0,
      differences: [],
    };
  }

  async function checkDeterminism(): Promise<DeterminismReport> {
    const started = performance.now();
    const differences: DeterminismReport['differences'] = [];
    for (let run = 1; run <= determinism.runs && !failure; run++) {
      await replayAll(POISON_BYTE, 'duringDeterminismRun', (index, spec, data, first) => {
        if (Buffer.compare(first, data) === 0) return;
        const d = diffBitwise(spec.type, first, data);
        if (d) differences.push({ run, stepIndex: index, buffer: spec.name, type: spec.type, count: spec.count, ...d });
      });
    }
    return { status: 'compared', reason: null, runs: determinism.runs, ms: performance.now() - started, differences };
  }

  /**
   * One step again on the first run's allocations: memory no upload initialises is filled with `fill`
   * (the poison for the determinism check, zeros for the poison probe); each read-back goes to `onDownload`
   * beside the first run's.
   */
  async function replayStep(
    step: Step,
    index: number,
    fill: number,
    onDownload: (spec: BufferSpec, data: Uint8Array, first: Uint8Array) => void,
  ): Promise<void> {
    switch (step.op) {
      case 'alloc': {
        const a = allocations.get(step.buffer)!;
        if (plan.checks.poison && !uploadedBeforeUse.has(index)) {
          log.begin();
          await addon.memsetD8(a.pointer, fill, a.bytes);
          log.memset(step.buffer, a.address, a.bytes, fill, fill === POISON_BYTE ? 'poison' : 'zero');
        }
        return;
      }
      case 'upload':
        await upload(buffers.get(step.buffer)!, allocations.get(step.buffer)!);
        return;
      case 'launch': {
        const fn = functions.get(step.kernel)!;
        await setDynamicSharedLimit(fn, step.sharedBytes);
        log.begin();
        const { gpu } = await addon.launch({
          functionId: fn.id,
          grid: step.grid,
          block: step.block,
          sharedBytes: step.sharedBytes,
          args: launchArgs.get(index)!,
          warmup: step.warmup,
          repeats: step.repeats,
        });
        log.launch(step.kernel, fn.entry, step.grid, step.block, step.sharedBytes, gpu);
        return;
      }
      case 'sync':
        log.begin();
        await addon.synchronize();
        log.sync();
        return;
      case 'download': {
        const spec = buffers.get(step.buffer)!;
        const a = allocations.get(step.buffer)!;
        log.begin();
        const { data } = await addon.memcpyDtoH(a.pointer, a.bytes);
        log.copy('DtoH', step.buffer, a.bytes, 'data');
        const first = firstRun.get(index);
        if (first) onDownload(spec, data, first);
        return;
      }
      case 'free':
        throw workbenchError('cuMemFree_v2', 'the determinism check does not replay frees');
    }
  }

  /** One copy for every guard of every buffer the launch was given. */
  async function checkGuards(stepIndex: number, kernel: string, entry: string, names: string[]): Promise<void> {
    if (!names.length) return;
    const pointers = names.flatMap((name) => {
      const a = allocations.get(name)!;
      return [a.base, a.pointer + BigInt(a.bytes)];
    });
    log.begin();
    const data = await addon.memcpyDtoHRegions(pointers, guard);
    log.copy('DtoH', null, pointers.length * guard, 'guards');
    for (const [i, name] of names.entries()) {
      const spec = buffers.get(name)!;
      const a = allocations.get(name)!;
      const before = data.subarray(2 * i * guard, (2 * i + 1) * guard);
      const after = data.subarray((2 * i + 1) * guard, (2 * i + 2) * guard);
      const damage = findGuardDamage(before, after, elementSize(spec.type), spec.count);
      for (const d of damage) checks.guardViolations.push({ stepIndex, kernel, entry, buffer: name, type: spec.type, count: spec.count, damage: d });
      // Restore the damaged pattern, so the next launch's damage is its own.
      if (damage.some((d) => d.side === 'before')) await restoreGuard(name, a.base);
      if (damage.some((d) => d.side === 'after')) await restoreGuard(name, a.pointer + BigInt(a.bytes));
    }
  }

  async function restoreGuard(buffer: string, at: bigint): Promise<void> {
    log.begin();
    await addon.memsetD8(at, GUARD_PATTERN, guard);
    log.memset(buffer, `0x${at.toString(16)}`, guard, GUARD_PATTERN, 'guard');
  }

  /** A file initializer's bytes: a regular file only (opened non-blocking: a FIFO or a device is refused). */
  function fileBytes(spec: BufferSpec): Uint8Array {
    if (spec.init?.kind !== 'file') throw new Error('not a file initializer');
    const { path, offsetBytes } = spec.init;
    const bytes = bytesOf(spec);
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      throw workbenchError('cuMemcpyHtoD_v2', `buffer "${spec.name}" is to be read from ${path}, which does not exist or cannot be read`);
    }
    try {
      const info = fstatSync(fd);
      if (!info.isFile()) throw workbenchError('cuMemcpyHtoD_v2', `buffer "${spec.name}" is to be read from ${path}, which is not a regular file`);
      if (info.size - offsetBytes < bytes) {
        throw workbenchError(
          'cuMemcpyHtoD_v2',
          `buffer "${spec.name}" needs ${formatBytes(bytes)} from ${path}${offsetBytes ? ` at offset ${offsetBytes}` : ''}, but the file has only ${formatBytes(Math.max(0, info.size - offsetBytes))} there`,
        );
      }
      const data = new Uint8Array(bytes);
      let done = 0;
      while (done < bytes) {
        const got = readSync(fd, data, done, bytes - done, offsetBytes + done);
        if (got === 0) break;
        done += got;
      }
      return data;
    } finally {
      closeSync(fd);
    }
  }

  function allocated(name: string, api: string) {
    const a = allocations.get(name);
    if (a) return a;
    const gone = freed.get(name);
    throw workbenchError(
      api,
      gone
        ? `buffer "${name}" is used after step ${gone.stepIndex + 1} freed it: move the free after its last use`
        : `buffer "${name}" is used before it is allocated: add an alloc step before this one`,
    );
  }
}

/**
 * Initial buffer contents are deterministic (core/plan/buffer-data.ts), so the runner keeps recent ones
 * between runs: a re-run does not regenerate them. Bounded by bytes, least recently used out first.
 */
const initialBytesCache = new BoundedCache<string, Uint8Array>(256 * 1024 * 1024, (bytes) => bytes.byteLength);

function initialBytesOf(spec: BufferSpec): Uint8Array {
  const key = `${spec.type}:${spec.count}:${JSON.stringify(spec.init)}`;
  let data = initialBytesCache.get(key);
  if (!data) {
    data = initialBytes(spec);
    initialBytesCache.set(key, data);
  }
  return data;
}

/** Alloc steps whose buffer is uploaded before any launch or download touches it. */
function allocStepsUploadedBeforeUse(plan: LaunchPlan): Set<number> {
  const out = new Set<number>();
  plan.steps.forEach((step, index) => {
    if (step.op !== 'alloc') return;
    for (const later of plan.steps.slice(index + 1)) {
      if (later.op === 'upload' && later.buffer === step.buffer) {
        out.add(index);
        return;
      }
      const touches =
        later.op === 'launch' ? later.args.some((a) => 'buffer' in a && a.buffer === step.buffer) : 'buffer' in later && later.buffer === step.buffer;
      if (touches) return;
    }
  });
  return out;
}
