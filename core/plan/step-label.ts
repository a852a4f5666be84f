import { formatDim3 } from '../dims';
import type { LaunchPlan, Step } from './plan-schema';

/** A step as the run's log shows it: "launch vecAdd<<<(4, 1, 1), (256, 1, 1)>>>", "download c and compare". */
export function stepLabel(step: Step, plan: Pick<LaunchPlan, 'kernels'> | null): string {
  switch (step.op) {
    case 'launch': {
      const entry = plan?.kernels.find((k) => k.id === step.kernel)?.entry ?? step.kernel;
      return `launch ${entry}<<<${formatDim3(step.grid)}, ${formatDim3(step.block)}${step.sharedBytes ? `, ${step.sharedBytes}` : ''}>>>`;
    }
    case 'sync':
      return 'synchronize';
    case 'download':
      return step.expect ? `download ${step.buffer} and compare` : `download ${step.buffer}`;
    default:
      return `${step.op} ${step.buffer}`;
  }
}
