import type { DoctorCheck } from '../discovery';
import { overDevices, unanswered, worst, type DeviceVerdict } from './check-helpers';
import { normalizeBusId } from './device-order-rules';
import type { CudaDeviceFact, NvmlDeviceHealth } from './facts';
import { COMPUTE_MODES, NVML_NOT_SUPPORTED } from './nvml-codes';

/** How each GPU is set up to be shared: persistence, compute mode, MIG. */

const area = 'gpu' as const;

/**
 * Persistence off is a warning only where nothing else keeps the driver's state: without a display server holding
 * the GPU, the driver tears it down when the last CUDA process exits and builds it again for the next one, which
 * then waits (most on servers with many GPUs). The workbench starts fresh runner processes, so it pays that each
 * time. With a display active, the display server keeps the driver loaded: persistence changes nothing.
 */
function persistence(d: NvmlDeviceHealth): DeviceVerdict {
  const p = d.persistenceMode;
  if (!p.ok) return { status: 'not-run', evidence: `persistence mode: ${unanswered(p)}.` };
  if (p.value) return { status: 'ok', evidence: 'persistence mode is on.' };
  if (d.displayActive.ok && d.displayActive.value)
    return { status: 'ok', evidence: 'persistence mode is off, but a display is active on it, which keeps the driver loaded.' };
  return {
    status: 'warn',
    evidence:
      'persistence mode is off and no display is active: the driver tears the GPU down when the last CUDA program exits and sets it up again for the next, which waits for it (each runner the workbench starts, too).',
    remedy: 'Turn it on: sudo systemctl enable --now nvidia-persistenced (or sudo nvidia-smi -pm 1, which lasts until reboot).',
  };
}

function computeModeVerdict(mode: number, which: string): DeviceVerdict {
  const name = COMPUTE_MODES[mode] ?? `mode ${mode}`;
  if (mode === 0) return { status: 'ok', evidence: 'compute mode DEFAULT: any number of processes may use it.' };
  if (mode === 2)
    return {
      status: 'fail',
      evidence: `compute mode ${name}: no process may create a CUDA context on it; every program fails with CUDA_ERROR_DEVICE_UNAVAILABLE (46) / cudaErrorDevicesUnavailable.`,
      remedy: `sudo nvidia-smi -i ${which} -c DEFAULT, if the GPU is yours to change.`,
    };
  return {
    status: 'warn',
    evidence: `compute mode ${name}: one process at a time may hold a context on it. A second — your program while a workbench runner holds the GPU, or the runner's warm spare — gets CUDA_ERROR_DEVICE_UNAVAILABLE (46) / cudaErrorDevicesUnavailable.`,
    remedy: `Run one CUDA program at a time (gpu-workbench serve --no-spare keeps no spare runner), or sudo nvidia-smi -i ${which} -c DEFAULT if the GPU is yours to change.`,
  };
}

function migVerdict(d: NvmlDeviceHealth): DeviceVerdict {
  const m = d.migMode;
  if (!m.ok)
    return m.code === NVML_NOT_SUPPORTED ? { status: 'ok', evidence: 'no MIG on this GPU.' } : { status: 'not-run', evidence: `MIG mode: ${unanswered(m)}.` };
  const on = m.value.current === 1;
  const pending = m.value.pending !== m.value.current ? ` It turns ${m.value.pending === 1 ? 'on' : 'off'} at the next GPU reset.` : '';
  if (!on && !pending) return { status: 'ok', evidence: 'MIG is off.' };
  if (!on)
    return {
      status: 'warn',
      evidence: `MIG is off.${pending}`,
      remedy: `Reset the GPU (sudo nvidia-smi -i ${d.index} -r, nothing running on it) when the change should take effect.`,
    };
  return {
    status: 'warn',
    evidence: `MIG is on: CUDA sees this GPU's MIG devices, not the GPU — each with its share of SMs and memory, and a process uses one of them (CUDA_VISIBLE_DEVICES=MIG-<uuid> picks it); with no GPU instance created, CUDA finds no device here.${pending}`,
    remedy: `nvidia-smi -L lists the MIG devices and their UUIDs. To use the whole GPU: sudo nvidia-smi -i ${d.index} -mig 0, then reset it.`,
  };
}

/** Persistence, compute mode and MIG of every GPU NVML lists. */
export function deviceModeChecks(devices: readonly NvmlDeviceHealth[], cudaDevices: readonly CudaDeviceFact[] | null): DoctorCheck[] {
  return [
    overDevices({ id: 'persistence-mode', area, title: 'Persistence mode' }, devices, persistence),
    overDevices({ id: 'compute-mode', area, title: 'Compute mode' }, devices, (d) => {
      if (d.computeMode.ok) return computeModeVerdict(d.computeMode.value, String(d.index));
      // NVML could not say; the CUDA driver's attribute holds the same value.
      const bus = d.pciBusId.ok ? normalizeBusId(d.pciBusId.value) : null;
      const cuda = bus ? cudaDevices?.find((c) => normalizeBusId(c.pciBusId) === bus) : undefined;
      if (cuda?.computeMode != null) return computeModeVerdict(cuda.computeMode, String(d.index));
      return { status: 'not-run', evidence: `compute mode: ${unanswered(d.computeMode)}.` };
    }),
    overDevices({ id: 'mig-mode', area, title: 'MIG (Multi-Instance GPU)' }, devices, migVerdict),
  ];
}

/** Without NVML, the compute mode still comes from the CUDA driver (CU_DEVICE_ATTRIBUTE_COMPUTE_MODE). */
export function cudaComputeModeCheck(cudaDevices: readonly CudaDeviceFact[]): DoctorCheck | null {
  const known = cudaDevices.filter((d) => d.computeMode !== null);
  if (!known.length) return null;
  // nvidia-smi -i takes a PCI bus id as well as its own index.
  const verdicts = known.map((d) => ({ d, v: computeModeVerdict(d.computeMode!, d.pciBusId) }));
  const status = worst(verdicts.map((x) => x.v.status));
  const remedies = [...new Set(verdicts.filter((x) => x.v.remedy).map((x) => x.v.remedy!))];
  return {
    id: 'compute-mode',
    area,
    title: 'Compute mode',
    status,
    detail: verdicts.map(({ d, v }) => (verdicts.length > 1 ? `CUDA device ${d.ordinal}: ${v.evidence}` : v.evidence)).join(' '),
    remedy: status === 'ok' ? null : remedies.join(' '),
  };
}
