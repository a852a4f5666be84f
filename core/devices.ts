import * as z from 'zod';

import { ATTRIBUTES } from './cuda/device-attributes';

/** A CUDA device as the driver reports it, every attribute by name (null where this driver lacks it). */
export interface DeviceInfo {
  ordinal: number;
  name: string;
  uuid: string;
  pciBusId: string;
  totalMemBytes: number;
  computeCapability: { major: number; minor: number };
  attributes: Record<string, number | null>;
}

export const deviceInfoSchema = z.object({
  ordinal: z.number().int().min(0),
  name: z.string(),
  uuid: z.string(),
  pciBusId: z.string(),
  totalMemBytes: z.number().min(0),
  computeCapability: z.object({ major: z.number().int(), minor: z.number().int() }),
  attributes: z.record(z.string(), z.number().nullable()),
});

/** What the addon returns: attribute values keyed by numeric id. */
export interface RawDevice {
  ordinal: number;
  name: string;
  uuid: string;
  pciBusId: string;
  totalMemBytes: number;
  attributes: Record<string, number | null>;
}

export function namedDevice(raw: RawDevice): DeviceInfo {
  const attributes: Record<string, number | null> = {};
  for (const a of ATTRIBUTES) attributes[a.name] = raw.attributes[String(a.id)] ?? null;
  return {
    ordinal: raw.ordinal,
    name: raw.name,
    uuid: raw.uuid,
    pciBusId: raw.pciBusId,
    totalMemBytes: raw.totalMemBytes,
    computeCapability: {
      major: attributes['COMPUTE_CAPABILITY_MAJOR'] ?? 0,
      minor: attributes['COMPUTE_CAPABILITY_MINOR'] ?? 0,
    },
    attributes,
  };
}

export const smArch = (device: Pick<DeviceInfo, 'computeCapability'>): string => `sm_${device.computeCapability.major}${device.computeCapability.minor}`;

/**
 * The architecture compiled for where no device says its own (no GPU here; a bundle that does not record it): Hopper's,
 * the H100 and H200 the workbench is built and tested on.
 */
export const NO_GPU_ARCH = 'sm_90';

export interface GpuProcess {
  pid: number;
  usedBytes: number | null;
  name: string;
}

export interface DeviceMemory {
  uuid: string;
  totalBytes: number;
  freeBytes: number;
  usedBytes: number;
  /** null when NVML cannot list processes (no permission, or unsupported). */
  processes: GpuProcess[] | null;
}

export const gpuProcessSchema = z.object({ pid: z.number().int(), usedBytes: z.number().nullable(), name: z.string() });
export const deviceMemorySchema = z.object({
  uuid: z.string(),
  totalBytes: z.number(),
  freeBytes: z.number(),
  usedBytes: z.number(),
  processes: z.array(gpuProcessSchema).nullable(),
});
