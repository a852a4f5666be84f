import * as z from 'zod';

import type { DeviceInfo } from '../devices';

/** The limits a launch is checked against, read from a device's attributes (live or a saved profile). */
export interface DeviceLimits {
  name: string;
  computeMajor: number;
  computeMinor: number;
  smCount: number;
  warpSize: number;
  maxThreadsPerBlock: number;
  maxBlockDim: [number, number, number];
  maxGridDim: [number, number, number];
  maxThreadsPerSM: number;
  maxBlocksPerSM: number;
  regsPerBlock: number;
  regsPerSM: number;
  sharedPerBlock: number;
  sharedPerBlockOptin: number;
  sharedPerSM: number;
  reservedSharedPerBlock: number;
  cooperativeLaunch: boolean;
  clusterLaunch: boolean;
  totalMemBytes: number;
}

const need = (device: DeviceInfo, name: string): number => {
  const value = device.attributes[name];
  if (value === null || value === undefined) throw new Error(`the device profile lacks ${name}`);
  return value;
};

export function deviceLimits(device: DeviceInfo): DeviceLimits {
  return {
    name: device.name,
    computeMajor: device.computeCapability.major,
    computeMinor: device.computeCapability.minor,
    smCount: need(device, 'MULTIPROCESSOR_COUNT'),
    warpSize: need(device, 'WARP_SIZE'),
    maxThreadsPerBlock: need(device, 'MAX_THREADS_PER_BLOCK'),
    maxBlockDim: [need(device, 'MAX_BLOCK_DIM_X'), need(device, 'MAX_BLOCK_DIM_Y'), need(device, 'MAX_BLOCK_DIM_Z')],
    maxGridDim: [need(device, 'MAX_GRID_DIM_X'), need(device, 'MAX_GRID_DIM_Y'), need(device, 'MAX_GRID_DIM_Z')],
    maxThreadsPerSM: need(device, 'MAX_THREADS_PER_MULTIPROCESSOR'),
    maxBlocksPerSM: need(device, 'MAX_BLOCKS_PER_MULTIPROCESSOR'),
    regsPerBlock: need(device, 'MAX_REGISTERS_PER_BLOCK'),
    regsPerSM: need(device, 'MAX_REGISTERS_PER_MULTIPROCESSOR'),
    sharedPerBlock: need(device, 'MAX_SHARED_MEMORY_PER_BLOCK'),
    sharedPerBlockOptin: need(device, 'MAX_SHARED_MEMORY_PER_BLOCK_OPTIN'),
    sharedPerSM: need(device, 'MAX_SHARED_MEMORY_PER_MULTIPROCESSOR'),
    reservedSharedPerBlock: device.attributes['RESERVED_SHARED_MEMORY_PER_BLOCK'] ?? 0,
    cooperativeLaunch: (device.attributes['COOPERATIVE_LAUNCH'] ?? 0) === 1,
    clusterLaunch: (device.attributes['CLUSTER_LAUNCH'] ?? 0) === 1,
    totalMemBytes: device.totalMemBytes,
  };
}

/** A device profile: what `gpu-workbench devices --json --save-profile` writes, to validate without the GPU. */
export const deviceProfileSchema = z.object({
  format: z.literal('gpu-workbench-device-profile'),
  version: z.literal(1),
  capturedAt: z.string(),
  driverVersion: z.string().nullable(),
  device: z.object({
    ordinal: z.number(),
    name: z.string(),
    uuid: z.string(),
    pciBusId: z.string(),
    totalMemBytes: z.number(),
    computeCapability: z.object({ major: z.number(), minor: z.number() }),
    attributes: z.record(z.string(), z.number().nullable()),
  }),
});
export type DeviceProfile = z.infer<typeof deviceProfileSchema>;

export function makeProfile(device: DeviceInfo, driverVersion: string | null, capturedAt: string): DeviceProfile {
  return { format: 'gpu-workbench-device-profile', version: 1, capturedAt, driverVersion, device };
}
