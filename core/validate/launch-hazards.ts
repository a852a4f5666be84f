import { formatDim3, type Dim3 } from '../dims';
import { describeDims, hintFinding, type Finding, type RuleContext, type SuggestedLaunch } from './finding';
import { effectiveKernelLimits, repairGrid, threadCap, withAxis } from './launch-repair';
import { occupancy, suggestBlockSize, type Occupancy } from './occupancy';

const percent = (x: number) => `${(x * 100).toFixed(0)}%`;
/** Occupancy below this is worth a warning. */
const LOW_OCCUPANCY = 0.25;

/** A block of `threads` threads (a whole number of warps) within the device's axis limits: as wide along x as it can be. */
function blockOfWarps(device: RuleContext['device'], threads: number): Dim3 {
  let x = Math.min(threads, Math.floor(device.maxBlockDim[0] / device.warpSize) * device.warpSize);
  while (threads % x !== 0) x -= device.warpSize;
  return [x, threads / x, 1];
}

/** A block that is not a whole number of warps: the nearest that is, within the kernel's and the device's limits. */
function partialWarp(ctx: RuleContext): Finding[] {
  const { device, kernel, threads } = ctx;
  const warp = device.warpSize;
  if (threads % warp === 0) return [];
  const cap = threadCap(device, kernel);
  const roundedUp = Math.ceil(threads / warp) * warp;
  const up = roundedUp <= cap ? roundedUp : Math.floor(threads / warp) * warp;
  const body = {
    rule: 'partial-warp',
    severity: 'warning' as const,
    field: 'block' as const,
    message: `${threads} threads per block is not a multiple of the warp size (${warp}): the last warp runs with ${threads % warp} of ${warp} lanes.`,
    limit: null,
    value: threads,
    driverError: null,
    runtimeError: null,
  };
  if (up < warp)
    return [
      hintFinding(
        ctx,
        null,
        body,
        () => `This kernel launches at most ${cap} threads per block, less than a warp: raise its __launch_bounds__ or cut its registers.`,
      ),
    ];
  const alternative = up > warp && up - warp !== threads ? ` (or ${up - warp})` : '';
  return [
    hintFinding(ctx, { block: blockOfWarps(device, up) }, body, (s) => {
      const shape = s.block![1] === 1 && s.block![2] === 1 ? '' : ` as ${formatDim3(s.block!)}`;
      return `Use ${up} threads per block${shape}${alternative}.`;
    }),
  ];
}

/** The most dynamic shared memory that still reaches `target` occupancy at this block size; null if none below the current does. */
function sharedBytesFor(ctx: RuleContext, target: number): number | null {
  const { device, kernel, config, threads } = ctx;
  const warps = Math.ceil(threads / device.warpSize);
  const blocks = Math.ceil((target * (device.maxThreadsPerSM / device.warpSize)) / warps);
  let bytes = Math.floor(device.sharedPerSM / blocks / 256) * 256 - kernel.sharedSizeBytes - device.reservedSharedPerBlock;
  for (; bytes >= 0 && bytes < config.sharedBytes; bytes -= 256) {
    const launch = { ...config, sharedBytes: bytes };
    if (occupancy(device, effectiveKernelLimits(kernel, launch), threads, bytes).occupancy >= target) return bytes;
  }
  return null;
}

/** The launch change that raises occupancy most directly: a block size, or less shared memory; null when only the kernel can. */
function occupancyFix(ctx: RuleContext, occ: Occupancy): { suggestion: SuggestedLaunch | null; text: (s: SuggestedLaunch) => string } {
  const { device, kernel, config } = ctx;
  const launched = effectiveKernelLimits(kernel, config);
  const best = suggestBlockSize(device, launched, config.sharedBytes);
  if (best.blockSize > 0 && best.blockSize <= device.maxBlockDim[0] && best.occupancy > occ.occupancy)
    return {
      suggestion: { block: [best.blockSize, 1, 1] },
      text: (s) => `Use ${formatDim3(s.block!)} threads per block: ${percent(best.occupancy)} occupancy with this kernel and shared memory.`,
    };
  const bytes = occ.limiters.includes('shared memory') ? sharedBytesFor(ctx, LOW_OCCUPANCY) : null;
  if (bytes !== null)
    return {
      suggestion: { sharedBytes: bytes },
      text: (s) => `Use at most ${s.sharedBytes} bytes of dynamic shared memory per block: ${percent(LOW_OCCUPANCY)} occupancy or more.`,
    };
  const text = occ.limiters.includes('registers')
    ? 'Reduce registers per thread (__launch_bounds__, -maxrregcount).'
    : occ.limiters.includes('shared memory')
      ? "Shrink the kernel's static __shared__ arrays."
      : 'Give each block more work: this block size is the best this kernel gets.';
  return { suggestion: null, text: () => text };
}

function lowOccupancy(ctx: RuleContext, occ: Occupancy | null): Finding[] {
  if (!occ || occ.activeBlocksPerSM === 0 || occ.occupancy >= LOW_OCCUPANCY) return [];
  const { suggestion, text } = occupancyFix(ctx, occ);
  return [
    hintFinding(
      ctx,
      suggestion,
      {
        rule: 'low-occupancy',
        severity: 'warning',
        field: 'block',
        message: `Occupancy is ${percent(occ.occupancy)} (${occ.activeWarpsPerSM} of ${occ.maxWarpsPerSM} warps per SM), limited by ${occ.limiters.join(' and ')}.`,
        limit: null,
        value: occ.occupancy,
        driverError: null,
        runtimeError: null,
      },
      text,
    ),
  ];
}

function overflows(ctx: RuleContext): Finding[] {
  const { config, blocks, threads } = ctx;
  const out: Finding[] = [];
  const xThreads = config.grid[0] * config.block[0];
  if (xThreads > 2 ** 31 - 1)
    out.push({
      rule: 'index-overflow',
      severity: 'warning',
      field: 'grid',
      message: `gridDim.x × blockDim.x = ${xThreads} exceeds 2^31−1: an index computed as int (blockIdx.x * blockDim.x + threadIdx.x) overflows and goes negative.`,
      limit: 2 ** 31 - 1,
      value: xThreads,
      driverError: null,
      runtimeError: null,
      fix: 'Compute the index in 64 bits: (size_t)blockIdx.x * blockDim.x + threadIdx.x.',
      suggested: null,
    });
  if (blocks * threads > 2 ** 32 - 1)
    out.push({
      rule: 'total-threads-32bit',
      severity: 'note',
      field: 'grid',
      message: `${blocks * threads} threads in total: more than a 32-bit unsigned count can hold.`,
      limit: 2 ** 32 - 1,
      value: blocks * threads,
      driverError: null,
      runtimeError: null,
      fix: 'Use 64-bit counters for totals over the whole grid.',
      suggested: null,
    });
  return out;
}

function underfilled(ctx: RuleContext, occ: Occupancy | null, findings: Finding[]): Finding[] {
  const { device, kernel, config, blocks } = ctx;
  if (!occ || occ.activeBlocksPerSM === 0 || blocks >= device.smCount || findings.some((f) => f.severity === 'error')) return [];
  const grid = repairGrid(device, kernel, { ...config, grid: withAxis(config.grid, 0, Math.ceil(device.smCount / (config.grid[1] * config.grid[2]))) });
  return [
    hintFinding(
      ctx,
      { grid },
      {
        rule: 'underfilled-device',
        severity: 'note',
        field: 'grid',
        message: `${blocks} block${blocks === 1 ? '' : 's'} for ${device.smCount} SMs: most of the device idles.`,
        limit: device.smCount,
        value: blocks,
        driverError: null,
        runtimeError: null,
      },
      (s) => `Launch at least ${device.smCount} blocks (${describeDims('gridDim', config.grid, s.grid!)}): smaller blocks, or more work per launch.`,
    ),
  ];
}

/** Performance and correctness hazards of a launch that still launches. */
export function launchHazards(ctx: RuleContext, occ: Occupancy | null, findings: Finding[]): Finding[] {
  const blockOk = occ !== null;
  return [...(blockOk ? partialWarp(ctx) : []), ...overflows(ctx), ...lowOccupancy(ctx, occ), ...underfilled(ctx, occ, findings)];
}
