import { totalmem } from 'node:os';

import type { DeviceInfo } from '../../core/devices';
import type { Problem } from '../../core/discovery';
import { launchRefusals, memoryRefusals, type PlanCheck } from '../../core/validate/plan-check';
import { orderRefusals } from '../../core/validate/plan-order';
import type { MemoryFacts } from '../../core/validate/plan-memory';
import { listDevices } from './device-service';

/**
 * What the plan check knows of this machine's memory: the device's free memory from NVML (null where NVML cannot
 * say) and the host's total memory. The device's total comes with its limits.
 */
export async function machineMemory(device: Pick<DeviceInfo, 'uuid'> | null): Promise<Omit<MemoryFacts, 'device'>> {
  const devices = device ? await listDevices().catch(() => null) : null;
  const freeBytes = devices?.ok ? (devices.memory?.find((m) => m.uuid === device!.uuid)?.freeBytes ?? null) : null;
  return { freeBytes, hostBytes: totalmem() };
}

/** Every reason the plan would fail, one line each (launches, the steps' order, then memory), with its fix. */
export const planRefusalLines = (check: PlanCheck): string[] => [
  ...launchRefusals(check.launches),
  ...orderRefusals(check.order),
  ...memoryRefusals(check.memory),
];

const REFUSED = 'The plan would fail on ';

/** Whether a run's problem is the validator refusing the plan before it ran (the one predicate for it). */
export const isPlanRefused = (problem: Problem | null): boolean => problem?.title.startsWith(REFUSED) ?? false;

/** A plan the validator refuses, as the run's problem: what would fail, and that nothing ran. */
export function planRefusedProblem(check: PlanCheck, deviceName: string): Problem {
  return {
    title: `${REFUSED}${deviceName}`,
    detail: planRefusalLines(check).join('\n'),
    remedy: 'Fix what is named above and run again: nothing was allocated or launched.',
  };
}
