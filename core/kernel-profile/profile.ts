import * as z from 'zod';

/**
 * A kernel's profile: what Nsight Compute measured for one launch of a plan (or, without counters, what CUDA events
 * and the plan's buffers say). Data like a run result: it travels in `--json`, in bundles, and opens read-only, so
 * it has a schema and every figure is bounded.
 */
const count = z.number().finite().min(0).max(Number.MAX_SAFE_INTEGER);
const percent = z.number().finite().min(0).max(1000);
const text = (max: number) => z.string().max(max);

/** Global memory traffic of one kind (loads or stores): sectors moved, requests (warp-level instructions), the ideal. */
export const accessFiguresSchema = z
  .object({
    sectors: count,
    requests: count,
    /** The sectors these requests would move if each warp's threads touched consecutive addresses. */
    idealSectors: count,
    /** Bits each thread moves per access (32 for a float), when ncu says. */
    accessBits: z.number().int().min(0).max(1024).nullable(),
  })
  .strict();
export type AccessFigures = z.infer<typeof accessFiguresSchema>;

export const STALL_REASONS = [
  'barrier',
  'branch_resolving',
  'dispatch',
  'drain',
  'imc',
  'lg',
  'long_sb',
  'math',
  'membar',
  'mio',
  'misc',
  'no_inst',
  'short_sb',
  'sleep',
  'tex',
  'wait',
] as const;
export type StallReason = (typeof STALL_REASONS)[number];
const stallCounts = z.partialRecord(z.enum(STALL_REASONS), count);

export const profileLineSchema = z
  .object({
    line: z.number().int().min(1).max(10_000_000),
    /** PC samples on this line's instructions (warp stall sampling, all samples). */
    samples: count,
    stalls: stallCounts,
    instructions: count,
    loads: accessFiguresSchema.nullable(),
    stores: accessFiguresSchema.nullable(),
  })
  .strict();
export type ProfileLine = z.infer<typeof profileLineSchema>;

export const countersSchema = z
  .object({
    durationNs: count,
    /** Speed of light, % of peak: SM (compute), memory (the busiest memory unit), and each unit. */
    computePct: percent,
    memoryPct: percent,
    dramPct: percent,
    l2Pct: percent,
    l1Pct: percent.nullable(),
    dramBytesRead: count,
    dramBytesWritten: count,
    loads: accessFiguresSchema,
    stores: accessFiguresSchema,
    occupancy: z
      .object({
        achievedPct: percent,
        theoreticalPct: percent,
        /** Blocks per SM each resource allows (ncu's launch__occupancy_limit_*). */
        limits: z.partialRecord(z.enum(['registers', 'shared memory', 'warps', 'blocks', 'barriers']), count),
        wavesPerSm: z.number().finite().min(0).max(1e9),
        registersPerThread: count,
      })
      .strict(),
    /** Kernel-wide PC samples by stall reason. */
    stalls: stallCounts,
    /** Per source line of the kernel's own file, in line order. */
    lines: z.array(profileLineSchema).max(100_000),
    /** The file the lines belong to, as ncu names it (the compile's name for it). */
    sourceFile: text(4096).nullable(),
  })
  .strict();
export type ProfileCounters = z.infer<typeof countersSchema>;

export const NO_COUNTERS_REASONS = ['turned-off', 'no-ncu', 'no-node', 'no-permission', 'ncu-failed', 'not-profiled'] as const;
export type NoCountersReason = (typeof NO_COUNTERS_REASONS)[number];

export const profileSchema = z
  .object({
    kind: z.literal('gpu-workbench-profile'),
    version: z.literal(1),
    recordedAt: text(64),
    device: z.object({ name: text(256), peakDramBytesPerSecond: count.nullable() }).strict(),
    kernel: z
      .object({
        entry: text(1024),
        sourceFile: text(4096),
        step: z.number().int().min(0).max(1_000_000),
        grid: z.tuple([count, count, count]),
        block: z.tuple([count, count, count]),
      })
      .strict(),
    tool: z.object({ ncuVersion: text(200).nullable(), command: z.array(text(4096)).max(200) }).strict(),
    /** What Nsight Compute measured; null when it could not, with the reason in `noCounters`. */
    counters: countersSchema.nullable(),
    noCounters: z
      .object({ reason: z.enum(NO_COUNTERS_REASONS), detail: text(4000) })
      .strict()
      .nullable(),
    /** What needs no counters: the launch's time and the bytes its buffers hold. */
    effective: z
      .object({
        kernelMs: z.number().finite().min(0).max(1e9),
        /** Whose clock: the median of the plan's timed launches by CUDA events, or ncu's duration of the profiled one. */
        timedBy: z.enum(['events', 'ncu']),
        bytes: count,
        buffers: z.array(z.object({ name: text(256), bytes: count }).strict()).max(1000),
      })
      .strict()
      .nullable(),
  })
  .strict();
export type Profile = z.infer<typeof profileSchema>;

export function parseProfile(value: unknown): { ok: true; profile: Profile } | { ok: false; error: string } {
  const parsed = profileSchema.safeParse(value);
  if (parsed.success) return { ok: true, profile: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, error: issue ? `${issue.path.join('.') || 'the file'}: ${issue.message}` : 'not a profile' };
}

/** A program's kernels as Nsight Compute profiled them: one profile per launch it took, in launch order. */
export const programProfileSchema = z
  .object({
    kind: z.literal('gpu-workbench-program-profile'),
    version: z.literal(1),
    recordedAt: text(64),
    command: z.array(text(4096)).max(1000),
    cwd: text(4096),
    exit: z.object({ code: z.number().int().nullable(), signal: text(32).nullable(), timedOut: z.boolean(), cancelled: z.boolean() }).strict(),
    kernels: z.array(profileSchema).max(1000),
    /** Why nothing was profiled, when nothing was. */
    noCounters: z
      .object({ reason: z.enum(NO_COUNTERS_REASONS), detail: text(4000) })
      .strict()
      .nullable(),
    /** The program's own output (and ncu's), its head and tail. */
    output: text(2_000_000),
  })
  .strict();
export type ProgramProfile = z.infer<typeof programProfileSchema>;
