import * as z from 'zod';

import type { LaunchPlan } from '../plan/plan-schema';
import type { RunResult } from '../runner/run-result';
import { deviceLimits, deviceProfileSchema, type DeviceProfile } from '../validate/device-limits';
import type { KernelLimits } from '../validate/occupancy';
import { checkPlanLaunches, type LaunchCheck } from '../validate/plan-check';

/**
 * validation.json: what the launch validator says about each launch of the plan, against the device the run
 * was on (its profile) and each kernel's resources as the driver reported them for the run. Without a profile of
 * that device nothing is checked, and the file says so rather than holding an empty list that reads as "clean".
 */
export interface BundleValidation {
  /** The device checked against, and where its profile came from; null when there was none. */
  device: { name: string; from: string } | null;
  launches: LaunchCheck[];
  /** Why launches were not checked, or how (device limits only, when the run never loaded its kernels). */
  note: string | null;
}

/** A kernel's limits as the driver reported them for the run (cuFuncGetAttribute), by the plan's kernel id. */
export function recordedKernelLimits(result: Pick<RunResult, 'functions'> | null): (kernelId: string) => KernelLimits | null {
  return (kernelId) => {
    const a = result?.functions.find((f) => f.kernel === kernelId)?.attributes;
    if (!a) return null;
    return {
      numRegs: a.numRegs,
      sharedSizeBytes: a.sharedSizeBytes,
      localSizeBytes: a.localSizeBytes,
      maxThreadsPerBlock: a.maxThreadsPerBlock,
      maxDynamicSharedSizeBytes: a.maxDynamicSharedSizeBytes,
    };
  };
}

export function bundleValidation(plan: LaunchPlan, profile: { profile: DeviceProfile; from: string } | null, result: RunResult | null): BundleValidation {
  if (!profile)
    return {
      device: null,
      launches: [],
      note: `No profile of ${result ? `the run's device (${result.device.name})` : "the run's device"} was at hand when the bundle was made, so its launches were not checked. Open the bundle and choose a profile of that device to check them.`,
    };
  let limits;
  try {
    limits = deviceLimits(profile.profile.device);
  } catch (error) {
    return { device: null, launches: [], note: `The profile of ${profile.profile.device.name} could not be used: ${(error as Error).message}.` };
  }
  const kernelLimits = recordedKernelLimits(result);
  const launches = checkPlanLaunches(plan, limits, (l) => kernelLimits(l.kernelId));
  const deviceOnly = launches.some((l) => l.checkedWith === 'device');
  return {
    device: { name: profile.profile.device.name, from: profile.from },
    launches,
    note: deviceOnly
      ? "Some launches were checked against the device's limits only: the run never loaded their kernels, so their registers and shared memory are not known."
      : null,
  };
}

const text = (max: number) => z.string().max(max);
const dim3 = z.tuple([z.number(), z.number(), z.number()]);
const launchError = z.object({ code: z.number().int(), name: text(128) }).nullable();
const findingSchema = z
  .object({
    rule: text(128),
    severity: z.enum(['error', 'warning', 'note']),
    field: z.enum(['grid', 'block', 'sharedBytes', 'cluster', 'kernel', 'launch']),
    message: text(8192),
    limit: z.number().nullable(),
    value: z.number().nullable(),
    driverError: launchError,
    runtimeError: launchError,
    fix: text(8192).nullable(),
    suggested: z.object({ grid: dim3.optional(), block: dim3.optional(), sharedBytes: z.number().optional(), cluster: dim3.optional() }).nullable(),
    line: z.number().int().min(0).optional(),
  })
  .passthrough();

/** validation.json as read from a bundle someone sent. */
export const bundleValidationSchema = z.object({
  device: z.object({ name: text(256), from: text(1024) }).nullable(),
  launches: z
    .array(
      z.object({
        stepIndex: z.number().int().min(0).max(10_000),
        label: text(4096),
        checkedWith: z.enum(['kernel', 'device']),
        findings: z.array(findingSchema).max(256),
      }),
    )
    .max(10_000),
  note: text(4096).nullable(),
});

/**
 * The device profiles a bundle carries (devices.json): schema 2 writes `{ profiles: [...] }`; schema 1 took
 * whatever `--devices` named — a profile, or `gpu-workbench devices --json` — so those are read too.
 */
export function profilesFromDevicesEntry(value: unknown): DeviceProfile[] {
  const one = deviceProfileSchema.safeParse(value);
  if (one.success) return [one.data];
  const record = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  const list = Array.isArray(value) ? value : Array.isArray(record?.['profiles']) ? (record['profiles'] as unknown[]) : null;
  if (list) return list.slice(0, 64).flatMap((p) => (deviceProfileSchema.safeParse(p).success ? [deviceProfileSchema.parse(p)] : []));
  if (record && record['ok'] === true && Array.isArray(record['devices'])) {
    const driverVersion = typeof record['driverVersion'] === 'string' ? record['driverVersion'] : null;
    return (record['devices'] as unknown[]).slice(0, 64).flatMap((device) => {
      const p = deviceProfileSchema.safeParse({ format: 'gpu-workbench-device-profile', version: 1, capturedAt: '', driverVersion, device });
      return p.success ? [p.data] : [];
    });
  }
  return [];
}
