import type { DevicesResult } from '../../core/api/channels';
import { ATTRIBUTE_IDS } from '../../core/cuda/device-attributes';
import { namedDevice, type DeviceInfo, type DeviceMemory } from '../../core/devices';
import { driverMissingProblem } from '../../core/discovery';
import { requireAddon } from '../native/addon';
import { toCudaError } from '../runner/cuda-error';
import { cudaLibraries } from './discovery-service';

let known: DeviceInfo[] | null = null;

/**
 * Devices and their attributes, read once per process (they do not change while it runs), for the
 * paths that need only them: each run, each compile's facts. No CUDA context is created.
 */
export function deviceInfos(): Promise<DeviceInfosResult> {
  if (known) return Promise.resolve({ ok: true, devices: known });
  // Callers that ask while the first listing is under way share it (the CLI lists beside its run's own checks).
  listing ??= listDeviceInfos().finally(() => (listing = null));
  return listing;
}

type DeviceInfosResult = Extract<DevicesResult, { ok: false }> | { ok: true; devices: DeviceInfo[] };
let listing: Promise<DeviceInfosResult> | null = null;

async function listDeviceInfos(): Promise<DeviceInfosResult> {
  const report = cudaLibraries();
  if (!report.addon.loaded || !report.cuda.loaded) return { ok: false, problem: driverMissingProblem(report) };
  try {
    known = (await requireAddon().listDevices(ATTRIBUTE_IDS)).map(namedDevice);
    return { ok: true, devices: known };
  } catch (error) {
    const e = toCudaError(error, 'cuInit');
    const noDevice = e.name === 'CUDA_ERROR_NO_DEVICE';
    return {
      ok: false,
      problem: {
        title: noDevice ? 'The NVIDIA driver found no CUDA device' : 'The CUDA driver could not list devices',
        detail: `${e.api} returned ${e.name} (${e.code}): ${e.message}`,
        remedy: noDevice
          ? 'Check `nvidia-smi` and CUDA_VISIBLE_DEVICES.'
          : 'Check `nvidia-smi`. A driver whose kernel module and user-space library differ in version (after an update without a reboot) is a common cause.',
      },
    };
  }
}

/** Devices and their attributes, with NVML memory (read fresh) where available. */
export async function listDevices(): Promise<DevicesResult> {
  const infos = await deviceInfos();
  if (!infos.ok) return infos;
  const { devices } = infos;
  const report = cudaLibraries();
  const addon = requireAddon();
  let memory: DeviceMemory[] | null = null;
  let driverVersion: string | null = null;
  let memoryProblem: string | null = null;
  if (report.nvml.loaded) {
    try {
      const snapshot = await addon.nvmlSnapshot();
      driverVersion = snapshot.driverVersion;
      memory = snapshot.devices.map((d) => ({ uuid: d.uuid, ...d.memory, processes: d.processes }));
    } catch (error) {
      memoryProblem = toCudaError(error, 'nvml').message;
    }
  } else {
    memoryProblem = 'NVML (libnvidia-ml.so.1) was not found, so memory in use and per-process memory are not shown.';
  }
  return { ok: true, devices, memory, driverVersion, memoryProblem };
}
