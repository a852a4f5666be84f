import { launchFromStepLabel, type PlanLaunch } from '../plan/plan-launch';
import type { RunOutcome } from './run-outcome';

/** The launch a recorded result is about, and the device that ran it: to check it again here. */
export interface RecordedLaunch extends Pick<PlanLaunch, 'entry' | 'grid' | 'block' | 'sharedBytes'> {
  stepIndex: number;
  deviceName: string | null;
}

/**
 * The failing launch, else the first: from the launch records where the step completed, else from the
 * step's label (a launch the driver refused has no record, only its label).
 */
export function recordedLaunch(outcome: Pick<RunOutcome, 'result'>): RecordedLaunch | null {
  const result = outcome.result;
  if (!result) return null;
  const deviceName = result.device?.name ?? null;
  const launchSteps = result.steps.filter((s) => s.op === 'launch');
  const failed = launchSteps.find((s) => s.index === result.failure?.stepIndex);
  for (const step of failed ? [failed] : launchSteps) {
    const record = result.launches.find((l) => l.stepIndex === step.index);
    if (record) return { stepIndex: step.index, entry: record.entry, grid: record.grid, block: record.block, sharedBytes: record.sharedBytes, deviceName };
    const parsed = launchFromStepLabel(step.label);
    if (parsed) return { stepIndex: step.index, ...parsed, deviceName };
  }
  return null;
}
