import * as z from 'zod';

import { DEFAULT_PROFILE_THRESHOLDS, type ProfileThresholds } from '../kernel-profile/profile-findings';
import { CHECK_NAMES, type CheckName } from './check-model';

/**
 * A `check`'s settings, kept with the plans as `gpu-workbench-check.json` (or named with --config): which checks to
 * run, the thresholds the profile's findings fail at, each check's time limit, and how many runs under a tool go at
 * once. Every field is optional; what is left out takes the default below.
 */
export const CHECK_CONFIG_FILE = 'gpu-workbench-check.json';

const ms = z.number().int().min(1_000).max(3_600_000);

export const checkConfigSchema = z
  .object({
    /** The checks to run; the others are reported as off. */
    checks: z
      .array(z.enum(CHECK_NAMES))
      .min(1)
      .refine((list) => new Set(list).size === list.length, 'names a check twice')
      .optional(),
    /** A line whose sectors per request reach this many times its ideal fails coalescing (2: twice the sectors it needs). */
    uncoalescedRatio: z.number().min(1).max(32).optional(),
    /** Achieved occupancy (%) below which occupancy fails; 0 sets no minimum. */
    minAchievedOccupancyPct: z.number().min(0).max(100).optional(),
    /** Time limits in milliseconds: the run (a gallery sample's own timeoutMs when not set here), each tool's run, the profile, the compile. */
    timeoutsMs: z
      .object({
        run: ms.optional(),
        validator: ms.optional(),
        memcheck: ms.optional(),
        racecheck: ms.optional(),
        initcheck: ms.optional(),
        synccheck: ms.optional(),
        profile: ms.optional(),
      })
      .strict()
      .optional(),
    /** Runs on the GPU at once (a plain run, a run under one tool); a profile always has the GPU to itself. */
    concurrency: z.number().int().min(1).max(16).optional(),
  })
  .strict();
export type CheckConfigInput = z.infer<typeof checkConfigSchema>;

export interface CheckConfig {
  checks: readonly CheckName[];
  thresholds: ProfileThresholds;
  timeoutsMs: { run: number | null; validator: number; memcheck: number; racecheck: number; initcheck: number; synccheck: number; profile: number };
  concurrency: number;
}

/** A plain run's limit when neither the config nor a sample sets one (as `gpu-workbench run`). */
export const DEFAULT_RUN_TIMEOUT_MS = 30_000;
const DEFAULT_TOOL_TIMEOUT_MS = 300_000;

export const DEFAULT_CHECK_CONFIG: CheckConfig = {
  checks: CHECK_NAMES,
  thresholds: DEFAULT_PROFILE_THRESHOLDS,
  timeoutsMs: {
    run: null,
    validator: 120_000,
    memcheck: DEFAULT_TOOL_TIMEOUT_MS,
    racecheck: DEFAULT_TOOL_TIMEOUT_MS,
    initcheck: DEFAULT_TOOL_TIMEOUT_MS,
    synccheck: DEFAULT_TOOL_TIMEOUT_MS,
    profile: DEFAULT_TOOL_TIMEOUT_MS,
  },
  concurrency: 4,
};

/** The settings a config file's fields make, the defaults filling what it leaves out. */
export function resolveCheckConfig(input: CheckConfigInput): CheckConfig {
  const d = DEFAULT_CHECK_CONFIG;
  return {
    checks: input.checks ? CHECK_NAMES.filter((c) => input.checks!.includes(c)) : d.checks,
    thresholds: {
      uncoalescedRatio: input.uncoalescedRatio ?? d.thresholds.uncoalescedRatio,
      minAchievedOccupancyPct: input.minAchievedOccupancyPct ?? d.thresholds.minAchievedOccupancyPct,
    },
    timeoutsMs: { ...d.timeoutsMs, ...input.timeoutsMs },
    concurrency: input.concurrency ?? d.concurrency,
  };
}

/** Each problem on a line of its own: where in the file, and what is wrong, in words. */
function describeConfigIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const where = issue.path.length ? issue.path.join('.') : 'the file';
    if (issue.code === 'unrecognized_keys')
      return `${where}: ${issue.keys.map((k) => `"${k}"`).join(', ')} ${issue.keys.length === 1 ? 'is not a setting' : 'are not settings'} (the settings are checks, uncoalescedRatio, minAchievedOccupancyPct, timeoutsMs, concurrency; timeoutsMs takes ${Object.keys(DEFAULT_CHECK_CONFIG.timeoutsMs).join(', ')})`;
    if (issue.code === 'invalid_value' && issue.path[0] === 'checks') return `${where}: must be one of ${CHECK_NAMES.join(', ')}`;
    return `${where}: ${issue.message}`;
  });
}

/**
 * A config file's text, checked: the settings, or every problem in words (never a half-read config: a typo in a
 * threshold would otherwise pass what it meant to fail).
 */
export function parseCheckConfig(text: string, name = CHECK_CONFIG_FILE): { ok: true; config: CheckConfig } | { ok: false; problems: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`${name} is not JSON: ${(error as Error).message}`] };
  }
  const parsed = checkConfigSchema.safeParse(value);
  if (!parsed.success) return { ok: false, problems: describeConfigIssues(parsed.error).map((line) => `${name}, ${line}`) };
  return { ok: true, config: resolveCheckConfig(parsed.data) };
}
