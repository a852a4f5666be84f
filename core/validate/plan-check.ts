import { formatDim3 } from '../dims';
import { planLaunches, type PlanLaunch } from '../plan/plan-launch';
import type { LaunchPlan } from '../plan/plan-schema';
import type { DeviceLimits } from './device-limits';
import type { KernelLimits } from './occupancy';
import { checkPlanMemory, type MemoryFacts, type MemoryFinding } from './plan-memory';
import { checkStepOrder, type OrderFinding } from './plan-order';
import { validateLaunch, type Finding } from './validate-launch';

/** What the validator says about one launch step of the plan about to run. */
export interface LaunchCheck {
  stepIndex: number;
  label: string;
  /** 'kernel' when the kernel's compiled resources were known; 'device' when only the device's limits could be checked. */
  checkedWith: 'kernel' | 'device';
  findings: Finding[];
}

export const launchLabel = (l: Pick<PlanLaunch, 'entry' | 'grid' | 'block' | 'sharedBytes'>): string =>
  `launch ${l.entry}<<<${formatDim3(l.grid)}, ${formatDim3(l.block)}${l.sharedBytes ? `, ${l.sharedBytes}` : ''}>>>`;

/** A kernel whose resources are unknown (its source is not open): only the device's own limits apply. */
function deviceOnly(device: DeviceLimits): KernelLimits {
  return { numRegs: 0, sharedSizeBytes: 0, localSizeBytes: 0, maxThreadsPerBlock: device.maxThreadsPerBlock, maxDynamicSharedSizeBytes: device.sharedPerBlock };
}

/**
 * Every launch of a plan against a device, before it runs: with the kernel's compiled resources where
 * they are known (`kernelLimits` answers for the kernels of the open document), else the device's limits.
 */
export function checkPlanLaunches(plan: unknown, device: DeviceLimits, kernelLimits: (launch: PlanLaunch) => KernelLimits | null): LaunchCheck[] {
  return planLaunches(plan).map((launch) => {
    const known = kernelLimits(launch);
    const config = { grid: launch.grid, block: launch.block, sharedBytes: launch.sharedBytes, raisesDynamicSharedLimit: true };
    const findings = validateLaunch(device, known ?? deviceOnly(device), config).findings.filter((f) => known || f.field !== 'kernel');
    return { stepIndex: launch.stepIndex, label: launchLabel(launch), checkedWith: known ? 'kernel' : 'device', findings };
  });
}

/** The errors that stop the run, one line each: the step, what is wrong, and the fix. */
export function launchRefusals(checks: LaunchCheck[]): string[] {
  return checks.flatMap((c) =>
    c.findings.filter((f) => f.severity === 'error').map((f) => `Step ${c.stepIndex + 1} (${c.label}): ${f.message}${f.fix ? ` Fix: ${f.fix}` : ''}`),
  );
}

/** What the validator says about a whole plan before it runs: each launch, its steps' order, and its memory against the machine's. */
export interface PlanCheck {
  launches: LaunchCheck[];
  /** Steps that use a buffer before it is allocated or after it is freed (core/validate/plan-order.ts). */
  order: OrderFinding[];
  memory: MemoryFinding[];
  /** No launch, no step and no buffer would fail. */
  ok: boolean;
}

/**
 * The whole plan against a device and the host: every launch (with the kernel's resources where known), the steps'
 * order (each buffer allocated before it is used), and every allocation (the device's total and free memory, the host's for what it uploads and reads back). The one check the
 * launch panel, Run, `gpu-workbench validate --plan` and `run` make.
 */
export function checkPlan(
  plan: LaunchPlan,
  device: DeviceLimits,
  memory: Omit<MemoryFacts, 'device'>,
  kernelLimits: (launch: PlanLaunch) => KernelLimits | null,
): PlanCheck {
  const launches = checkPlanLaunches(plan, device, kernelLimits);
  const order = checkStepOrder(plan);
  const found = checkPlanMemory(plan, { ...memory, device });
  const ok = ![...found, ...order].some((f) => f.severity === 'error') && launches.every((c) => c.findings.every((f) => f.severity !== 'error'));
  return { launches, order, memory: found, ok };
}

/** The memory errors that stop the run, one line each: which buffer, by how much, and the fix. */
export function memoryRefusals(findings: MemoryFinding[]): string[] {
  return findings.filter((f) => f.severity === 'error').map((f) => `${f.message} Fix: ${f.fix}`);
}
