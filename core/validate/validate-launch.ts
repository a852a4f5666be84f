import type { Dim3 } from '../dims';
import { dimProduct, formatDim3 } from '../dims';
import { formatBytes } from '../format';
import type { DeviceLimits } from './device-limits';
import { occupancy, registerLimitedBlockSize, suggestBlockSize, type KernelLimits, type Occupancy } from './occupancy';

export type Severity = 'error' | 'warning' | 'note';

export interface LaunchError {
  code: number;
  name: string;
}

/** One thing the validator has to say about a launch. */
export interface Finding {
  rule: string;
  severity: Severity;
  /** Which field it is about, so the UI can show it beside that field. */
  field: 'grid' | 'block' | 'sharedBytes' | 'cluster' | 'kernel';
  message: string;
  limit: number | null;
  value: number | null;
  /** What cuLaunchKernel (driver API) and cudaLaunchKernel / <<<>>> (runtime API) would return. */
  driverError: LaunchError | null;
  runtimeError: LaunchError | null;
  /** The change that fixes it, in one line. */
  fix: string | null;
  /**
   * The launch configuration the fix proposes, where a launch change can fix it (the fix's numbers come
   * from here); null when the fix is in the kernel or the host code. Every value is within the device's limits.
   */
  suggested?: { grid?: Dim3; block?: Dim3; sharedBytes?: number } | null;
}

export interface LaunchConfig {
  grid: Dim3;
  block: Dim3;
  sharedBytes: number;
  cooperative?: boolean;
  cluster?: Dim3 | null;
  /** The workbench raises MAX_DYNAMIC_SHARED_SIZE_BYTES itself when a launch needs it (true for its runner). */
  raisesDynamicSharedLimit?: boolean;
}

export interface Validation {
  ok: boolean;
  findings: Finding[];
  occupancy: Occupancy | null;
  /** Full waves of blocks over the device's SMs, at this occupancy. */
  waves: number | null;
  suggestedBlockSize: number | null;
}

const INVALID_VALUE: LaunchError = { code: 1, name: 'CUDA_ERROR_INVALID_VALUE' };
const OUT_OF_RESOURCES: LaunchError = { code: 701, name: 'CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES' };
const RT_INVALID_CONFIGURATION: LaunchError = { code: 9, name: 'cudaErrorInvalidConfiguration' };
const RT_INVALID_VALUE: LaunchError = { code: 1, name: 'cudaErrorInvalidValue' };
const RT_OUT_OF_RESOURCES: LaunchError = { code: 701, name: 'cudaErrorLaunchOutOfResources' };
const AXES = ['x', 'y', 'z'] as const;

/** A block shape with the same thread count kept within a limit, for "use A instead of B" fixes. */
function fitBlock(block: Dim3, maxThreads: number, maxDim: readonly number[]): Dim3 {
  const dims = [...block] as [number, number, number];
  for (let i = 2; i >= 0 && dimProduct(dims) > maxThreads; i--) {
    while (dims[i]! > 1 && dimProduct(dims) > maxThreads) dims[i] = Math.max(1, Math.floor(dims[i]! / 2));
  }
  for (let i = 0; i < 3; i++) dims[i] = Math.min(dims[i]!, maxDim[i]!);
  return dims;
}

/** Every grid axis within [1, the device's limit]: a suggestion fixes the whole grid, not one axis. */
function repairGrid(grid: Dim3, device: DeviceLimits): Dim3 {
  return grid.map((d, i) => Math.min(device.maxGridDim[i]!, Math.max(1, Number.isInteger(d) ? d : 1))) as unknown as Dim3;
}

/** Every block axis within [1, its limit], and the whole block within `maxThreads`. */
function repairBlock(block: Dim3, device: DeviceLimits, maxThreads = device.maxThreadsPerBlock): Dim3 {
  const clamped = block.map((d, i) => Math.min(device.maxBlockDim[i]!, Math.max(1, Number.isInteger(d) ? d : 1))) as unknown as Dim3;
  return fitBlock(clamped, Math.max(1, Math.min(maxThreads, device.maxThreadsPerBlock)), device.maxBlockDim);
}

/** A copy of dims with one axis changed. */
function withAxis(dims: Dim3, axis: number, value: number): Dim3 {
  const out = [...dims] as [number, number, number];
  out[axis] = value;
  return out;
}

/** A grid of at most `blocks` blocks, keeping its shape where it can. */
function fitGrid(grid: Dim3, blocks: number): Dim3 {
  const out = [...grid] as [number, number, number];
  for (let i = 2; i >= 0 && dimProduct(out) > blocks; i--) out[i] = Math.max(1, Math.floor(blocks / (dimProduct(out) / out[i]!)));
  return out;
}

/** -maxrregcount that would let `threads` threads launch: a multiple of 8, within 16..255. */
function registerCap(device: DeviceLimits, threads: number): number {
  const perThread = Math.floor(device.regsPerBlock / (Math.ceil(Math.ceil(threads / device.warpSize) / 4) * 4) / device.warpSize / 8) * 8;
  return Math.min(255, Math.max(16, perThread));
}

/** The grid rounded to a multiple of the cluster: up where the device allows it, down otherwise. */
function clusterRounding(grid: Dim3, axis: number, cluster: number, max: number, device: DeviceLimits): Pick<Finding, 'fix' | 'suggested'> {
  const up = Math.ceil(grid[axis]! / cluster) * cluster;
  if (up <= max)
    return {
      fix: `Round gridDim.${AXES[axis]} up to ${up} and let the extra blocks exit early.`,
      suggested: { grid: repairGrid(withAxis(grid, axis, up), device) },
    };
  const down = Math.floor(max / cluster) * cluster;
  return down >= cluster
    ? {
        fix: `Use gridDim.${AXES[axis]} = ${down} (a multiple of ${cluster}) and loop inside the kernel for the rest.`,
        suggested: { grid: repairGrid(withAxis(grid, axis, down), device) },
      }
    : { fix: `A cluster of ${cluster} on ${AXES[axis]} does not fit this device's grid: use a smaller cluster.`, suggested: null };
}

/**
 * The kernel's limits as the launch will have them: a runner that raises the dynamic shared memory limit
 * sets it to the launch's bytes when they are above the default (main/runner/plan-executor.ts), and the
 * driver's occupancy then counts with that limit — the opt-in maximum per block instead of 48 KiB.
 */
export function effectiveKernelLimits(kernel: KernelLimits, config: Pick<LaunchConfig, 'sharedBytes' | 'raisesDynamicSharedLimit'>): KernelLimits {
  if (!config.raisesDynamicSharedLimit || config.sharedBytes <= kernel.maxDynamicSharedSizeBytes) return kernel;
  return { ...kernel, maxDynamicSharedSizeBytes: config.sharedBytes };
}

/**
 * Checks a launch against the device's limits and the kernel's attributes, before anything is
 * launched: which limit, by how much, the error the driver and the runtime would return, and the fix.
 */
export function validateLaunch(device: DeviceLimits, kernel: KernelLimits, config: LaunchConfig): Validation {
  const findings: Finding[] = [];
  const add = (f: Finding) => findings.push(f);
  const { grid, block, sharedBytes } = config;
  const threads = dimProduct(block);

  for (const [field, dims] of [
    ['grid', grid],
    ['block', block],
  ] as const) {
    dims.forEach((d, i) => {
      if (!Number.isInteger(d) || d < 1) {
        add({
          rule: `${field}-dim-positive`,
          severity: 'error',
          field,
          message: `${field}Dim.${AXES[i]} is ${d}: every dimension must be at least 1.`,
          limit: 1,
          value: d,
          driverError: INVALID_VALUE,
          runtimeError: RT_INVALID_CONFIGURATION,
          fix: `Set ${field}Dim.${AXES[i]} to 1 or more.`,
          suggested: field === 'grid' ? { grid: repairGrid(withAxis(dims, i, 1), device) } : { block: repairBlock(withAxis(dims, i, 1), device) },
        });
      }
    });
  }
  block.forEach((d, i) => {
    if (d > device.maxBlockDim[i]!) {
      add({
        rule: 'block-dim',
        severity: 'error',
        field: 'block',
        message: `blockDim.${AXES[i]} = ${d} exceeds this device's limit of ${device.maxBlockDim[i]} on ${AXES[i]}.`,
        limit: device.maxBlockDim[i]!,
        value: d,
        driverError: INVALID_VALUE,
        runtimeError: RT_INVALID_CONFIGURATION,
        fix: `Use at most ${device.maxBlockDim[i]} threads along ${AXES[i]}.`,
        suggested: { block: repairBlock(withAxis(block, i, device.maxBlockDim[i]!), device) },
      });
    }
  });
  if (threads > device.maxThreadsPerBlock) {
    const fitted = fitBlock(block, device.maxThreadsPerBlock, device.maxBlockDim);
    add({
      rule: 'threads-per-block',
      severity: 'error',
      field: 'block',
      message: `${formatDim3(block)} is ${threads} threads per block; this device allows ${device.maxThreadsPerBlock}.`,
      limit: device.maxThreadsPerBlock,
      value: threads,
      driverError: INVALID_VALUE,
      runtimeError: RT_INVALID_CONFIGURATION,
      fix: `Use ${formatDim3(fitted)} instead of ${formatDim3(block)} — ${device.maxThreadsPerBlock} threads is this device's limit — and launch more blocks.`,
      suggested: { block: repairBlock(fitted, device) },
    });
  }
  grid.forEach((d, i) => {
    if (d > device.maxGridDim[i]!) {
      const fix =
        i === 0
          ? `Loop inside the kernel (a grid-stride loop) or use ≤ ${device.maxGridDim[0]} blocks.`
          : `Put the large dimension on x (up to ${device.maxGridDim[0]}), or loop inside the kernel.`;
      add({
        rule: 'grid-dim',
        severity: 'error',
        field: 'grid',
        message: `gridDim.${AXES[i]} = ${d} exceeds this device's limit of ${device.maxGridDim[i]} on ${AXES[i]}.`,
        limit: device.maxGridDim[i]!,
        value: d,
        driverError: INVALID_VALUE,
        runtimeError: RT_INVALID_CONFIGURATION,
        fix,
        suggested: { grid: repairGrid(withAxis(grid, i, device.maxGridDim[i]!), device) },
      });
    }
  });

  // Shared memory: static + dynamic per block.
  const staticShared = kernel.sharedSizeBytes;
  const total = staticShared + sharedBytes;
  const optinMax = device.sharedPerBlockOptin;
  if (staticShared > optinMax) {
    // No launch can fix this: the kernel's own arrays are too large.
    const arrays = (kernel.sharedArrays ?? []).filter((a) => a.bytes !== null).sort((a, b) => b.bytes! - a.bytes!);
    const named = arrays.length
      ? ` The largest: __shared__ ${arrays[0]!.type} ${arrays[0]!.name}${arrays[0]!.dims.map((d) => `[${d}]`).join('')} (${formatBytes(arrays[0]!.bytes!)}) at line ${arrays[0]!.line}.`
      : '';
    add({
      rule: 'static-shared-too-large',
      severity: 'error',
      field: 'kernel',
      message: `The kernel's static __shared__ memory alone is ${formatBytes(staticShared)} (${staticShared} bytes), over this device's maximum of ${formatBytes(optinMax)} (${optinMax} bytes) per block: no launch configuration can run it.${named}`,
      limit: optinMax,
      value: staticShared,
      driverError: INVALID_VALUE,
      runtimeError: RT_INVALID_VALUE,
      fix: `Shrink ${arrays.length ? arrays[0]!.name : 'the static __shared__ arrays'} in the kernel source: tile the data so each block holds less, or move it to global memory.`,
      suggested: null,
    });
  } else if (total > optinMax) {
    const most = optinMax - staticShared;
    add({
      rule: 'shared-per-block',
      severity: 'error',
      field: 'sharedBytes',
      message: `${formatBytes(total)} of shared memory per block (${formatBytes(staticShared)} static + ${formatBytes(sharedBytes)} dynamic) exceeds this device's maximum of ${formatBytes(optinMax)} (${optinMax} bytes) per block, even with the opt-in.`,
      limit: optinMax,
      value: total,
      driverError: INVALID_VALUE,
      runtimeError: RT_INVALID_VALUE,
      fix: `Use at most ${most} bytes of dynamic shared memory, or tile the data so each block needs less.`,
      suggested: { sharedBytes: most },
    });
  } else if (sharedBytes > kernel.maxDynamicSharedSizeBytes) {
    const needed = sharedBytes;
    add(
      config.raisesDynamicSharedLimit
        ? {
            rule: 'dynamic-shared-opt-in',
            severity: 'note',
            field: 'sharedBytes',
            message: `${formatBytes(sharedBytes)} of dynamic shared memory is above the default ${formatBytes(kernel.maxDynamicSharedSizeBytes)}: the workbench raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to ${needed} for this launch. A host program must do the same: cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ${needed}).`,
            limit: kernel.maxDynamicSharedSizeBytes,
            value: sharedBytes,
            driverError: null,
            runtimeError: null,
            fix: null,
          }
        : {
            rule: 'dynamic-shared-opt-in',
            severity: 'error',
            field: 'sharedBytes',
            message: `${formatBytes(sharedBytes)} of dynamic shared memory is above the ${formatBytes(kernel.maxDynamicSharedSizeBytes)} a kernel may use without opting in.`,
            limit: kernel.maxDynamicSharedSizeBytes,
            value: sharedBytes,
            driverError: INVALID_VALUE,
            runtimeError: RT_INVALID_VALUE,
            fix: `Call cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ${needed}) before the launch (cuFuncSetAttribute with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES in the driver API).`,
          },
    );
  }

  // After dims and shared memory: the driver checks those first (measured on an H200).
  if (threads <= device.maxThreadsPerBlock && threads > kernel.maxThreadsPerBlock) {
    // A kernel limited below what its registers allow was compiled with a bound (__launch_bounds__,
    // .maxntid): the driver refuses with INVALID_VALUE. Past the register limit it is 701.
    const registerLimit = registerLimitedBlockSize(device, kernel.numRegs);
    const bounded = kernel.maxThreadsPerBlock < registerLimit;
    add(
      bounded
        ? {
            rule: 'kernel-launch-bounds',
            severity: 'error',
            field: 'block',
            message: `${threads} threads per block is more than this kernel was compiled for: __launch_bounds__ (or -maxntid) limits it to ${kernel.maxThreadsPerBlock}.`,
            limit: kernel.maxThreadsPerBlock,
            value: threads,
            driverError: INVALID_VALUE,
            runtimeError: RT_INVALID_VALUE,
            fix: `Use at most ${kernel.maxThreadsPerBlock} threads per block (e.g. ${formatDim3(fitBlock(block, kernel.maxThreadsPerBlock, device.maxBlockDim))}), or raise the kernel's __launch_bounds__.`,
            suggested: kernel.maxThreadsPerBlock > 0 ? { block: repairBlock(block, device, kernel.maxThreadsPerBlock) } : null,
          }
        : {
            rule: 'kernel-threads-per-block',
            severity: 'error',
            field: 'block',
            message: `${threads} threads per block is more than this kernel can launch with: ${kernel.maxThreadsPerBlock} (it uses ${kernel.numRegs} registers per thread; ${device.regsPerBlock} are available per block). The runtime calls this "too many resources requested for launch".`,
            limit: kernel.maxThreadsPerBlock,
            value: threads,
            driverError: OUT_OF_RESOURCES,
            runtimeError: RT_OUT_OF_RESOURCES,
            fix:
              kernel.maxThreadsPerBlock > 0
                ? `Use at most ${kernel.maxThreadsPerBlock} threads per block (e.g. ${formatDim3(fitBlock(block, kernel.maxThreadsPerBlock, device.maxBlockDim))}), or cut registers with __launch_bounds__(${threads}) or -maxrregcount=${registerCap(device, threads)}.`
                : `Cut registers with __launch_bounds__(${threads}) or -maxrregcount=${registerCap(device, threads)}: at ${kernel.numRegs} registers per thread no block size can launch.`,
            suggested: kernel.maxThreadsPerBlock > 0 ? { block: repairBlock(block, device, kernel.maxThreadsPerBlock) } : null,
          },
    );
  }

  // Local memory: the driver reserves it for every thread that can be resident at once.
  if (kernel.localSizeBytes > 0) {
    const reserve = kernel.localSizeBytes * device.maxThreadsPerSM * device.smCount;
    if (reserve > device.totalMemBytes) {
      add({
        rule: 'local-memory',
        severity: 'error',
        field: 'kernel',
        message: `The kernel uses ${formatBytes(kernel.localSizeBytes)} of local memory per thread; the driver reserves it for all ${device.maxThreadsPerSM * device.smCount} threads that can be resident: ${formatBytes(reserve)}, more than the device's ${formatBytes(device.totalMemBytes)}.`,
        limit: device.totalMemBytes,
        value: reserve,
        driverError: { code: 2, name: 'CUDA_ERROR_OUT_OF_MEMORY' },
        runtimeError: { code: 2, name: 'cudaErrorMemoryAllocation' },
        fix: 'Shrink per-thread arrays (they live in local memory when indexed at run time), or move them to shared memory.',
      });
    } else if (kernel.localSizeBytes >= 1024) {
      add({
        rule: 'local-memory',
        severity: 'warning',
        field: 'kernel',
        message: `${formatBytes(kernel.localSizeBytes)} of local memory per thread: slow, and ${formatBytes(reserve)} of device memory reserved for it while the kernel runs.`,
        limit: null,
        value: kernel.localSizeBytes,
        driverError: null,
        runtimeError: null,
        fix: 'Index per-thread arrays with compile-time constants (unrolled loops) so they stay in registers.',
      });
    }
  }

  const blockOk = !findings.some((f) => f.severity === 'error' && (f.field === 'block' || f.field === 'sharedBytes'));
  const launched = effectiveKernelLimits(kernel, config);
  const occ = blockOk ? occupancy(device, launched, threads, sharedBytes) : null;
  const blocks = dimProduct(grid);

  // Cooperative launches must fit on the device all at once.
  if (config.cooperative) {
    if (!device.cooperativeLaunch) {
      add({
        rule: 'cooperative-support',
        severity: 'error',
        field: 'grid',
        message: 'This device does not support cooperative launches.',
        limit: null,
        value: null,
        driverError: { code: 801, name: 'CUDA_ERROR_NOT_SUPPORTED' },
        runtimeError: { code: 801, name: 'cudaErrorNotSupported' },
        fix: 'Launch normally and synchronise between kernels instead of with grid.sync().',
      });
    } else if (occ && blocks > occ.activeBlocksPerSM * device.smCount) {
      add({
        rule: 'cooperative-fit',
        severity: 'error',
        field: 'grid',
        message: `A cooperative launch needs every block resident at once: ${blocks} blocks, but only ${occ.activeBlocksPerSM} per SM × ${device.smCount} SMs = ${occ.activeBlocksPerSM * device.smCount} fit.`,
        limit: occ.activeBlocksPerSM * device.smCount,
        value: blocks,
        driverError: { code: 720, name: 'CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE' },
        runtimeError: { code: 720, name: 'cudaErrorCooperativeLaunchTooLarge' },
        fix:
          occ.activeBlocksPerSM > 0
            ? `Use at most ${occ.activeBlocksPerSM * device.smCount} blocks (a grid-stride loop covers the rest).`
            : 'Not one block of this size fits on an SM: use smaller blocks or less shared memory.',
        suggested: occ.activeBlocksPerSM > 0 ? { grid: fitGrid(repairGrid(grid, device), occ.activeBlocksPerSM * device.smCount) } : null,
      });
    }
  }

  // Thread block clusters (Hopper and later).
  if (config.cluster && dimProduct(config.cluster) > 1) {
    const cluster = config.cluster;
    const size = dimProduct(cluster);
    if (!device.clusterLaunch) {
      add({
        rule: 'cluster-support',
        severity: 'error',
        field: 'cluster',
        message: `Thread block clusters need compute capability 9.0 or newer; this device is ${device.computeMajor}.${device.computeMinor}.`,
        limit: null,
        value: null,
        driverError: { code: 801, name: 'CUDA_ERROR_NOT_SUPPORTED' },
        runtimeError: { code: 801, name: 'cudaErrorNotSupported' },
        fix: 'Launch without a cluster dimension.',
      });
    } else {
      cluster.forEach((c, i) => {
        if (grid[i]! % c !== 0) {
          add({
            rule: 'cluster-divides-grid',
            severity: 'error',
            field: 'cluster',
            message: `gridDim.${AXES[i]} = ${grid[i]} is not a multiple of the cluster's ${c} on ${AXES[i]}.`,
            limit: null,
            value: grid[i]!,
            driverError: { code: 912, name: 'CUDA_ERROR_INVALID_CLUSTER_SIZE' },
            runtimeError: { code: 912, name: 'cudaErrorInvalidClusterSize' },
            ...clusterRounding(grid, i, c, device.maxGridDim[i]!, device),
          });
        }
      });
      if (size > 16) {
        add({
          rule: 'cluster-size',
          severity: 'error',
          field: 'cluster',
          message: `A cluster of ${size} blocks is more than any current GPU allows (16, with the non-portable opt-in).`,
          limit: 16,
          value: size,
          driverError: { code: 912, name: 'CUDA_ERROR_INVALID_CLUSTER_SIZE' },
          runtimeError: { code: 912, name: 'cudaErrorInvalidClusterSize' },
          fix: 'Use at most 8 blocks per cluster (portable), or 16 with cudaFuncAttributeNonPortableClusterSizeAllowed.',
        });
      } else if (size > 8) {
        add({
          rule: 'cluster-size',
          severity: 'warning',
          field: 'cluster',
          message: `A cluster of ${size} blocks is beyond the portable size of 8: it launches only after setting cudaFuncAttributeNonPortableClusterSizeAllowed, and only where the hardware allows it.`,
          limit: 8,
          value: size,
          driverError: { code: 912, name: 'CUDA_ERROR_INVALID_CLUSTER_SIZE' },
          runtimeError: { code: 912, name: 'cudaErrorInvalidClusterSize' },
          fix: 'Use at most 8 blocks per cluster, or set the non-portable attribute.',
        });
      }
    }
  }

  // Performance and correctness hazards that still launch.
  if (blockOk && threads % device.warpSize !== 0) {
    const cap = Math.min(device.maxThreadsPerBlock, kernel.maxThreadsPerBlock > 0 ? kernel.maxThreadsPerBlock : device.maxThreadsPerBlock);
    const roundedUp = Math.ceil(threads / device.warpSize) * device.warpSize;
    const up = roundedUp <= cap ? roundedUp : Math.max(device.warpSize, Math.floor(threads / device.warpSize) * device.warpSize);
    add({
      rule: 'partial-warp',
      severity: 'warning',
      field: 'block',
      message: `${threads} threads per block is not a multiple of the warp size (${device.warpSize}): the last warp runs with ${threads % device.warpSize} of ${device.warpSize} lanes.`,
      limit: null,
      value: threads,
      driverError: null,
      runtimeError: null,
      fix: `Use ${up} threads per block${up > device.warpSize && up - device.warpSize !== threads ? ` (or ${up - device.warpSize})` : ''}.`,
      suggested: { block: repairBlock([up, 1, 1], device, cap) },
    });
  }
  if (grid[0] * block[0] > 2 ** 31 - 1) {
    add({
      rule: 'index-overflow',
      severity: 'warning',
      field: 'grid',
      message: `gridDim.x × blockDim.x = ${grid[0] * block[0]} exceeds 2^31−1: an index computed as int (blockIdx.x * blockDim.x + threadIdx.x) overflows and goes negative.`,
      limit: 2 ** 31 - 1,
      value: grid[0] * block[0],
      driverError: null,
      runtimeError: null,
      fix: 'Compute the index in 64 bits: (size_t)blockIdx.x * blockDim.x + threadIdx.x.',
    });
  }
  if (blocks * threads > 2 ** 32 - 1) {
    add({
      rule: 'total-threads-32bit',
      severity: 'note',
      field: 'grid',
      message: `${blocks * threads} threads in total: more than a 32-bit unsigned count can hold.`,
      limit: 2 ** 32 - 1,
      value: blocks * threads,
      driverError: null,
      runtimeError: null,
      fix: 'Use 64-bit counters for totals over the whole grid.',
    });
  }
  if (occ && occ.activeBlocksPerSM > 0 && occ.occupancy < 0.25) {
    add({
      rule: 'low-occupancy',
      severity: 'warning',
      field: 'block',
      message: `Occupancy is ${(occ.occupancy * 100).toFixed(0)}% (${occ.activeWarpsPerSM} of ${occ.maxWarpsPerSM} warps per SM), limited by ${occ.limiters.join(' and ')}.`,
      limit: null,
      value: occ.occupancy,
      driverError: null,
      runtimeError: null,
      fix: occ.limiters.includes('registers')
        ? 'Reduce registers (__launch_bounds__, -maxrregcount) or use smaller blocks.'
        : occ.limiters.includes('shared memory')
          ? 'Use less shared memory per block.'
          : 'Use larger blocks.',
    });
  }
  const waves = occ && occ.activeBlocksPerSM > 0 ? blocks / (occ.activeBlocksPerSM * device.smCount) : null;
  if (waves !== null && blocks < device.smCount && findings.every((f) => f.severity !== 'error')) {
    add({
      rule: 'underfilled-device',
      severity: 'note',
      field: 'grid',
      message: `${blocks} block${blocks === 1 ? '' : 's'} for ${device.smCount} SMs: most of the device idles.`,
      limit: device.smCount,
      value: blocks,
      driverError: null,
      runtimeError: null,
      fix: `Launch at least ${device.smCount} blocks (smaller blocks, or more work per launch).`,
      suggested: { grid: repairGrid(withAxis(grid, 0, Math.ceil(device.smCount / Math.max(1, grid[1] * grid[2]))), device) },
    });
  }
  const ok = !findings.some((f) => f.severity === 'error');
  const suggestion = kernel.maxThreadsPerBlock > 0 ? suggestBlockSize(device, launched, sharedBytes).blockSize || null : null;
  return { ok, findings, occupancy: occ, waves, suggestedBlockSize: suggestion };
}
