import type { KernelFacts } from '../compile/compile-result';
import { staticSharedArrays } from '../compile/shared-arrays';
import type { DeviceLimits } from './device-limits';
import type { KernelLimits } from './occupancy';

/**
 * What a launch may use without raising cudaFuncAttributeMaxDynamicSharedMemorySize: 48 KiB less the
 * static arrays. Above 48 KiB of static memory (a kernel JIT-compiled from PTX) the driver reports what
 * the opt-in leaves instead: 166912 bytes beside 64 KiB static on an H100 (driver 580), and such a launch
 * runs without the attribute.
 */
export function defaultDynamicShared(device: Pick<DeviceLimits, 'sharedPerBlock' | 'sharedPerBlockOptin'>, staticBytes: number): number {
  const limit = staticBytes > device.sharedPerBlock ? device.sharedPerBlockOptin : device.sharedPerBlock;
  return Math.max(0, limit - staticBytes);
}

/** The validator's view of a compiled kernel; null when its resources are unknown. With the source, its shared arrays by name. */
export function kernelLimitsFromFacts(facts: KernelFacts, device: DeviceLimits, source?: string): KernelLimits | null {
  if (facts.registers === null || facts.sharedBytes === null) return null;
  return {
    numRegs: facts.registers,
    sharedSizeBytes: facts.sharedBytes,
    localSizeBytes: facts.localBytes ?? 0,
    maxThreadsPerBlock: Math.min(device.maxThreadsPerBlock, facts.maxThreadsPerBlock ?? device.maxThreadsPerBlock),
    maxDynamicSharedSizeBytes: defaultDynamicShared(device, facts.sharedBytes),
    ...(source !== undefined && facts.sharedBytes > 0 ? { sharedArrays: staticSharedArrays(source, facts.name) } : {}),
  };
}
