import type { Dim3 } from '../dims';
import { dimProduct, formatDim3 } from '../dims';
import { formatBytes, plural } from '../format';
import type { DeviceLimits } from './device-limits';
import {
  AXES,
  describeDims,
  hintFinding,
  repairFinding,
  type Finding,
  type FindingBody,
  type LaunchConfig,
  type LaunchError,
  type LaunchField,
  type RuleContext,
  type SuggestedLaunch,
} from './finding';
import { launchHazards } from './launch-hazards';
import { effectiveKernelLimits, repairLaunch, sameDims, shrinkCluster, threadCap, MAX_CLUSTER, PORTABLE_CLUSTER } from './launch-repair';
import { sharedLimits, sharedLimitsClause } from './shared-limits';
import { occupancy, registerLimitedBlockSize, suggestBlockSize, type KernelLimits, type Occupancy } from './occupancy';

export type { Finding, FindingField, LaunchConfig, LaunchError, Severity, SuggestedLaunch } from './finding';
export { effectiveKernelLimits } from './launch-repair';

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
const NOT_SUPPORTED: LaunchError = { code: 801, name: 'CUDA_ERROR_NOT_SUPPORTED' };
const INVALID_CLUSTER_SIZE: LaunchError = { code: 912, name: 'CUDA_ERROR_INVALID_CLUSTER_SIZE' };
const RT_INVALID_CONFIGURATION: LaunchError = { code: 9, name: 'cudaErrorInvalidConfiguration' };
const RT_INVALID_VALUE: LaunchError = { code: 1, name: 'cudaErrorInvalidValue' };
const RT_OUT_OF_RESOURCES: LaunchError = { code: 701, name: 'cudaErrorLaunchOutOfResources' };
const RT_NOT_SUPPORTED: LaunchError = { code: 801, name: 'cudaErrorNotSupported' };
const RT_INVALID_CLUSTER_SIZE: LaunchError = { code: 912, name: 'cudaErrorInvalidClusterSize' };

function positiveDims(ctx: RuleContext): Finding[] {
  const { config, repaired } = ctx;
  return (['grid', 'block'] as const).flatMap((field) =>
    config[field].flatMap((d, i) =>
      Number.isInteger(d) && d >= 1
        ? []
        : [
            repairFinding(
              ctx,
              [field],
              {
                rule: `${field}-dim-positive`,
                severity: 'error',
                field,
                message: `${field}Dim.${AXES[i]} is ${d}: every dimension must be at least 1.`,
                limit: 1,
                value: d,
                driverError: INVALID_VALUE,
                runtimeError: RT_INVALID_CONFIGURATION,
              },
              () => `Set ${describeDims(`${field}Dim`, config[field], repaired[field])}.`,
            ),
          ],
    ),
  );
}

function blockLimits(ctx: RuleContext): Finding[] {
  const { device, kernel, config, threads, repaired } = ctx;
  const out = config.block.flatMap((d, i) =>
    d > device.maxBlockDim[i]!
      ? [
          repairFinding(
            ctx,
            ['block'],
            {
              rule: 'block-dim',
              severity: 'error',
              field: 'block',
              message: `blockDim.${AXES[i]} = ${d} exceeds this device's limit of ${device.maxBlockDim[i]} on ${AXES[i]}.`,
              limit: device.maxBlockDim[i]!,
              value: d,
              driverError: INVALID_VALUE,
              runtimeError: RT_INVALID_CONFIGURATION,
            },
            () => `Use at most ${device.maxBlockDim[i]} threads along ${AXES[i]}: ${describeDims('blockDim', config.block, repaired.block)}.`,
          ),
        ]
      : [],
  );
  if (threads > device.maxThreadsPerBlock) {
    const cap = threadCap(device, kernel);
    const why = cap === device.maxThreadsPerBlock ? `${cap} threads is this device's limit` : `this kernel launches at most ${cap} threads per block`;
    out.push(
      repairFinding(
        ctx,
        ['block'],
        {
          rule: 'threads-per-block',
          severity: 'error',
          field: 'block',
          message: `${formatDim3(config.block)} is ${threads} threads per block; this device allows ${device.maxThreadsPerBlock}.`,
          limit: device.maxThreadsPerBlock,
          value: threads,
          driverError: INVALID_VALUE,
          runtimeError: RT_INVALID_CONFIGURATION,
        },
        (s) => `Use ${formatDim3(s.block!)} instead of ${formatDim3(config.block)} — ${why} — and launch more blocks.`,
      ),
    );
  }
  return out;
}

function gridLimits(ctx: RuleContext): Finding[] {
  const { device, config, repaired } = ctx;
  return config.grid.flatMap((d, i) => {
    if (d <= device.maxGridDim[i]!) return [];
    const smaller = describeDims('gridDim', config.grid, repaired.grid);
    const fix =
      i === 0
        ? `Use ${smaller} and loop inside the kernel (a grid-stride loop) for the rest.`
        : `Put the large dimension on x (up to ${device.maxGridDim[0]}), or use ${smaller} and loop inside the kernel for the rest.`;
    return [
      repairFinding(
        ctx,
        ['grid'],
        {
          rule: 'grid-dim',
          severity: 'error',
          field: 'grid',
          message: `gridDim.${AXES[i]} = ${d} exceeds this device's limit of ${device.maxGridDim[i]} on ${AXES[i]}.`,
          limit: device.maxGridDim[i]!,
          value: d,
          driverError: INVALID_VALUE,
          runtimeError: RT_INVALID_CONFIGURATION,
        },
        () => fix,
      ),
    ];
  });
}

/** The largest static __shared__ array the source declares, described for a message; '' when unknown. */
function largestArray(kernel: KernelLimits): { text: string; name: string | null; line: number | null } {
  const arrays = kernel.sharedArrays ?? [];
  const sized = arrays.filter((a) => a.bytes !== null).sort((a, b) => b.bytes! - a.bytes!);
  const top = sized[0];
  if (top)
    return {
      text: ` The largest: __shared__ ${top.type} ${top.name}${top.dims.map((d) => `[${d}]`).join('')} (${formatBytes(top.bytes!)}) at line ${top.line}.`,
      name: top.name,
      line: top.line,
    };
  if (arrays.length)
    return {
      text: ` It declares ${arrays.map((a) => `${a.name} (line ${a.line})`).join(', ')}, of sizes the workbench cannot read.`,
      name: null,
      line: arrays[0]!.line,
    };
  return { text: '', name: null, line: null };
}

function staticSharedTooLarge(ctx: RuleContext): Finding {
  const { device, kernel } = ctx;
  const optin = device.sharedPerBlockOptin;
  const largest = largestArray(kernel);
  return {
    rule: 'static-shared-too-large',
    severity: 'error',
    field: 'kernel',
    message: `The kernel's static __shared__ memory alone is ${formatBytes(kernel.sharedSizeBytes)} (${plural(kernel.sharedSizeBytes, 'byte')}), more than the ${formatBytes(optin)} (${plural(optin, 'byte')}) this device allows per block in all: no launch configuration can run it, and the driver refuses to load it. The limits: ${sharedLimitsClause(sharedLimits(device))}.${largest.text}`,
    limit: optin,
    value: kernel.sharedSizeBytes,
    // Measured on an H100 (driver 580): ptxas refuses it for a real architecture; JIT from PTX fails in cuModuleLoadData.
    driverError: { code: 218, name: 'CUDA_ERROR_INVALID_PTX' },
    runtimeError: { code: 218, name: 'cudaErrorInvalidPtx' },
    fix: `Shrink ${largest.name ?? 'the static __shared__ arrays'} in the kernel source: tile the data so each block holds less, or move it to global memory.`,
    suggested: null,
    ...(largest.line !== null ? { line: largest.line } : {}),
  };
}

function sharedPerBlock(ctx: RuleContext): Finding {
  const { device, kernel, config } = ctx;
  const optin = device.sharedPerBlockOptin;
  const total = kernel.sharedSizeBytes + config.sharedBytes;
  const withOptIn = optin - kernel.sharedSizeBytes;
  return repairFinding(
    ctx,
    ['sharedBytes'],
    {
      rule: 'shared-per-block',
      severity: 'error',
      field: 'sharedBytes',
      message: `${formatBytes(total)} of shared memory per block (${formatBytes(kernel.sharedSizeBytes)} static + ${formatBytes(config.sharedBytes)} dynamic) exceeds this device's maximum of ${formatBytes(optin)} (${plural(optin, 'byte')}) per block, even with the opt-in.`,
      limit: optin,
      value: total,
      driverError: INVALID_VALUE,
      runtimeError: RT_INVALID_VALUE,
    },
    ({ sharedBytes = 0 }) => {
      const use = sharedBytes > 0 ? `Use at most ${sharedBytes} bytes of dynamic shared memory` : 'Launch without dynamic shared memory';
      const optIn = sharedBytes < withOptIn ? ` (up to ${withOptIn} after raising cudaFuncAttributeMaxDynamicSharedMemorySize)` : '';
      return `${use}${optIn}, or tile the data so each block needs less.`;
    },
  );
}

function dynamicSharedOptIn(ctx: RuleContext): Finding {
  const { kernel, config } = ctx;
  const bytes = config.sharedBytes;
  const common = { rule: 'dynamic-shared-opt-in', field: 'sharedBytes' as const, limit: kernel.maxDynamicSharedSizeBytes, value: bytes, suggested: null };
  return config.raisesDynamicSharedLimit
    ? {
        ...common,
        severity: 'note',
        message: `${formatBytes(bytes)} of dynamic shared memory is above the default ${formatBytes(kernel.maxDynamicSharedSizeBytes)}: the workbench raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to ${bytes} for this launch. A host program must do the same: cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ${bytes}).`,
        driverError: null,
        runtimeError: null,
        fix: null,
      }
    : {
        ...common,
        severity: 'error',
        message: `${formatBytes(bytes)} of dynamic shared memory is above the ${formatBytes(kernel.maxDynamicSharedSizeBytes)} a kernel may use without opting in.`,
        driverError: INVALID_VALUE,
        runtimeError: RT_INVALID_VALUE,
        fix: `Call cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ${bytes}) before the launch (cuFuncSetAttribute with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES in the driver API).`,
      };
}

/** Static + dynamic shared memory per block. */
function sharedMemory(ctx: RuleContext): Finding[] {
  const { device, kernel, config } = ctx;
  if (kernel.sharedSizeBytes > device.sharedPerBlockOptin) return [staticSharedTooLarge(ctx)];
  if (kernel.sharedSizeBytes + config.sharedBytes > device.sharedPerBlockOptin) return [sharedPerBlock(ctx)];
  if (config.sharedBytes > kernel.maxDynamicSharedSizeBytes) return [dynamicSharedOptIn(ctx)];
  return [];
}

/** The largest -maxrregcount (a multiple of 8, 16 or more, below the kernel's count) that lets `threads` launch; null if none does. */
function registerCap(device: DeviceLimits, numRegs: number, threads: number): number | null {
  for (let regs = Math.floor(Math.min(255, numRegs - 1) / 8) * 8; regs >= 16; regs -= 8) {
    if (registerLimitedBlockSize(device, regs) >= threads) return regs;
  }
  return null;
}

/** "Use at most N threads per block (e.g. B)" for a suggestion with a block; '' without one. */
const fewerThreads = (most: number, s: SuggestedLaunch) => (s.block ? `Use at most ${most} threads per block (e.g. ${formatDim3(s.block)})` : '');

/** More threads than the kernel's __launch_bounds__ (or .maxntid) allow: the driver refuses with INVALID_VALUE. */
function launchBounds(ctx: RuleContext): Finding {
  const { kernel, threads } = ctx;
  const most = kernel.maxThreadsPerBlock;
  return repairFinding(
    ctx,
    most > 0 ? ['block'] : [],
    {
      rule: 'kernel-launch-bounds',
      severity: 'error',
      field: 'block',
      message: `${threads} threads per block is more than this kernel was compiled for: __launch_bounds__ (or -maxntid) limits it to ${most}.`,
      limit: most,
      value: threads,
      driverError: INVALID_VALUE,
      runtimeError: RT_INVALID_VALUE,
    },
    (s) =>
      s.block ? `${fewerThreads(most, s)}, or raise the kernel's __launch_bounds__ to ${threads}.` : `Raise the kernel's __launch_bounds__ to ${threads}.`,
  );
}

/** More threads than the kernel's registers allow: the driver says out of resources (701). */
function registerLimit(ctx: RuleContext): Finding {
  const { device, kernel, threads } = ctx;
  const most = kernel.maxThreadsPerBlock;
  const regs = registerCap(device, kernel.numRegs, threads);
  const cut = regs === null ? null : `__launch_bounds__(${threads}) or -maxrregcount=${regs}`;
  return repairFinding(
    ctx,
    most > 0 ? ['block'] : [],
    {
      rule: 'kernel-threads-per-block',
      severity: 'error',
      field: 'block',
      message: `${threads} threads per block is more than this kernel can launch with: ${most} (it uses ${kernel.numRegs} registers per thread; ${device.regsPerBlock} are available per block). The runtime calls this "too many resources requested for launch".`,
      limit: most,
      value: threads,
      driverError: OUT_OF_RESOURCES,
      runtimeError: RT_OUT_OF_RESOURCES,
    },
    (s) => {
      if (s.block) return cut ? `${fewerThreads(most, s)}, or cut registers with ${cut}.` : `${fewerThreads(most, s)}.`;
      return cut
        ? `Cut registers with ${cut}: at ${kernel.numRegs} registers per thread no block size can launch.`
        : `Cut the kernel's registers: at ${kernel.numRegs} per thread not one warp fits in this device's ${device.regsPerBlock} registers per block.`;
    },
  );
}

/** After dims and shared memory: the driver checks those first (measured on an H200). */
function kernelThreads(ctx: RuleContext): Finding[] {
  const { device, kernel, threads } = ctx;
  if (threads > device.maxThreadsPerBlock || threads <= kernel.maxThreadsPerBlock) return [];
  // A kernel limited below what its registers allow was compiled with a bound.
  return [kernel.maxThreadsPerBlock < registerLimitedBlockSize(device, kernel.numRegs) ? launchBounds(ctx) : registerLimit(ctx)];
}

/** The driver reserves local memory for every thread that can be resident at once. */
function localMemory(ctx: RuleContext): Finding[] {
  const { device, kernel } = ctx;
  if (kernel.localSizeBytes <= 0) return [];
  const residentThreads = device.maxThreadsPerSM * device.smCount;
  const reserve = kernel.localSizeBytes * residentThreads;
  const common = { rule: 'local-memory', field: 'kernel' as const, suggested: null };
  if (reserve > device.totalMemBytes)
    return [
      {
        ...common,
        severity: 'error',
        message: `The kernel uses ${formatBytes(kernel.localSizeBytes)} of local memory per thread; the driver reserves it for all ${residentThreads} threads that can be resident: ${formatBytes(reserve)}, more than the device's ${formatBytes(device.totalMemBytes)}.`,
        limit: device.totalMemBytes,
        value: reserve,
        driverError: { code: 2, name: 'CUDA_ERROR_OUT_OF_MEMORY' },
        runtimeError: { code: 2, name: 'cudaErrorMemoryAllocation' },
        fix: 'Shrink per-thread arrays (they live in local memory when indexed at run time), or move them to shared memory.',
      },
    ];
  if (kernel.localSizeBytes < 1024) return [];
  return [
    {
      ...common,
      severity: 'warning',
      message: `${formatBytes(kernel.localSizeBytes)} of local memory per thread: slow, and ${formatBytes(reserve)} of device memory reserved for it while the kernel runs.`,
      limit: null,
      value: kernel.localSizeBytes,
      driverError: null,
      runtimeError: null,
      fix: 'Index per-thread arrays with compile-time constants (unrolled loops) so they stay in registers.',
    },
  ];
}

/** Cooperative launches must fit on the device all at once. */
function cooperative(ctx: RuleContext, occ: Occupancy | null): Finding[] {
  const { device, config, blocks } = ctx;
  if (!config.cooperative) return [];
  if (!device.cooperativeLaunch)
    return [
      {
        rule: 'cooperative-support',
        severity: 'error',
        field: 'launch',
        message: 'This device does not support cooperative launches.',
        limit: null,
        value: null,
        driverError: NOT_SUPPORTED,
        runtimeError: RT_NOT_SUPPORTED,
        fix: 'Launch normally and synchronise between kernels instead of with grid.sync().',
        suggested: null,
      },
    ];
  if (!occ) return [];
  const resident = occ.activeBlocksPerSM * device.smCount;
  if (blocks <= resident) return [];
  const finding: FindingBody = {
    rule: 'cooperative-fit',
    severity: 'error',
    field: 'grid',
    message: `A cooperative launch needs every block resident at once: ${blocks} blocks, but only ${occ.activeBlocksPerSM} per SM × ${device.smCount} SMs = ${resident} fit.`,
    limit: resident,
    value: blocks,
    driverError: { code: 720, name: 'CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE' },
    runtimeError: { code: 720, name: 'cudaErrorCooperativeLaunchTooLarge' },
  };
  if (resident === 0) return [{ ...finding, fix: 'Not one block of this size fits on an SM: use smaller blocks or less shared memory.', suggested: null }];
  return [
    repairFinding(
      ctx,
      ['grid'],
      finding,
      (s) => `Use at most ${resident} blocks: ${describeDims('gridDim', config.grid, s.grid!)}, with a grid-stride loop covering the rest.`,
    ),
  ];
}

function clusterDividesGrid(ctx: RuleContext, cluster: Dim3, axis: number): Finding {
  const { config, repaired } = ctx;
  const c = cluster[axis]!;
  const g = config.grid[axis]!;
  const fields: LaunchField[] = [];
  if (!sameDims(repaired.grid, config.grid)) fields.push('grid');
  if (repaired.cluster && !sameDims(repaired.cluster, cluster)) fields.push('cluster');
  return repairFinding(
    ctx,
    fields,
    {
      rule: 'cluster-divides-grid',
      severity: 'error',
      field: 'cluster',
      message: `gridDim.${AXES[axis]} = ${g} is not a multiple of the cluster's ${c} on ${AXES[axis]}.`,
      limit: null,
      value: g,
      driverError: INVALID_CLUSTER_SIZE,
      runtimeError: RT_INVALID_CLUSTER_SIZE,
    },
    (s) => {
      const parts: string[] = [];
      if (s.grid) {
        const rest = s.grid[axis]! > g ? 'let the extra blocks exit early' : 'loop inside the kernel for the rest';
        parts.push(`Use ${describeDims('gridDim', config.grid, s.grid)} and ${rest}`);
      }
      if (s.cluster) parts.push(`use a cluster of ${formatDim3(s.cluster)}, which divides ${s.grid ? 'that grid' : 'the grid'}`);
      const text = parts.join('; ');
      return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
    },
  );
}

function clusterSize(ctx: RuleContext, cluster: Dim3): Finding[] {
  const size = dimProduct(cluster);
  if (size <= PORTABLE_CLUSTER) return [];
  const common = { rule: 'cluster-size', field: 'cluster' as const, value: size, driverError: INVALID_CLUSTER_SIZE, runtimeError: RT_INVALID_CLUSTER_SIZE };
  if (size > MAX_CLUSTER)
    return [
      repairFinding(
        ctx,
        ['cluster'],
        {
          ...common,
          severity: 'error',
          message: `A cluster of ${size} blocks is more than any current GPU allows (16, with the non-portable opt-in).`,
          limit: 16,
        },
        (s) =>
          `Use a cluster of ${formatDim3(s.cluster!)} (${dimProduct(s.cluster!)} blocks: 8 is portable, 16 the most with cudaFuncAttributeNonPortableClusterSizeAllowed).`,
      ),
    ];
  return [
    hintFinding(
      ctx,
      { cluster: shrinkCluster(cluster, PORTABLE_CLUSTER) },
      {
        ...common,
        severity: 'warning',
        message: `A cluster of ${size} blocks is beyond the portable size of 8: it launches only after setting cudaFuncAttributeNonPortableClusterSizeAllowed, and only where the hardware allows it.`,
        limit: 8,
      },
      (s) => `Use a cluster of ${formatDim3(s.cluster!)} (${dimProduct(s.cluster!)} blocks, portable), or set the non-portable attribute.`,
    ),
  ];
}

/** Thread block clusters (Hopper and later). */
function clusters(ctx: RuleContext): Finding[] {
  const { device, config } = ctx;
  const cluster = config.cluster;
  if (!cluster || dimProduct(cluster) <= 1) return [];
  if (!device.clusterLaunch)
    return [
      {
        rule: 'cluster-support',
        severity: 'error',
        field: 'cluster',
        message: `Thread block clusters need compute capability 9.0 or newer; this device is ${device.computeMajor}.${device.computeMinor}.`,
        limit: null,
        value: null,
        driverError: NOT_SUPPORTED,
        runtimeError: RT_NOT_SUPPORTED,
        fix: 'Launch without a cluster dimension.',
        suggested: null,
      },
    ];
  const dividing = [0, 1, 2].filter((i) => config.grid[i]! % cluster[i]! !== 0).map((i) => clusterDividesGrid(ctx, cluster, i));
  return [...dividing, ...clusterSize(ctx, cluster)];
}

/** The launch's findings and its occupancy, without the summary. */
function check(device: DeviceLimits, kernel: KernelLimits, config: LaunchConfig): { findings: Finding[]; occupancy: Occupancy | null; ctx: RuleContext } {
  const ctx: RuleContext = {
    device,
    kernel,
    config,
    threads: dimProduct(config.block),
    blocks: dimProduct(config.grid),
    repaired: repairLaunch(device, kernel, config),
  };
  const findings = [...positiveDims(ctx), ...blockLimits(ctx), ...gridLimits(ctx), ...sharedMemory(ctx), ...kernelThreads(ctx), ...localMemory(ctx)];
  // Occupancy only for a block that can launch: its shape, its shared memory and the kernel itself all fit.
  const launchable = !findings.some((f) => f.severity === 'error' && (f.field === 'block' || f.field === 'sharedBytes' || f.field === 'kernel'));
  const occ = launchable ? occupancy(device, effectiveKernelLimits(kernel, config), ctx.threads, config.sharedBytes) : null;
  findings.push(...cooperative(ctx, occ), ...clusters(ctx));
  findings.push(...launchHazards(ctx, occ, findings));
  return { findings, occupancy: occ, ctx };
}

/**
 * Checks a launch against the device's limits and the kernel's attributes, before anything is
 * launched: which limit, by how much, the error the driver and the runtime would return, and the fix.
 */
export function validateLaunch(device: DeviceLimits, kernel: KernelLimits, config: LaunchConfig): Validation {
  const { findings, occupancy: occ, ctx } = check(device, kernel, config);
  const waves = occ && occ.activeBlocksPerSM > 0 ? ctx.blocks / (occ.activeBlocksPerSM * device.smCount) : null;
  // Counted with the limit the launch will have, as occupancy is.
  const best = kernel.maxThreadsPerBlock > 0 ? suggestBlockSize(device, effectiveKernelLimits(kernel, config), config.sharedBytes).blockSize : 0;
  return { ok: !findings.some((f) => f.severity === 'error'), findings, occupancy: occ, waves, suggestedBlockSize: best || null };
}
