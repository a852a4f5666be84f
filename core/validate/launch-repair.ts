import type { Dim3 } from '../dims';
import { dimProduct } from '../dims';
import type { DeviceLimits } from './device-limits';
import { occupancy, type KernelLimits } from './occupancy';

/** The launch fields a suggested fix may change. */
export interface LaunchShape {
  grid: Dim3;
  block: Dim3;
  sharedBytes: number;
  cluster?: Dim3 | null;
  cooperative?: boolean;
  raisesDynamicSharedLimit?: boolean;
}

/** The portable cluster size: what a suggestion shrinks a cluster to. */
export const PORTABLE_CLUSTER = 8;
export const MAX_CLUSTER = 16;

/**
 * The kernel's limits as the launch will have them: a runner that raises the dynamic shared memory limit
 * sets it to the launch's bytes when they are above the default (main/runner/run/dynamic-shared.ts), and the
 * driver's occupancy then counts with that limit — the opt-in maximum per block instead of 48 KiB.
 */
export function effectiveKernelLimits(kernel: KernelLimits, config: Pick<LaunchShape, 'sharedBytes' | 'raisesDynamicSharedLimit'>): KernelLimits {
  if (!config.raisesDynamicSharedLimit || config.sharedBytes <= kernel.maxDynamicSharedSizeBytes) return kernel;
  return { ...kernel, maxDynamicSharedSizeBytes: raisedDynamicSharedLimit(kernel.maxDynamicSharedSizeBytes, config.sharedBytes) };
}

/**
 * The dynamic shared memory limit the workbench's runner sets for a launch: the launch's bytes when they
 * are above the kernel's default, the default otherwise. The runner and the validator share this rule.
 */
export function raisedDynamicSharedLimit(defaultLimit: number, sharedBytes: number): number {
  return sharedBytes > defaultLimit ? sharedBytes : defaultLimit;
}

/** The most threads per block a launch of this kernel can use: the device's limit, or the kernel's where it is lower. */
export function threadCap(device: DeviceLimits, kernel: KernelLimits): number {
  return kernel.maxThreadsPerBlock > 0 ? Math.min(device.maxThreadsPerBlock, kernel.maxThreadsPerBlock) : device.maxThreadsPerBlock;
}

/** The most dynamic shared memory a launch can ask for: what the opt-in leaves beside the static arrays. */
export function dynamicSharedCap(device: DeviceLimits, kernel: KernelLimits, raises: boolean): number {
  const withOptIn = Math.max(0, device.sharedPerBlockOptin - kernel.sharedSizeBytes);
  return raises ? withOptIn : Math.max(0, Math.min(withOptIn, kernel.maxDynamicSharedSizeBytes));
}

export const sameDims = (a: Dim3, b: Dim3): boolean => a[0] === b[0] && a[1] === b[1] && a[2] === b[2];

/** A copy of dims with one axis changed. */
export function withAxis(dims: Dim3, axis: number, value: number): Dim3 {
  const out = [...dims] as [number, number, number];
  out[axis] = value;
  return out;
}

/** Each axis a whole number within [1, max]. */
function clampDims(dims: Dim3, max: readonly number[]): Dim3 {
  return dims.map((d, i) => Math.min(max[i]!, Math.max(1, Number.isInteger(d) ? d : 1))) as unknown as Dim3;
}

/** At most `limit` in all, shrinking z, then y, then x: a (64,32) block at 1024 threads becomes (64,16). */
export function fitProduct(dims: Dim3, limit: number): Dim3 {
  const out = [...dims] as [number, number, number];
  for (let i = 2; i >= 0 && dimProduct(out) > limit; i--) out[i] = Math.max(1, Math.floor(limit / (dimProduct(out) / out[i]!)));
  return out;
}

/** The block unchanged where it can launch; otherwise every axis within its limit and the whole within `cap` threads. */
export function repairBlock(block: Dim3, device: DeviceLimits, cap: number): Dim3 {
  const fits = block.every((d, i) => Number.isInteger(d) && d >= 1 && d <= device.maxBlockDim[i]!) && dimProduct(block) <= cap;
  return fits ? block : fitProduct(clampDims(block, device.maxBlockDim), cap);
}

/** Blocks per SM times SMs for this launch shape; null when not one block fits (or the shape cannot launch). */
export function residentBlocks(
  device: DeviceLimits,
  kernel: KernelLimits,
  launch: Pick<LaunchShape, 'block' | 'sharedBytes' | 'raisesDynamicSharedLimit'>,
): number | null {
  const threads = dimProduct(launch.block);
  if (threads < 1 || threads > threadCap(device, kernel) || launch.sharedBytes > dynamicSharedCap(device, kernel, !!launch.raisesDynamicSharedLimit))
    return null;
  const active = occupancy(device, effectiveKernelLimits(kernel, launch), threads, launch.sharedBytes).activeBlocksPerSM;
  return active > 0 ? active * device.smCount : null;
}

/** The cluster shape the launch checks, or null where none applies (no cluster, size 1, or a device without them). */
export function activeCluster(device: DeviceLimits, launch: Pick<LaunchShape, 'cluster'>): Dim3 | null {
  const c = launch.cluster;
  return c && dimProduct(c) > 1 && device.clusterLaunch ? c : null;
}

/** Each axis rounded to a multiple of the cluster: up where the grid allows it, down otherwise; left where neither fits. */
function roundToCluster(grid: Dim3, cluster: Dim3, device: DeviceLimits, maxBlocks: number | null): Dim3 {
  let out = grid;
  for (let i = 0; i < 3; i++) {
    const c = cluster[i]!;
    if (out[i]! % c === 0) continue;
    const up = Math.ceil(out[i]! / c) * c;
    const down = Math.floor(out[i]! / c) * c;
    const upFits = up <= device.maxGridDim[i]! && (maxBlocks === null || (dimProduct(out) / out[i]!) * up <= maxBlocks);
    if (upFits) out = withAxis(out, i, up);
    else if (down >= c) out = withAxis(out, i, down);
  }
  return out;
}

/**
 * The grid unchanged where it can launch with this block and shared memory; otherwise every axis within
 * [1, its limit], no more blocks than a cooperative launch can hold resident, and a multiple of the cluster.
 */
export function repairGrid(device: DeviceLimits, kernel: KernelLimits, launch: LaunchShape): Dim3 {
  let grid = clampDims(launch.grid, device.maxGridDim);
  const maxBlocks = launch.cooperative && device.cooperativeLaunch ? residentBlocks(device, kernel, launch) : null;
  if (maxBlocks !== null && dimProduct(grid) > maxBlocks) grid = fitProduct(grid, maxBlocks);
  const cluster = activeCluster(device, launch);
  return cluster ? roundToCluster(grid, cluster, device, maxBlocks) : grid;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

function smallestFactor(n: number): number {
  for (let f = 2; f * f <= n; f++) if (n % f === 0) return f;
  return n;
}

/** A cluster of at most `size` blocks made of divisors of the given one, so it still divides any grid the original divided. */
export function shrinkCluster(cluster: Dim3, size: number): Dim3 {
  let out = cluster;
  while (dimProduct(out) > size) {
    const axis = out.indexOf(Math.max(...out));
    out = withAxis(out, axis, out[axis]! / smallestFactor(out[axis]!));
  }
  return out;
}

/** The cluster within the size limit, made of divisors of the given one (so it still divides what the original divided). */
function sizedCluster(device: DeviceLimits, launch: Pick<LaunchShape, 'cluster'>): Dim3 | null {
  const cluster = activeCluster(device, launch);
  if (!cluster) return launch.cluster ?? null;
  return dimProduct(cluster) > MAX_CLUSTER ? shrinkCluster(cluster, PORTABLE_CLUSTER) : cluster;
}

/** The cluster unchanged where it divides the grid and is within the size limit; otherwise the nearest that is. */
export function repairCluster(device: DeviceLimits, launch: Pick<LaunchShape, 'grid' | 'cluster'>): Dim3 | null {
  const sized = sizedCluster(device, launch);
  if (!sized || !activeCluster(device, { cluster: sized })) return sized;
  return sized.map((c, i) => (launch.grid[i]! % c === 0 ? c : gcd(launch.grid[i]!, c))) as unknown as Dim3;
}

/**
 * The launch with every error a launch change can fix repaired, and nothing else changed: block, then
 * dynamic shared memory, then the cluster's size, then the grid (which depends on all three: a cooperative
 * launch's residency, the cluster's multiples), then a cluster that divides it. Every error's suggestion
 * takes its values from here, so all of them applied together are this one valid launch.
 */
export function repairLaunch(
  device: DeviceLimits,
  kernel: KernelLimits,
  config: LaunchShape,
): Required<Pick<LaunchShape, 'grid' | 'block' | 'sharedBytes'>> & { cluster: Dim3 | null } {
  const block = repairBlock(config.block, device, threadCap(device, kernel));
  const sharedBytes = repairSharedBytes(device, kernel, config);
  const sized = sizedCluster(device, config);
  const grid = repairGrid(device, kernel, { ...config, block, sharedBytes, cluster: sized });
  return { grid, block, sharedBytes, cluster: repairCluster(device, { grid, cluster: sized }) };
}

/**
 * Dynamic shared memory within what the device allows beside the static arrays (and, without the opt-in,
 * within the kernel's default). A launch under the device's maximum but over the default stays as it is:
 * its fix is the attribute, in the host code.
 */
function repairSharedBytes(device: DeviceLimits, kernel: KernelLimits, config: Pick<LaunchShape, 'sharedBytes' | 'raisesDynamicSharedLimit'>): number {
  if (kernel.sharedSizeBytes > device.sharedPerBlockOptin) return config.sharedBytes;
  if (config.sharedBytes <= device.sharedPerBlockOptin - kernel.sharedSizeBytes) return config.sharedBytes;
  return dynamicSharedCap(device, kernel, !!config.raisesDynamicSharedLimit);
}
