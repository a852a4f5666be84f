import type { RunOutcome } from '../runner/run-outcome';
import { planLaunches } from './plan-launch';

const sameDim = (a: readonly number[], b: readonly number[]) => a.length === 3 && b.length === 3 && a.every((v, i) => v === b[i]);

/**
 * Whether a plan is the one a recorded result ran: the steps the result recorded (all of them, or up to
 * the failure) are the plan's first steps, op for op, and each launch it recorded launched the same kernel
 * with the same grid, block and shared memory. A result keeps no copy of its plan, so this is how a plan
 * open here is known to be its own (to run it again under compute-sanitizer).
 */
export function planMatchesOutcome(plan: unknown, outcome: Pick<RunOutcome, 'result'>): boolean {
  const result = outcome.result;
  const steps = (plan as { steps?: unknown } | null)?.steps;
  if (!result || !Array.isArray(steps) || result.steps.length === 0 || result.steps.length > steps.length) return false;
  const launches = planLaunches(plan);
  for (const step of result.steps) {
    const planned = steps[step.index] as { op?: unknown } | undefined;
    if (!planned || planned.op !== step.op) return false;
    if (step.op !== 'launch') continue;
    const launch = launches.find((l) => l.stepIndex === step.index);
    if (!launch) return false;
    const record = result.launches.find((l) => l.stepIndex === step.index);
    if (record) {
      if (
        record.entry !== launch.entry ||
        !sameDim(record.grid, launch.grid) ||
        !sameDim(record.block, launch.block) ||
        record.sharedBytes !== launch.sharedBytes
      )
        return false;
    } else if (!step.label.startsWith(`launch ${launch.entry}<<<`)) return false;
  }
  return true;
}
