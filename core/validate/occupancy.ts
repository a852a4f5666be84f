import type { DeviceLimits } from './device-limits';

/** A compiled kernel's attributes, as cuFuncGetAttribute (or ptxas) reports them. */
export interface KernelLimits {
  numRegs: number;
  /** Static __shared__ bytes. */
  sharedSizeBytes: number;
  localSizeBytes: number;
  /** The most threads per block this kernel can launch with (registers, __launch_bounds__). */
  maxThreadsPerBlock: number;
  /** The dynamic shared memory a launch may use without raising the attribute: 48 KiB minus static, by default. */
  maxDynamicSharedSizeBytes: number;
  /** Barriers per block (ptxas "used N barriers"); 1 when unknown, as the CUDA occupancy header assumes. */
  barriers?: number;
  /** The static __shared__ arrays the source declares, where it is known: to name the one to shrink. */
  sharedArrays?: { name: string; type: string; dims: number[]; bytes: number | null; line: number }[];
}

export type OccupancyLimiter = 'warps' | 'registers' | 'shared memory' | 'blocks per SM' | 'barriers';

export interface Occupancy {
  activeBlocksPerSM: number;
  activeWarpsPerSM: number;
  maxWarpsPerSM: number;
  /** 0..1 */
  occupancy: number;
  limiters: OccupancyLimiter[];
  limits: Record<OccupancyLimiter, number>;
  allocatedRegistersPerBlock: number;
  allocatedSharedPerBlock: number;
  /** The shared-memory carveout the driver would pick per SM, in bytes. */
  sharedPerSMCarveout: number;
}

const roundUp = (x: number, y: number) => Math.ceil(x / y) * y;
const SHARED_GRANULARITY = (major: number) => (major >= 8 ? 128 : 256);
const REG_GRANULARITY = 256;
const SUB_PARTITIONS = 4;
const MAX_REGS_PER_THREAD = (major: number) => (major >= 7 ? 256 : 255);

/** The shared-memory carveouts an SM can be configured to (KiB), per architecture (cuda_occupancy.h). */
export function carveoutSteps(limits: Pick<DeviceLimits, 'computeMajor' | 'computeMinor'>): number[] {
  const { computeMajor: major, computeMinor: minor } = limits;
  if (major === 7) return minor === 5 ? [0, 32, 64] : [0, 8, 16, 32, 64, 96];
  if (major === 8) return minor === 0 || minor === 7 ? [0, 8, 16, 32, 64, 100, 132, 164] : [0, 8, 16, 32, 64, 100];
  if (major === 9 || (major === 10 && [0, 1, 3].includes(minor)) || major === 11) return [0, 8, 16, 32, 64, 100, 132, 164, 196, 228];
  return [0, 8, 16, 32, 64, 100];
}

function alignUpCarveout(bytes: number, limits: DeviceLimits): number | null {
  for (const kib of carveoutSteps(limits)) if (bytes <= kib * 1024) return kib * 1024;
  return null;
}

/**
 * Active blocks per SM for a kernel at a block size, as cuOccupancyMaxActiveBlocksPerMultiprocessor
 * computes it: NVIDIA's algorithm from cuda_occupancy.h (CUDA 13), with the default carveout preference.
 */
export function occupancy(device: DeviceLimits, kernel: KernelLimits, blockSize: number, dynamicShared: number): Occupancy {
  const warpsPerBlock = Math.ceil(blockSize / device.warpSize);
  const maxWarpsPerSM = device.maxThreadsPerSM / device.warpSize;

  const byWarps = blockSize > device.maxThreadsPerBlock ? 0 : Math.floor(maxWarpsPerSM / warpsPerBlock);
  const byBlocks = device.maxBlocksPerSM;

  const regsPerWarp = roundUp(kernel.numRegs * device.warpSize, REG_GRANULARITY);
  const regsPerBlock = regsPerWarp * warpsPerBlock;
  const regsAssumed = regsPerWarp * roundUp(warpsPerBlock, SUB_PARTITIONS);
  let byRegs: number;
  if (device.regsPerBlock < regsAssumed || device.regsPerBlock < regsPerBlock || kernel.numRegs > MAX_REGS_PER_THREAD(device.computeMajor)) byRegs = 0;
  else if (regsPerWarp === 0) byRegs = Number.MAX_SAFE_INTEGER;
  else byRegs = Math.floor((Math.floor(device.regsPerSM / SUB_PARTITIONS / regsPerWarp) * SUB_PARTITIONS) / warpsPerBlock);

  const staticShared = kernel.sharedSizeBytes + device.reservedSharedPerBlock;
  const sharedPerBlock = roundUp(staticShared + dynamicShared, SHARED_GRANULARITY(device.computeMajor));
  const maxUsage = staticShared + kernel.maxDynamicSharedSizeBytes;
  const limitPerBlock =
    (maxUsage > device.sharedPerBlock ? device.sharedPerBlockOptin : device.sharedPerBlock) + (device.computeMajor >= 8 ? device.reservedSharedPerBlock : 0);
  const preference = alignUpCarveout(device.sharedPerSM, device) ?? device.sharedPerSM;
  let carveout = preference;
  let byShared: number;
  if (dynamicShared > kernel.maxDynamicSharedSizeBytes || sharedPerBlock > limitPerBlock) byShared = 0;
  else {
    if (preference < sharedPerBlock) carveout = alignUpCarveout(sharedPerBlock, device) ?? device.sharedPerSM;
    byShared = sharedPerBlock > 0 ? Math.floor(carveout / sharedPerBlock) : Number.MAX_SAFE_INTEGER;
  }

  let active = Math.min(byRegs, byShared, byWarps, byBlocks);
  const barriers = kernel.barriers ?? 1;
  let byBarriers = Number.MAX_SAFE_INTEGER;
  if (device.computeMajor >= 9 && barriers > 0) {
    byBarriers = Math.floor((byBlocks * 2) / barriers);
    active = Math.min(active, byBarriers);
  }
  const limits: Record<OccupancyLimiter, number> = {
    warps: byWarps,
    registers: byRegs,
    'shared memory': byShared,
    'blocks per SM': byBlocks,
    barriers: byBarriers,
  };
  const limiters = (Object.keys(limits) as OccupancyLimiter[]).filter((k) => limits[k] === active);
  return {
    activeBlocksPerSM: active,
    activeWarpsPerSM: active * warpsPerBlock,
    maxWarpsPerSM,
    occupancy: (active * warpsPerBlock) / maxWarpsPerSM,
    limiters,
    limits,
    allocatedRegistersPerBlock: regsPerBlock,
    allocatedSharedPerBlock: sharedPerBlock,
    sharedPerSMCarveout: carveout,
  };
}

/**
 * The block size with the highest occupancy (ties go to the larger block), as
 * cuOccupancyMaxPotentialBlockSize picks it, and the smallest grid that fills the device at that size.
 */
export function suggestBlockSize(
  device: DeviceLimits,
  kernel: KernelLimits,
  dynamicShared: number,
): { blockSize: number; minGridSize: number; occupancy: number } {
  let best = { blockSize: 0, activeWarps: 0, blocks: 0 };
  const limit = Math.min(device.maxThreadsPerBlock, kernel.maxThreadsPerBlock);
  for (let blockSize = roundUp(limit, device.warpSize) > limit ? limit - (limit % device.warpSize) : limit; blockSize > 0; blockSize -= device.warpSize) {
    const o = occupancy(device, kernel, blockSize, dynamicShared);
    if (o.activeWarpsPerSM > best.activeWarps) best = { blockSize, activeWarps: o.activeWarpsPerSM, blocks: o.activeBlocksPerSM };
    if (o.occupancy >= 1) break;
  }
  return { blockSize: best.blockSize, minGridSize: best.blocks * device.smCount, occupancy: best.activeWarps / (device.maxThreadsPerSM / device.warpSize) };
}

/** The most threads per block the kernel could launch with, given its registers (what the driver reports). */
export function registerLimitedBlockSize(device: Pick<DeviceLimits, 'maxThreadsPerBlock' | 'warpSize' | 'regsPerBlock'>, numRegs: number): number {
  for (let threads = device.maxThreadsPerBlock; threads > 0; threads -= device.warpSize) {
    const warps = Math.ceil(threads / device.warpSize);
    const perWarp = roundUp(numRegs * device.warpSize, REG_GRANULARITY);
    if (perWarp * roundUp(warps, SUB_PARTITIONS) <= device.regsPerBlock) return threads;
  }
  return 0;
}
