import { compileOptionsSchema } from '../../core/compile/compile-options';
import type { Diagnostic } from '../../core/compile/diagnostics';
import { findKernelSymbol } from '../../core/cubin';
import { smArch } from '../../core/devices';
import type { Problem } from '../../core/discovery';
import { describeIssues, launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import type { CompiledModule, ExitClassification } from '../../core/runner/protocol';
import type { RunResult } from '../../core/runner/run-result';
import type { CompileService } from '../compile/compile-service';
import { ChildRequestError, ProcessExitError } from '../process/supervised-process';
import type { RunnerPool } from '../runner/runner-pool';
import { deviceInfos } from './device-service';

export type RunStatus = 'ok' | 'cuda-error' | 'compile-error' | 'unavailable' | 'runner-died' | 'invalid';

export interface CompileRecord {
  kernel: string;
  ok: boolean;
  backend: string;
  command: string;
  log: string;
  diagnostics: Diagnostic[];
  ms: number;
  cached: boolean;
  symbol: string | null;
}

export interface RunOutcome {
  status: RunStatus;
  problem: Problem | null;
  compile: CompileRecord[];
  result: RunResult | null;
  exit: ExitClassification | null;
}

const outcome = (status: RunStatus, problem: Problem | null, extra: Partial<RunOutcome> = {}): RunOutcome => ({
  status,
  problem,
  compile: [],
  result: null,
  exit: null,
  ...extra,
});

export interface RunOptions {
  timeoutMs: number;
  arch?: string;
}

/** Validates, compiles and runs a launch plan: the one path the CLI, the UI and the tests take. */
export async function runPlan(input: unknown, services: { compiler: CompileService; pool: RunnerPool }, options: RunOptions): Promise<RunOutcome> {
  const parsed = launchPlanSchema.safeParse(input);
  if (!parsed.success) {
    return outcome('invalid', {
      title: 'The launch plan is not valid',
      detail: describeIssues(parsed.error),
      remedy: 'Fix the fields named above and run again.',
    });
  }
  const plan: LaunchPlan = parsed.data;
  const devices = await deviceInfos();
  if (!devices.ok) return outcome('unavailable', devices.problem);
  const device = devices.devices.find((d) => d.ordinal === plan.device);
  if (!device) {
    return outcome('invalid', {
      title: `Device ${plan.device} does not exist`,
      detail: `This machine has ${devices.devices.length} CUDA device(s): ${devices.devices.map((d) => `${d.ordinal}: ${d.name}`).join(', ')}.`,
      remedy: 'Choose one of those with --device.',
    });
  }
  const arch = options.arch ?? smArch(device);

  const compile: CompileRecord[] = [];
  const modules: CompiledModule[] = [];
  for (const kernel of plan.kernels) {
    let out;
    try {
      out = await services.compiler.compile({
        source: kernel.source,
        sourceName: kernel.sourceName,
        options: compileOptionsSchema.parse({ ...kernel.options, arch }),
        backend: 'auto',
      });
    } catch (error) {
      const detail = error instanceof ProcessExitError ? error.exit.summary : error instanceof ChildRequestError ? error.error.message : String(error);
      return outcome(
        'compile-error',
        { title: `Could not compile ${kernel.sourceName}`, detail, remedy: 'See `gpu-workbench doctor` for the compilers this machine has.' },
        { compile },
      );
    }
    const symbol = out.kernels.find((k) => k.name === kernel.entry)?.symbol ?? findKernelSymbol(out.symbols, kernel.entry);
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
      return outcome(
        'compile-error',
        {
          title: `${kernel.sourceName} does not compile`,
          detail: out.log.trim() || 'The compiler failed without a message.',
          remedy: 'Fix the errors above (file:line is where the compiler saw them).',
        },
        { compile },
      );
    }
    if (!symbol) {
      const found = out.kernels.length
        ? `The kernels in it are: ${out.kernels.map((k) => k.display).join(', ')}.`
        : out.symbols.length
          ? `The kernels in it are: ${out.symbols.join(', ')}.`
          : 'It defines no __global__ function.';
      return outcome(
        'invalid',
        { title: `No kernel named "${kernel.entry}" in ${kernel.sourceName}`, detail: found, remedy: 'Pass the name of a __global__ function with --kernel.' },
        { compile },
      );
    }
    modules.push({ kernel: kernel.id, symbol, image: out.image });
  }

  try {
    const result = await services.pool.run(plan, modules, options.timeoutMs);
    if (result.ok) return outcome('ok', null, { compile, result });
    const f = result.failure!;
    return outcome(
      'cuda-error',
      {
        title: `${f.error.name} in ${f.error.api}`,
        detail: f.error.message,
        remedy: f.sticky
          ? 'The CUDA context is unusable after this error; the workbench has already replaced the runner, so you can run again at once.'
          : 'Fix the cause and run again.',
      },
      { compile, result, exit: f.sticky ? { kind: 'sticky-cuda-error', summary: 'The runner was discarded and replaced.' } : null },
    );
  } catch (error) {
    if (error instanceof ProcessExitError) {
      return outcome(
        'runner-died',
        {
          title: 'The runner process ended during the run',
          detail: error.exit.summary,
          remedy:
            error.exit.kind === 'watchdog'
              ? 'Check the kernel for a loop that never ends, or raise the time limit with --timeout.'
              : 'Run again; if it repeats, run it under compute-sanitizer.',
        },
        { compile, exit: error.exit },
      );
    }
    if (error instanceof ChildRequestError) {
      const e = error.error;
      return outcome(
        e.name === 'WORKBENCH_DRIVER_NOT_LOADED' ? 'unavailable' : 'cuda-error',
        { title: `${e.name} in ${e.api}`, detail: e.message, remedy: 'See `gpu-workbench doctor`.' },
        { compile },
      );
    }
    throw error;
  }
}
