import { freemem } from 'node:os';

import { isStickyCode } from '../../core/cuda/error-catalog';
import { formatDim3 } from '../../core/dims';
import { formatBytes } from '../../core/format';
import { initialBytes, summarizeBuffer, type BufferSummary } from '../../core/plan/buffer-data';
import { encodePointer, encodeScalar } from '../../core/plan/kernel-args';
import { bytesOf, type BufferSpec, type LaunchPlan, type Step } from '../../core/plan/plan-schema';
import type { CompiledModule } from '../../core/runner/protocol';
import { timingStats, type CudaErrorInfo, type FunctionAttributes, type LaunchRecord, type RunResult, type StepRecord } from '../../core/runner/run-result';
import type { NativeAddon } from '../native/addon';
import type { LoadedFunction } from './module-cache';
import { toCudaError } from './cuda-error';

const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
const DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024;

class StepFailure extends Error {
  constructor(readonly error: CudaErrorInfo) {
    super(error.message);
  }
}

const workbenchError = (api: string, message: string): StepFailure =>
  new StepFailure({ library: 'workbench', api, code: -1, name: 'WORKBENCH_PLAN_ERROR', message });

function stepLabel(step: Step, plan: LaunchPlan): string {
  switch (step.op) {
    case 'launch': {
      const entry = plan.kernels.find((k) => k.id === step.kernel)?.entry ?? step.kernel;
      return `launch ${entry}<<<${formatDim3(step.grid)}, ${formatDim3(step.block)}${step.sharedBytes ? `, ${step.sharedBytes}` : ''}>>>`;
    }
    case 'sync':
      return 'synchronize';
    default:
      return `${step.op} ${step.buffer}`;
  }
}

/**
 * Runs a plan in this (runner) process. Every launch is followed by a synchronisation, so an error is
 * pinned to the step that caused it — what CUDA_LAUNCH_BLOCKING=1 does for a host program.
 */
export async function executePlan(
  addon: NativeAddon,
  plan: LaunchPlan,
  modules: CompiledModule[],
  device: { ordinal: number; name: string },
  loadFunction: (module: CompiledModule) => Promise<LoadedFunction>,
): Promise<RunResult> {
  const buffers = new Map<string, BufferSpec>(plan.buffers.map((b) => [b.name, b]));
  const allocations = new Map<string, { pointer: bigint; bytes: number }>();
  const functions = new Map<string, { id: number; entry: string; attributes: FunctionAttributes }>();
  const steps: StepRecord[] = [];
  const launches: LaunchRecord[] = [];
  const summaries: BufferSummary[] = [];
  let failure: RunResult['failure'] = null;

  const fail = (stepIndex: number | null, op: string, kernel: string | null, error: unknown) => {
    const info = error instanceof StepFailure ? error.error : toCudaError(error, op);
    failure = { stepIndex, op, kernel, error: info, sticky: info.library === 'cuda' && isStickyCode(info.code) };
  };

  for (const module of modules) {
    try {
      const fn = await loadFunction(module);
      const entry = plan.kernels.find((k) => k.id === module.kernel)?.entry ?? module.symbol;
      functions.set(module.kernel, { id: fn.id, entry, attributes: fn.attributes });
    } catch (error) {
      fail(null, 'load', module.kernel, error);
      break;
    }
  }

  for (let index = 0; index < plan.steps.length && !failure; index++) {
    const step = plan.steps[index]!;
    const started = performance.now();
    let ms: number | null = null;
    try {
      ms = await runStep(step, index);
    } catch (error) {
      fail(index, step.op, step.op === 'launch' ? step.kernel : null, error);
    }
    steps.push({ index, op: step.op, label: stepLabel(step, plan), ms: failure ? null : (ms ?? performance.now() - started) });
  }

  // A run that stopped early never reached its free steps: that is not a leak in the plan.
  const leaks = failure ? [] : [...allocations].map(([name, a]) => ({ name, bytes: a.bytes }));
  const contextAlive = !(failure as RunResult['failure'])?.sticky;
  if (contextAlive) {
    for (const [, a] of allocations) await addon.memFree(a.pointer).catch(() => undefined);
  }

  return {
    ok: failure === null,
    device,
    functions: [...functions].map(([kernel, f]) => ({ kernel, entry: f.entry, attributes: f.attributes })),
    steps,
    launches,
    buffers: summaries,
    leaks,
    failure,
    runnerPid: process.pid,
  };

  async function runStep(step: Step, index: number): Promise<number | null> {
    switch (step.op) {
      case 'alloc': {
        const spec = buffers.get(step.buffer)!;
        if (allocations.has(step.buffer)) throw workbenchError('cuMemAlloc_v2', `buffer "${step.buffer}" is already allocated`);
        const pointer = await addon.memAlloc(bytesOf(spec));
        allocations.set(step.buffer, { pointer, bytes: bytesOf(spec) });
        return null;
      }
      case 'upload': {
        const spec = buffers.get(step.buffer)!;
        const target = allocated(step.buffer, 'cuMemcpyHtoD_v2');
        const bytes = bytesOf(spec);
        if (bytes > freemem() * 0.8) {
          throw workbenchError(
            'cuMemcpyHtoD_v2',
            `buffer "${spec.name}" needs ${formatBytes(bytes)} of host memory to initialise, but only ${formatBytes(freemem())} is free`,
          );
        }
        return addon.memcpyHtoD(target.pointer, initialBytes(spec));
      }
      case 'launch': {
        const fn = functions.get(step.kernel);
        if (!fn) throw workbenchError('cuLaunchKernel', `kernel "${step.kernel}" was not loaded`);
        const args = step.args.map((arg) =>
          'buffer' in arg ? encodePointer(allocated(arg.buffer, 'cuLaunchKernel').pointer) : encodeScalar(arg.scalar.type, arg.scalar.value),
        );
        if (step.sharedBytes > DEFAULT_DYNAMIC_SHARED_LIMIT && step.sharedBytes > fn.attributes.maxDynamicSharedSizeBytes) {
          // Above 48 KiB a kernel must opt in; without this the launch fails with a bare INVALID_VALUE.
          await addon.setFunctionAttribute(fn.id, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, step.sharedBytes);
        }
        const { timesMs } = await addon.launch({
          functionId: fn.id,
          grid: step.grid,
          block: step.block,
          sharedBytes: step.sharedBytes,
          args,
          warmup: step.warmup,
          repeats: step.repeats,
        });
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
        return timingStats(timesMs).medianMs;
      }
      case 'sync':
        await addon.synchronize();
        return null;
      case 'download': {
        const spec = buffers.get(step.buffer)!;
        const source = allocated(step.buffer, 'cuMemcpyDtoH_v2');
        const { data, ms } = await addon.memcpyDtoH(source.pointer, source.bytes);
        summaries.push(summarizeBuffer(spec.name, spec.type, data));
        return ms;
      }
      case 'free': {
        const a = allocated(step.buffer, 'cuMemFree_v2');
        await addon.memFree(a.pointer);
        allocations.delete(step.buffer);
        return null;
      }
    }
  }

  function allocated(name: string, api: string) {
    const a = allocations.get(name);
    if (!a) throw workbenchError(api, `buffer "${name}" is used before it is allocated (or after it was freed): add an alloc step before this one`);
    return a;
  }
}
