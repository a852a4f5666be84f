import { formatBytes } from '../format';
import type { DeviceLimits } from './device-limits';

/**
 * The two shared-memory limits a kernel meets, and which applies to what — said the same way by the compile
 * (a kernel's static arrays) and by the launch panel (a launch on a chosen device), from this one place:
 *
 * - static `__shared__` arrays: 48 KiB per block on every architecture (ptxas refuses more; NVRTC's builds a
 *   kernel that can never launch);
 * - static and dynamic together: the device's opt-in maximum per block (227 KiB on Hopper), which only dynamic
 *   shared memory (`extern __shared__`) reaches, once cudaFuncAttributeMaxDynamicSharedMemorySize is raised.
 */
export const STATIC_SHARED_LIMIT = 48 * 1024;

/**
 * The opt-in maximum per block by compute capability, for a compile that knows its architecture but not a
 * device (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability": maximum shared
 * memory per thread block). A device's own attribute (MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) wins where known.
 */
const OPT_IN_BY_ARCH: Record<string, number> = {
  '70': 96 * 1024,
  '72': 96 * 1024,
  '75': 64 * 1024,
  '80': 163 * 1024,
  '86': 99 * 1024,
  '87': 163 * 1024,
  '89': 99 * 1024,
  '90': 227 * 1024,
  '100': 227 * 1024,
  '101': 227 * 1024,
  '103': 227 * 1024,
  '110': 227 * 1024,
  '120': 99 * 1024,
  '121': 99 * 1024,
};

export interface SharedLimits {
  /** What static __shared__ arrays may hold per block. */
  staticPerBlock: number;
  /** What static and dynamic shared memory may hold together per block with the opt-in; null when not known. */
  optInPerBlock: number | null;
  /** Where the opt-in maximum is from, for the sentence: a device's name, or an architecture ("sm_90"). */
  where: string | null;
}

/** The limits for a chosen device, or for the architecture a compile targets ("sm_90", "compute_90"). */
export function sharedLimits(on: Pick<DeviceLimits, 'name' | 'sharedPerBlockOptin'> | { arch: string | null | undefined }): SharedLimits {
  if ('sharedPerBlockOptin' in on) return { staticPerBlock: STATIC_SHARED_LIMIT, optInPerBlock: on.sharedPerBlockOptin, where: on.name };
  const cc = /^(?:sm|compute|lto)_(\d+)[af]?$/.exec(on.arch ?? '')?.[1];
  const optIn = cc ? (OPT_IN_BY_ARCH[cc] ?? null) : null;
  return { staticPerBlock: STATIC_SHARED_LIMIT, optInPerBlock: optIn, where: optIn !== null ? `sm_${cc}` : null };
}

/**
 * Which limit applies to what, in one clause: "static __shared__ arrays are limited to 48 KiB per block; only
 * dynamic shared memory (extern __shared__) goes past that, up to 227 KiB per block in all on sm_90 once
 * cudaFuncAttributeMaxDynamicSharedMemorySize is raised".
 */
export function sharedLimitsClause(limits: SharedLimits): string {
  const most =
    limits.optInPerBlock !== null
      ? `up to ${formatBytes(limits.optInPerBlock)} per block in all on ${limits.where}`
      : "up to the device's opt-in maximum per block in all";
  return `static __shared__ arrays are limited to ${formatBytes(limits.staticPerBlock)} per block; only dynamic shared memory (extern __shared__) goes past that, ${most} once cudaFuncAttributeMaxDynamicSharedMemorySize is raised`;
}
