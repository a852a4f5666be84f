import type { AbortLike } from '../../core/api/channels';
import { LastParse } from '../../core/api/last-parse';
import { compileOptionsSchema } from '../../core/compile/compile-options';
import { findKernelSymbol } from '../../core/cubin';
import { isOutOfMemory } from '../../core/cuda/error-catalog';
import { smArch } from '../../core/devices';
import type { Problem } from '../../core/discovery';
import { describeIssues, launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import type { CompiledModule, ExitClassification } from '../../core/runner/protocol';
import type { FunctionAttributes, RunResult } from '../../core/runner/run-result';
import { diagnoseRun, type RunStatus } from '../../core/runner/diagnose';
import type { CompileRecord, RunOutcome } from '../../core/runner/run-outcome';
import { compileFailureDetail } from '../../core/runner/compile-failure';
import { checkHostMemory, checkLaunchArgs } from '../../core/plan/check-args';
import { findKernels, type KernelParam } from '../../core/compile/kernel-signature';
import type { DeviceInfo, GpuProcess } from '../../core/devices';
import { deviceLimits } from '../../core/validate/device-limits';
import { validateLaunch, type Finding } from '../../core/validate/validate-launch';
import { checkPlan as checkWholePlan } from '../../core/validate/plan-check';
import { kernelLimitsFromFacts } from '../../core/validate/kernel-limits';
import type { KernelFacts } from '../../core/compile/compile-result';
import { freemem } from 'node:os';
import { BoundedCache } from '../../core/bounded-cache';
import type { CompileService } from '../compile/compile-service';
import { workbenchPids } from '../process/own-processes';
import { ChildRequestError, ProcessExitError, RequestCancelledError } from '../process/supervised-process';
import type { RunnerPool } from '../runner/runner-pool';
import { deviceInfos, listDevices } from './device-service';
import { cudaLibraries } from './discovery-service';
import { machineMemory, planRefusedProblem } from './plan-check-service';

export type { RunStatus };

export type { CompileRecord, RunOutcome };

export interface RunOptions {
  timeoutMs: number;
  arch?: string;
  /** The plan's file, for the compute-sanitizer command the diagnosis offers. */
  planPath?: string | null;
  /** Overrides the plan's determinism check: extra runs compared with the first, 0 for none. */
  determinismRuns?: number;
  /** Cancels the run: a compile under way stops, a runner at work is killed (a fresh one takes over). */
  signal?: AbortLike;
  /** Samples device memory through NVML every this many ms while it runs (outcome.samples). */
  sampleIntervalMs?: number;
  /**
   * Check the whole plan (every launch, every allocation) on the device before it runs, and refuse one that would
   * fail. Off by default: the GPU suite and `run --no-validate` send a broken plan on to the driver, to see what it says.
   */
  validate?: boolean;
  /** Told as the run enters each phase. */
  onPhase?: (phase: 'checks' | 'compile' | 'run' | 'diagnose') => void;
  /**
   * Start the device's runner as soon as the plan's own checks pass, while the devices are listed and the kernels
   * compile: for a pool of one run whose runner starts under a tool (compute-sanitizer, ncu: a second or more), so
   * that start-up and the compile overlap.
   */
  prestartRunner?: boolean;
}

/** What a run left behind, facts only: the diagnosis (core/runner/diagnose.ts) words them. */
interface Pieces {
  /** Why it never ran (an invalid plan, a compile error, no driver, a request the runner refused): what the check found. */
  problem?: Problem | null;
  compile?: CompileRecord[];
  result?: RunResult | null;
  exit?: ExitClassification | null;
  launchFindings?: Finding[];
  processes?: GpuProcess[] | null;
}

/** The kernels a source declares, parsed once per source text: a re-run parses nothing again. */
const parsedSources = new BoundedCache<string, ReturnType<typeof findKernels>>(32);
function kernelsIn(source: string): ReturnType<typeof findKernels> {
  let kernels = parsedSources.get(source);
  if (!kernels) {
    kernels = findKernels(source);
    parsedSources.set(source, kernels);
  }
  return kernels;
}

/**
 * The last two plans validated, each as a copy of what it was given as (its caller may change its own object
 * afterwards): a re-run of either is not walked by the schema again (core/api/last-parse.ts).
 */
const plans = new LastParse(launchPlanSchema, { keep: (input) => structuredClone(input), capacity: 2 });

/** Validates, compiles and runs a launch plan: the one path the CLI, the UI and the tests take. */
export async function runPlan(input: unknown, services: { compiler: CompileService; pool: RunnerPool }, options: RunOptions): Promise<RunOutcome> {
  const started = performance.now();
  const timing = { checkMs: 0, compileMs: 0, runMs: 0, totalMs: 0 };
  let plan: LaunchPlan | null = null;
  const finish = (status: RunStatus, pieces: Pieces): RunOutcome => {
    options.onPhase?.('diagnose');
    timing.totalMs = performance.now() - started;
    const out = { status, problem: pieces.problem ?? null, compile: pieces.compile ?? [], result: pieces.result ?? null, exit: pieces.exit ?? null };
    const diagnosis = diagnoseRun({
      ...out,
      plan,
      launchFindings: pieces.launchFindings ?? [],
      processes: pieces.processes ?? null,
      planPath: options.planPath ?? null,
      // Only an out-of-memory diagnosis names who holds the device, and only then is /proc read for it.
      ownPids: pieces.processes?.length ? workbenchPids(services.pool.status().runners.map((r) => r.pid)) : [],
    });
    return { ...out, diagnosis, timing };
  };
  const parsed = plans.safeParse(input);
  if (!parsed.success) {
    return finish('invalid', {
      problem: { title: 'The launch plan is not valid', detail: describeIssues(parsed.error), remedy: 'Fix the fields named above and run again.' },
    });
  }
  // The parsed plan may be the one the last run was given (plans, above): it is not changed, but copied.
  plan = options.determinismRuns === undefined ? parsed.data : { ...parsed.data, checks: { ...parsed.data.checks, determinismRuns: options.determinismRuns } };
  const { status, pieces } = await execute(plan, services, options, timing);
  return finish(status, pieces);
}

const outcome = (status: RunStatus, pieces: Pieces): Outcome => ({ status, pieces });

type Outcome = { status: RunStatus; pieces: Pieces };

/** A valid plan's checks, compile and run: where it stopped, and what it had by then. */
async function execute(
  plan: LaunchPlan,
  services: { compiler: CompileService; pool: RunnerPool },
  options: RunOptions,
  timing: RunOutcome['timing'],
): Promise<Outcome> {
  let phase = performance.now();
  options.onPhase?.('checks');
  // Only where a driver is there to start it with: elsewhere the run stops at the device check, and no tool is started.
  const checked = await preflight(plan, () => options.prestartRunner && cudaLibraries().cuda.loaded && services.pool.prestart(plan.device));
  if ('stopped' in checked) return checked.stopped;
  const { device } = checked;
  timing.checkMs = performance.now() - phase;
  phase = performance.now();
  options.onPhase?.('compile');
  const compiled = await compileKernels(plan, options.arch ?? smArch(device), services.compiler, options.signal);
  if ('stopped' in compiled) return compiled.stopped;
  const { compile, modules } = compiled;
  if (options.validate) {
    const refused = await refuseFailingPlan(plan, device, compiled.facts, compile);
    if (refused) return refused;
  }
  timing.compileMs = performance.now() - phase;
  phase = performance.now();
  if (options.signal?.aborted) return outcome('cancelled', { compile });
  options.onPhase?.('run');

  try {
    const result = await services.pool.run(plan, modules, options.timeoutMs, options.signal);
    timing.runMs = performance.now() - phase;
    if (result.ok) return outcome('ok', { compile, result });
    const f = result.failure!;
    const step = f.stepIndex === null ? undefined : plan.steps[f.stepIndex];
    const fn = result.functions.find((x) => x.kernel === f.kernel);
    const launchFindings = step?.op === 'launch' && fn ? findingsFor(device, fn.attributes, step) : [];
    const processes = f.op === 'alloc' && isOutOfMemory(f.error) ? await processesOn(device) : null;
    // Facts only: the failure (sticky or not) is in the result, and the diagnosis says what it means.
    return outcome('cuda-error', { compile, result, launchFindings, processes });
  } catch (error) {
    timing.runMs = performance.now() - phase;
    if (error instanceof ProcessExitError && error.exit.kind === 'cancelled') return outcome('cancelled', { compile, exit: error.exit });
    if (error instanceof RequestCancelledError) return outcome('cancelled', { compile });
    // How it ended (the watchdog, a crash, a kill) is the exit's classification; the diagnosis words it.
    if (error instanceof ProcessExitError) return outcome('runner-died', { compile, exit: error.exit });
    if (error instanceof ChildRequestError) {
      const e = error.error;
      return outcome(e.name === 'WORKBENCH_DRIVER_NOT_LOADED' ? 'unavailable' : 'cuda-error', {
        problem: { title: `${e.name} in ${e.api}`, detail: e.message, remedy: 'See `gpu-workbench doctor`.' },
        compile,
      });
    }
    throw error;
  }
}

/** The checks before any compile: host memory, the arguments against the kernels' parameters, the device. */
async function preflight(plan: LaunchPlan, planChecked: () => void): Promise<{ device: DeviceInfo } | { stopped: Outcome }> {
  const hostMemory = checkHostMemory(plan, freemem());
  if (hostMemory.length) {
    return {
      stopped: outcome('invalid', {
        problem: {
          title: 'The plan needs more host memory than this machine has free',
          detail: hostMemory.join('\n'),
          remedy: 'Make the buffers smaller, or read back only what you need to see.',
        },
      }),
    };
  }
  // From the source text, before any compiler or device: a mismatch is refused even where neither exists.
  const params = new Map<string, KernelParam[] | null>(
    plan.kernels.map((k) => [k.id, kernelsIn(k.source).find((s) => s.name === k.entry && !s.template)?.params ?? null]),
  );
  const argProblems = checkLaunchArgs(plan, params);
  if (argProblems.length) {
    return {
      stopped: outcome('invalid', {
        problem: {
          title: 'The launch arguments do not match the kernel’s parameters',
          detail: argProblems.join('\n'),
          remedy:
            'Give one argument per parameter, in order: a buffer of the pointed-to type for each pointer, a value of the parameter’s type for each scalar.',
        },
      }),
    };
  }
  planChecked();
  const devices = await deviceInfos();
  if (!devices.ok) return { stopped: outcome('unavailable', { problem: devices.problem }) };
  const device = devices.devices.find((d) => d.ordinal === plan.device);
  if (device) return { device };
  return {
    stopped: outcome('invalid', {
      problem: {
        title: `Device ${plan.device} does not exist`,
        detail: `This machine has ${devices.devices.length} CUDA device(s): ${devices.devices.map((d) => `${d.ordinal}: ${d.name}`).join(', ')}.`,
        remedy: 'Choose one of those with --device.',
      },
    }),
  };
}

/** Every kernel of the plan compiled for `arch`, with the record of each compile; the first that fails stops it. */
async function compileKernels(
  plan: LaunchPlan,
  arch: string,
  compiler: CompileService,
  signal: AbortLike | undefined,
): Promise<{ compile: CompileRecord[]; modules: CompiledModule[]; facts: KernelFactsById } | { stopped: Outcome }> {
  const compile: CompileRecord[] = [];
  const modules: CompiledModule[] = [];
  const facts: KernelFactsById = new Map();
  for (const kernel of plan.kernels) {
    let out;
    try {
      out = await compiler.compile(
        { source: kernel.source, sourceName: kernel.sourceName, options: compileOptionsSchema.parse({ ...kernel.options, arch }), backend: 'auto' },
        undefined,
        null,
        signal,
      );
    } catch (error) {
      if (signal?.aborted) return { stopped: outcome('cancelled', { compile }) };
      const detail = error instanceof ProcessExitError ? error.exit.summary : error instanceof ChildRequestError ? error.error.message : String(error);
      return {
        stopped: outcome('compile-error', {
          problem: { title: `Could not compile ${kernel.sourceName}`, detail, remedy: 'See `gpu-workbench doctor` for the compilers this machine has.' },
          compile,
        }),
      };
    }
    const known = out.kernels.find((k) => k.name === kernel.entry);
    const symbol = known?.symbol ?? findKernelSymbol(out.symbols, kernel.entry);
    compile.push({
      kernel: kernel.id,
      ok: out.ok,
      backend: out.backend,
      command: out.command,
      log: out.log,
      diagnostics: out.diagnostics,
      ms: out.ms,
      cached: out.cached,
      symbol,
    });
    if (!out.ok || !out.image) {
      return {
        stopped: outcome('compile-error', {
          problem: {
            title: `${kernel.sourceName} does not compile`,
            detail: compileFailureDetail(out.diagnostics, out.log),
            remedy: 'Fix the errors above (file:line is where the compiler saw them).',
          },
          compile,
        }),
      };
    }
    if (!symbol) {
      const found = out.kernels.length
        ? `The kernels in it are: ${out.kernels.map((k) => k.display).join(', ')}.`
        : out.symbols.length
          ? `The kernels in it are: ${out.symbols.join(', ')}.`
          : 'It defines no __global__ function.';
      return {
        stopped: outcome('invalid', {
          problem: {
            title: `No kernel named "${kernel.entry}" in ${kernel.sourceName}`,
            detail: found,
            remedy: 'Pass the name of a __global__ function with --kernel.',
          },
          compile,
        }),
      };
    }
    modules.push({ kernel: kernel.id, symbol, image: out.image });
    if (known) facts.set(kernel.id, { facts: known, source: kernel.source });
  }
  return { compile, modules, facts };
}

type KernelFactsById = Map<string, { facts: KernelFacts; source: string }>;

/**
 * The validator on the whole plan, on the device it is about to run on, with each kernel's compiled resources: the
 * same check the launch panel and `gpu-workbench validate --plan` make. A plan that would fail is refused before
 * anything is allocated or launched, in the validator's words.
 */
async function refuseFailingPlan(plan: LaunchPlan, device: DeviceInfo, facts: KernelFactsById, compile: CompileRecord[]): Promise<Outcome | null> {
  const limits = deviceLimits(device);
  const check = checkWholePlan(plan, limits, await machineMemory(device), (launch) => {
    const known = facts.get(launch.kernelId);
    return known ? kernelLimitsFromFacts(known.facts, limits, known.source) : null;
  });
  if (check.ok) return null;
  return outcome('invalid', { problem: planRefusedProblem(check, device.name), compile });
}

/** The validator on the launch that failed, with the kernel's attributes as the driver reported them. */
function findingsFor(device: DeviceInfo, attributes: FunctionAttributes, step: Extract<LaunchPlan['steps'][number], { op: 'launch' }>): Finding[] {
  const kernel = {
    numRegs: attributes.numRegs,
    sharedSizeBytes: attributes.sharedSizeBytes,
    localSizeBytes: attributes.localSizeBytes,
    maxThreadsPerBlock: attributes.maxThreadsPerBlock,
    maxDynamicSharedSizeBytes: attributes.maxDynamicSharedSizeBytes,
  };
  return validateLaunch(deviceLimits(device), kernel, { grid: step.grid, block: step.block, sharedBytes: step.sharedBytes, raisesDynamicSharedLimit: true })
    .findings;
}

/** Who holds the device's memory, from NVML (null where NVML cannot say). */
async function processesOn(device: DeviceInfo): Promise<GpuProcess[] | null> {
  const devices = await listDevices().catch(() => null);
  if (!devices?.ok || !devices.memory) return null;
  return devices.memory.find((m) => m.uuid === device.uuid)?.processes ?? null;
}
