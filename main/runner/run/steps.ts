import { summarizeBuffer } from '../../../core/plan/buffer-data';
import { compareBuffer } from '../../../core/plan/compare';
import { encodePointer, encodeScalar } from '../../../core/plan/kernel-args';
import { bytesOf, type LaunchStep, type Step } from '../../../core/plan/plan-schema';
import { timingStats } from '../../../core/runner/run-result';
import { setDynamicSharedLimit } from './dynamic-shared';
import { initialData } from './initial-data';
import type { RunChecks } from './run-check';
import type { RunState } from './run-state';
import { workbenchError } from './step-failure';

/**
 * One step of the first run: the driver call it stands for, what the result records of it, and the checks'
 * hooks around it. Returns the step's time as the result reports it (null: its wall time).
 */
export async function runStep(run: RunState, checks: RunChecks, step: Step, index: number): Promise<number | null> {
  switch (step.op) {
    case 'alloc':
      await alloc(run, checks, step.buffer, index);
      return null;
    case 'upload': {
      const target = run.allocated(step.buffer, 'cuMemcpyHtoD_v2');
      const ms = await run.device.upload(step.buffer, target, initialData(run.spec(step.buffer)));
      checks.afterUpload(step.buffer);
      return ms;
    }
    case 'launch':
      return launch(run, checks, step, index);
    case 'sync':
      await run.device.synchronize();
      return null;
    case 'download':
      return download(run, checks, step, index);
    case 'free': {
      const a = run.allocated(step.buffer, 'cuMemFree_v2');
      await run.device.free(step.buffer, a);
      run.allocations.delete(step.buffer);
      run.freed.set(step.buffer, { pointer: a.pointer, stepIndex: index });
      const record = [...run.memory].reverse().find((m) => m.buffer === step.buffer && m.freedAtStep === null);
      if (record) record.freedAtStep = index;
      return null;
    }
  }
}

async function alloc(run: RunState, checks: RunChecks, buffer: string, index: number): Promise<void> {
  if (run.allocations.has(buffer)) throw workbenchError('cuMemAlloc_v2', `buffer "${buffer}" is already allocated`);
  const bytes = bytesOf(run.spec(buffer));
  const a = await run.device.alloc(buffer, bytes, checks.allocLayout(index));
  run.allocations.set(buffer, a);
  run.memory.push({ buffer, address: a.address, bytes, allocatedAtStep: index, freedAtStep: null });
  run.freed.delete(buffer);
  checks.afterAlloc(buffer, a);
}

async function launch(run: RunState, checks: RunChecks, step: LaunchStep, index: number): Promise<number> {
  const fn = run.functions.get(step.kernel);
  if (!fn) throw workbenchError('cuLaunchKernel', `kernel "${step.kernel}" was not loaded`);
  const passed: string[] = [];
  const args = step.args.map((arg) => {
    if (!('buffer' in arg)) return encodeScalar(arg.scalar.type, arg.scalar.value);
    passed.push(arg.buffer);
    const stale = !run.allocations.has(arg.buffer) ? run.freed.get(arg.buffer) : undefined;
    if (stale) {
      // A host program would pass the dangling pointer; so does the runner, and says so.
      checks.pointerArg(index, step.kernel, arg.buffer, stale.stepIndex);
      return encodePointer(stale.pointer);
    }
    const a = run.allocated(arg.buffer, 'cuLaunchKernel');
    checks.pointerArg(index, step.kernel, arg.buffer, null);
    return encodePointer(a.pointer);
  });
  await setDynamicSharedLimit(run.device.addon, fn.loaded, step.sharedBytes);
  const { timesMs } = await run.device.launch(step.kernel, fn.entry, {
    functionId: fn.id,
    grid: step.grid,
    block: step.block,
    sharedBytes: step.sharedBytes,
    args,
    warmup: step.warmup,
    repeats: step.repeats,
  });
  run.launches.push({
    stepIndex: index,
    kernel: step.kernel,
    entry: fn.entry,
    grid: step.grid,
    block: step.block,
    sharedBytes: step.sharedBytes,
    timesMs,
    ...timingStats(timesMs),
  });
  await checks.afterLaunch({ stepIndex: index, step, entry: fn.entry, args, passed });
  return timingStats(timesMs).medianMs;
}

async function download(run: RunState, checks: RunChecks, step: Extract<Step, { op: 'download' }>, index: number): Promise<number> {
  const spec = run.spec(step.buffer);
  const source = run.allocated(step.buffer, 'cuMemcpyDtoH_v2');
  const { data, ms } = await run.device.download(step.buffer, source);
  run.summaries.push(checks.summary(spec, data, summarizeBuffer(spec.name, spec.type, data, run.device.floatSums)));
  run.downloads.set(spec.name, { type: spec.type, bytes: data });
  checks.afterDownload(index, spec, data);
  if (step.expect) {
    const reference = step.expect.kind === 'buffer' ? (run.downloads.get(step.expect.buffer)?.bytes ?? null) : null;
    run.checks.comparisons.push(compareBuffer(spec.name, spec.type, data, step.expect, reference, step.tolerance));
  }
  return ms;
}
