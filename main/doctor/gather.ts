import type { DoctorCheck } from '../../core/discovery';
import { evaluateDoctor } from '../../core/doctor/evaluate';
import { DOCTOR_FACTS_SCHEMA, nvmlHealthSchema, type Collected, type CudaDeviceFact, type DoctorFacts } from '../../core/doctor/facts';
import { loadAddon } from '../native/addon';
import { deviceInfos } from '../services/device-service';
import { discover } from '../services/discovery-service';
import { findInstallations } from './installations';
import { nvccTargets } from './nvcc-targets';
import { processFacts } from './process-facts';
import { collect } from './time-limit';

/** Each collector's limit unless the caller gives one: long enough for a slow first nvmlInit, short enough to wait for. */
export const DEFAULT_COLLECTOR_LIMIT_MS = 5000;

const skipped = <T>(detail: string): Promise<Collected<T>> => Promise.resolve({ status: 'skipped', detail });

/**
 * Gathers what the doctor's rules read. Discovery (finding the libraries, asking nvcc its version) touches no
 * GPU and bounds its own tool calls; everything that talks to the driver or NVML runs under `limitMs`, in
 * parallel, so a wedged GPU costs at most about one limit.
 */
export async function gatherDoctorFacts(options: { limitMs?: number } = {}): Promise<DoctorFacts> {
  const limitMs = options.limitMs ?? DEFAULT_COLLECTOR_LIMIT_MS;
  const discovery = await discover();
  const addon = loadAddon().addon;
  const noAddon = `the native addon is not built (${discovery.addon.error ?? 'not loaded'}).`;
  const noDriver = 'no NVIDIA driver was found (libcuda.so.1).';
  const noNvml = 'NVML (libnvidia-ml.so.1), which ships with the NVIDIA driver, was not found.';

  const cudaDevices: Promise<Collected<CudaDeviceFact[]>> = !addon
    ? skipped(noAddon)
    : !discovery.cuda.loaded
      ? skipped(noDriver)
      : collect(
          'The CUDA driver (cuInit and the device queries)',
          limitMs,
          async () => {
            const infos = await deviceInfos();
            if (!infos.ok) throw new Error(`${infos.problem.title}: ${infos.problem.detail}`);
            return infos.devices.map((d) => ({
              ordinal: d.ordinal,
              name: d.name,
              uuid: d.uuid,
              pciBusId: d.pciBusId,
              computeCapability: d.computeCapability,
              computeMode: d.attributes['COMPUTE_MODE'] ?? null,
              totalMemBytes: d.totalMemBytes,
            }));
          },
          'cuda-devices',
        );
  const nvml = !addon
    ? skipped<never>(noAddon)
    : !discovery.nvml.loaded
      ? skipped<never>(noNvml)
      : collect(
          "NVML (nvmlInit and each GPU's queries)",
          limitMs,
          async () => {
            const parsed = nvmlHealthSchema.safeParse(await addon.nvmlHealth());
            if (!parsed.success) throw new Error(`the addon's NVML answer has an unexpected shape: ${parsed.error.issues[0]?.message ?? ''}`);
            return parsed.data;
          },
          'nvml-health',
        );
  const processes = !addon
    ? skipped<never>(noAddon)
    : !discovery.nvml.loaded
      ? skipped<never>(noNvml)
      : collect(
          "NVML's list of processes on each GPU",
          limitMs,
          async () => processFacts(await addon.nvmlSnapshot(), () => addon.nvmlSnapshot()),
          'nvml-processes',
        );
  const installations = collect('Looking for CUDA installations', limitMs, () => findInstallations(discovery), 'installations');
  const nvccPath = discovery.nvcc.found ? discovery.nvcc.path : null;
  const targets = nvccPath
    ? collect('nvcc (--list-gpu-code and --list-gpu-arch)', limitMs, () => nvccTargets(nvccPath, limitMs), 'nvcc-targets')
    : skipped<never>('nvcc was not found.');
  const [c, n, p, i, t] = await Promise.all([cudaDevices, nvml, processes, installations, targets]);
  return {
    schema: DOCTOR_FACTS_SCHEMA,
    gatheredAt: new Date().toISOString(),
    limitMs,
    discovery,
    cudaDevices: c,
    nvml: n,
    processes: p,
    installations: i,
    nvccTargets: t,
  };
}

export interface DoctorReport {
  checks: DoctorCheck[];
  facts: DoctorFacts;
}

/** Gathers the facts and judges them: what `gpu-workbench doctor`, the UI and a bundle show. */
export async function runDoctor(options: { limitMs?: number } = {}): Promise<DoctorReport> {
  const facts = await gatherDoctorFacts(options);
  return { checks: evaluateDoctor(facts), facts };
}
