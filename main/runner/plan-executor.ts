import type { LaunchPlan } from '../../core/plan/plan-schema';
import type { CompiledModule } from '../../core/runner/protocol';
import type { LoadedFunction } from './module-cache';
import { chooseRunChecks } from './run/choose-checks';
import { PlanRun, type ExecutedPlan } from './run/plan-run';
import type { RunnerAddon } from './run/recorded-device';

export type { ExecutedPlan };

/**
 * Runs a plan in this (runner) process: the run object (run/plan-run.ts) with the checks the plan chooses
 * (run/choose-checks.ts). Buffers get guard bytes around them and start poisoned (core/plan/guards.ts), so
 * out-of-bounds writes and reads of memory never written show up in the result rather than passing silently.
 */
export function executePlan(
  addon: RunnerAddon,
  plan: LaunchPlan,
  modules: CompiledModule[],
  device: { ordinal: number; name: string },
  /** The module's function; `loaded` when this call loaded it (a cache hit is no driver call, and no event). */
  loadFunction: (module: CompiledModule) => Promise<{ fn: LoadedFunction; loaded: boolean }>,
  runId: string,
  timeLimitMs: number | null = null,
): Promise<ExecutedPlan> {
  return new PlanRun(addon, plan, { modules, device, loadFunction, runId, timeLimitMs }, chooseRunChecks).execute();
}
