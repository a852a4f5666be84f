import { CompileService } from './compile/compile-service';
import type { ProcessLauncher } from './process/launcher';
import { RunnerPool } from './runner/runner-pool';
import { DraftStore } from './services/draft-store';
import { WorkspaceStore } from './services/workspace-store';
import { runPlan, type RunOptions, type RunOutcome } from './services/run-service';
import { seriesOf } from './memory/monitor-export';
import { sampleDuring } from './memory/sample-during';

/** Samples kept with a run's outcome: 10 minutes at 10 ms. */
const MAX_RUN_SAMPLES = 60_000;

/** The run, with device memory sampled through NVML around it: the outcome carries the series, or why there is none. */
async function runPlanSampled(plan: unknown, services: Parameters<typeof runPlan>[1], options: RunOptions, intervalMs: number): Promise<RunOutcome> {
  const { value, report, store, problem } = await sampleDuring(() => runPlan(plan, services, options), { intervalMs });
  return { ...value, samples: report && store ? seriesOf(report, store, MAX_RUN_SAMPLES) : null, samplingProblem: problem };
}

/** The host's services, shared by the CLI, the serve host and the Electron main process. */
export interface Workbench {
  compiler: CompileService;
  pool: RunnerPool;
  drafts: DraftStore;
  workspace: WorkspaceStore;
  runPlan(plan: unknown, options: RunOptions): Promise<RunOutcome>;
  dispose(): Promise<void>;
}

export function createWorkbench(launcher: ProcessLauncher, options: { warmSpare?: boolean; sparesAfterFault?: number } = {}): Workbench {
  const compiler = new CompileService(launcher);
  const pool = new RunnerPool({ launcher, warmSpare: options.warmSpare ?? true, sparesAfterFault: options.sparesAfterFault });
  return {
    compiler,
    pool,
    drafts: new DraftStore(),
    workspace: new WorkspaceStore(),
    runPlan: (plan, runOptions) =>
      runOptions.sampleIntervalMs
        ? runPlanSampled(plan, { compiler, pool }, runOptions, runOptions.sampleIntervalMs)
        : runPlan(plan, { compiler, pool }, runOptions),
    dispose: async () => {
      await Promise.all([compiler.dispose(), pool.dispose()]);
    },
  };
}
