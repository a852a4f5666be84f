import * as z from 'zod';

import type { Dim3 } from '../dims';
import { formatDim3 } from '../dims';
import type { DeviceLimits } from './device-limits';
import { repairCluster, repairGrid, repairLaunch, residentBlocks, sameDims } from './launch-repair';
import type { KernelLimits } from './occupancy';

export type Severity = 'error' | 'warning' | 'note';

export interface LaunchError {
  code: number;
  name: string;
}

/** The launch fields a finding proposes to change; every value is a whole number within the device's and the kernel's limits. */
export interface SuggestedLaunch {
  grid?: Dim3;
  block?: Dim3;
  sharedBytes?: number;
  cluster?: Dim3;
}

/** Where a finding belongs: a launch field the user can change, the kernel itself, or the launch as a whole (its mode). */
export type FindingField = 'grid' | 'block' | 'sharedBytes' | 'cluster' | 'kernel' | 'launch';

/** One thing the validator has to say about a launch. */
export interface Finding {
  rule: string;
  severity: Severity;
  /** Which field it is about, so the UI can show it beside that field. */
  field: FindingField;
  message: string;
  limit: number | null;
  value: number | null;
  /** What cuLaunchKernel (driver API) and cudaLaunchKernel / <<<>>> (runtime API) would return. */
  driverError: LaunchError | null;
  runtimeError: LaunchError | null;
  /** The change that fixes it, in one line; its numbers are the suggestion's. */
  fix: string | null;
  /**
   * The launch configuration the fix proposes; null when the fix is in the kernel or the host code. The
   * suggestions of all of a launch's errors, applied together, give one launch without those errors.
   */
  suggested: SuggestedLaunch | null;
  /** The kernel source's line it is about, where the source says (the static __shared__ array to shrink). */
  line?: number;
}

const dim3 = z.tuple([z.number(), z.number(), z.number()]).readonly();
const launchError = z.object({ code: z.number().int(), name: z.string() });
export const findingSchema = z.object({
  rule: z.string(),
  severity: z.enum(['error', 'warning', 'note']),
  field: z.enum(['grid', 'block', 'sharedBytes', 'cluster', 'kernel', 'launch']),
  message: z.string(),
  limit: z.number().nullable(),
  value: z.number().nullable(),
  driverError: launchError.nullable(),
  runtimeError: launchError.nullable(),
  fix: z.string().nullable(),
  suggested: z.object({ grid: dim3.optional(), block: dim3.optional(), sharedBytes: z.number().optional(), cluster: dim3.optional() }).nullable(),
  line: z.number().int().optional(),
});
// What passes the schema is a Finding.
const _isFinding = (f: z.infer<typeof findingSchema>): Finding => f;
void _isFinding;

export interface LaunchConfig {
  grid: Dim3;
  block: Dim3;
  sharedBytes: number;
  cooperative?: boolean;
  cluster?: Dim3 | null;
  /** The workbench raises MAX_DYNAMIC_SHARED_SIZE_BYTES itself when a launch needs it (true for its runner). */
  raisesDynamicSharedLimit?: boolean;
}

/** What every rule reads: the launch, and the launch with every fixable error repaired (where error fixes come from). */
export interface RuleContext {
  device: DeviceLimits;
  kernel: KernelLimits;
  config: LaunchConfig;
  threads: number;
  blocks: number;
  repaired: ReturnType<typeof repairLaunch>;
}

export type LaunchField = keyof SuggestedLaunch;
export type FindingBody = Omit<Finding, 'fix' | 'suggested'>;

export const AXES = ['x', 'y', 'z'] as const;

/** "gridDim.y = 1" when one axis changes, "gridDim = (64,16,1)" when more do. */
export function describeDims(name: string, from: Dim3, to: Dim3): string {
  const changed = [0, 1, 2].filter((i) => from[i] !== to[i]);
  return changed.length === 1 ? `${name}.${AXES[changed[0]!]} = ${to[changed[0]!]}` : `${name} = (${to.join(',')})`;
}

/**
 * The repaired launch's values for `fields`, with what they drag along: a new block or shared size
 * changes how many blocks a cooperative launch can hold resident (so the grid comes too), and a new grid
 * may need a cluster that divides it. All taken from the one repaired launch, so that every error's
 * suggestion agrees with every other's.
 */
function fromRepair(ctx: RuleContext, fields: LaunchField[]): SuggestedLaunch {
  const { repaired: r, config } = ctx;
  const s: SuggestedLaunch = {};
  if (fields.includes('block')) s.block = r.block;
  if (fields.includes('sharedBytes')) s.sharedBytes = r.sharedBytes;
  const moved = s.block !== undefined || s.sharedBytes !== undefined;
  if (fields.includes('grid') || (moved && config.cooperative && !sameDims(r.grid, config.grid))) s.grid = r.grid;
  const clusterMoved = !!r.cluster && !!config.cluster && !sameDims(r.cluster, config.cluster);
  if (r.cluster && (fields.includes('cluster') || (s.grid && clusterMoved))) s.cluster = r.cluster;
  return s;
}

/**
 * A non-error's suggestion with what it drags along, relative to the launch as it is: a block or shared
 * size that holds fewer blocks resident needs a smaller cooperative grid, and that grid a cluster dividing it.
 */
function settle(ctx: RuleContext, suggestion: SuggestedLaunch): SuggestedLaunch {
  const { device, kernel, config, blocks } = ctx;
  const s = { ...suggestion };
  const launch = { ...config, ...s };
  if (!s.grid && config.cooperative && device.cooperativeLaunch && (s.block || s.sharedBytes !== undefined)) {
    const resident = residentBlocks(device, kernel, launch);
    if (resident !== null && blocks > resident) s.grid = repairGrid(device, kernel, launch);
  }
  if (s.grid && !s.cluster && config.cluster) {
    const cluster = repairCluster(device, { grid: s.grid, cluster: config.cluster });
    if (cluster && !sameDims(cluster, config.cluster)) s.cluster = cluster;
  }
  return s;
}

/** The sentence for what a suggestion changes beyond the fields its own fix text names. */
function companionText(config: LaunchConfig, s: SuggestedLaunch, named: LaunchField[]): string {
  const parts: string[] = [];
  if (s.grid && !named.includes('grid') && !sameDims(s.grid, config.grid))
    parts.push(`${describeDims('gridDim', config.grid, s.grid)}, so that every block of the cooperative launch is resident at once`);
  if (s.cluster && !named.includes('cluster') && config.cluster && !sameDims(s.cluster, config.cluster))
    parts.push(`a cluster of ${formatDim3(s.cluster)}, which divides that grid`);
  return parts.length ? ` With it, use ${parts.join(' and ')}.` : '';
}

/** An error whose fix is the repaired launch's `fields` (none: no launch fixes it); the fix text is built from the suggestion. */
export function repairFinding(ctx: RuleContext, fields: LaunchField[], body: FindingBody, fixText: (s: SuggestedLaunch) => string): Finding {
  const suggested = fields.length ? fromRepair(ctx, fields) : null;
  return { ...body, fix: fixText(suggested ?? {}) + (suggested ? companionText(ctx.config, suggested, fields) : ''), suggested };
}

/** A warning or note whose fix is `suggestion` (null: a fix in the kernel or host code); the fix text is built from it. */
export function hintFinding(ctx: RuleContext, suggestion: SuggestedLaunch | null, body: FindingBody, fixText: (s: SuggestedLaunch) => string): Finding {
  const suggested = suggestion ? settle(ctx, suggestion) : null;
  const named = Object.keys(suggestion ?? {}) as LaunchField[];
  return { ...body, fix: fixText(suggested ?? {}) + (suggested ? companionText(ctx.config, suggested, named) : ''), suggested };
}
