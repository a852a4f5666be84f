import { CompileService } from './compile/compile-service';
import type { ProcessLauncher } from './process/launcher';
import { RunnerPool } from './runner/runner-pool';
import { DraftStore } from './services/draft-store';
import { WorkspaceStore } from './services/workspace-store';
import { runPlan, type RunOptions, type RunOutcome } from './services/run-service';

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
    runPlan: (plan, runOptions) => runPlan(plan, { compiler, pool }, runOptions),
    dispose: async () => {
      await Promise.all([compiler.dispose(), pool.dispose()]);
    },
  };
}
