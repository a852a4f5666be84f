import { launchFromStepLabel, type PlanLaunch } from '../plan/plan-launch';
import type { RunOutcome } from './run-outcome';

/** The launch a recorded result is about, and the device that ran it: to check it again here. */
export interface RecordedLaunch extends Pick<PlanLaunch, 'entry' | 'grid' | 'block' | 'sharedBytes'> {
  stepIndex: number;
  deviceName: string | null;
}

/**
 * The launch a result is about: the launch that failed, or the diagnosed step when it is a launch; else the last
 * launch of the kernel the diagnosis names; else the last launch before the diagnosed step (a wrong result is found
 * where its buffer is read back: the launch before it wrote it, not a reference kernel that ran first); else the
 * first. Its grid and block from the launch records where the step completed, else from the step's label (a launch
 * the driver refused has no record, only its label).
 */
export function recordedLaunch(outcome: Pick<RunOutcome, 'result'> & Partial<Pick<RunOutcome, 'diagnosis'>>): RecordedLaunch | null {
  const result = outcome.result;
  if (!result) return null;
  const deviceName = result.device?.name ?? null;
  const d = outcome.diagnosis ?? null;
  const about = result.failure?.stepIndex ?? d?.step?.index ?? null;
  const launchSteps = result.steps.filter((s) => s.op === 'launch');
  const entryOf = (step: (typeof launchSteps)[number]) =>
    result.launches.find((l) => l.stepIndex === step.index)?.entry ?? launchFromStepLabel(step.label)?.entry ?? null;
  const before = about === null ? launchSteps : launchSteps.filter((s) => s.index <= about);
  const chosen =
    launchSteps.find((s) => s.index === about) ??
    (d?.kernel ? [...before].reverse().find((s) => entryOf(s) === d.kernel!.entry) : undefined) ??
    before[before.length - 1];
  for (const step of chosen ? [chosen, ...launchSteps] : launchSteps) {
    const record = result.launches.find((l) => l.stepIndex === step.index);
    if (record) return { stepIndex: step.index, entry: record.entry, grid: record.grid, block: record.block, sharedBytes: record.sharedBytes, deviceName };
    const parsed = launchFromStepLabel(step.label);
    if (parsed) return { stepIndex: step.index, ...parsed, deviceName };
  }
  return null;
}
