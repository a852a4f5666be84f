import type { KernelFacts } from '../compile/compile-result';
import { staticSharedArrays } from '../compile/shared-arrays';
import type { DeviceLimits } from './device-limits';
import type { KernelLimits } from './occupancy';

/** The validator's view of a compiled kernel; null when its resources are unknown. With the source, its shared arrays by name. */
export function kernelLimitsFromFacts(facts: KernelFacts, device: DeviceLimits, source?: string): KernelLimits | null {
  if (facts.registers === null || facts.sharedBytes === null) return null;
  return {
    numRegs: facts.registers,
    sharedSizeBytes: facts.sharedBytes,
    localSizeBytes: facts.localBytes ?? 0,
    maxThreadsPerBlock: Math.min(device.maxThreadsPerBlock, facts.maxThreadsPerBlock ?? device.maxThreadsPerBlock),
    // The default: what a launch may use without raising cudaFuncAttributeMaxDynamicSharedMemorySize.
    maxDynamicSharedSizeBytes: Math.max(0, device.sharedPerBlock - facts.sharedBytes),
    ...(source !== undefined && facts.sharedBytes > 0 ? { sharedArrays: staticSharedArrays(source, facts.name) } : {}),
  };
}
