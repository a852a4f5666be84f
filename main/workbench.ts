import { NO_GPU_ARCH, smArch } from '../core/devices';
import { CompileCache } from './compile/compile-cache';
import { CompileService } from './compile/compile-service';
import type { ProcessLauncher } from './process/launcher';
import { RunnerPool, type RunnerPoolOptions } from './runner/runner-pool';
import { DraftStore } from './services/draft-store';
import { WorkspaceStore } from './services/workspace-store';
import { runPlan, type RunOptions, type RunOutcome } from './services/run-service';
import { seriesOf } from './memory/monitor-export';
import { sampleDuring } from './memory/sample-during';
import { listDevices } from './services/device-service';
import { SanitizerSpares } from './services/sanitized-runner';

/** Samples kept with a run's outcome: 10 minutes at 10 ms. */
const MAX_RUN_SAMPLES = 60_000;

/** The run, with device memory sampled through NVML around it: the outcome carries the series, or why there is none. */
async function runPlanSampled(plan: unknown, services: Parameters<typeof runPlan>[1], options: RunOptions, intervalMs: number): Promise<RunOutcome> {
  const { value, report, store, problem } = await sampleDuring(() => runPlan(plan, services, options), { intervalMs });
  return { ...value, samples: report && store ? seriesOf(report, store, MAX_RUN_SAMPLES) : null, samplingProblem: problem };
}

/** The host's services, shared by the CLI, the serve host and the Electron main process: their one composition root. */
export interface Workbench {
  compiler: CompileService;
  pool: RunnerPool;
  /** A runner under compute-sanitizer started ahead for the next plan re-run under the same tool (null: a one-shot CLI). */
  sanitizerSpares: SanitizerSpares | null;
  drafts: DraftStore;
  workspace: WorkspaceStore;
  runPlan(plan: unknown, options: RunOptions): Promise<RunOutcome>;
  /** The architecture a compile targets when none is named: the first device's, or NO_GPU_ARCH without a GPU. Asked once. */
  defaultArch(): Promise<string>;
  dispose(): Promise<void>;
}

export interface WorkbenchOptions {
  /** Keep a warm spare runner per device, and one under compute-sanitizer after a plan's run there (the app and serve do; a one-shot CLI command does not). */
  warmSpare?: boolean;
  sparesAfterFault?: number;
  /** How the spares start (RunnerPoolOptions.spareStarts): the soak compares the two. */
  spareStarts?: RunnerPoolOptions['spareStarts'];
  /** Compile through the on-disk cache (default true; the CLI's `compile --no-cache` turns it off). */
  compileCache?: boolean;
}

export function createWorkbench(launcher: ProcessLauncher, options: WorkbenchOptions = {}): Workbench {
  const compiler = new CompileService(launcher, options.compileCache === false ? null : new CompileCache());
  const pool = new RunnerPool({
    launcher,
    warmSpare: options.warmSpare ?? true,
    sparesAfterFault: options.sparesAfterFault,
    spareStarts: options.spareStarts,
  });
  const sanitizerSpares = options.warmSpare === false ? null : new SanitizerSpares();
  let arch: string | null = null;
  return {
    compiler,
    pool,
    sanitizerSpares,
    drafts: new DraftStore(),
    workspace: new WorkspaceStore(),
    defaultArch: async () => {
      if (arch) return arch;
      const devices = await listDevices();
      arch = devices.ok && devices.devices[0] ? smArch(devices.devices[0]) : NO_GPU_ARCH;
      return arch;
    },
    runPlan: (plan, runOptions) =>
      runOptions.sampleIntervalMs
        ? runPlanSampled(plan, { compiler, pool }, runOptions, runOptions.sampleIntervalMs)
        : runPlan(plan, { compiler, pool }, runOptions),
    dispose: async () => {
      await Promise.all([compiler.dispose(), pool.dispose(), sanitizerSpares?.dispose()]);
    },
  };
}
