import type { DiscoveryReport } from './discovery';

/**
 * Whether an action that needs something of this machine can work here, from what the host's discovery found — the
 * same report the doctor judges on the Devices page — so a button that cannot work is off and says why before it is
 * pressed, as Run is (core/plan/run-readiness.ts). Each answer is null when the action can work, else the reason.
 */

/** null while the devices are being looked for; otherwise whether there is one, and why not (as Run's readiness takes it). */
export type GpuPresence = { present: true } | { present: false; reason: string } | null;

const NO_SANITIZER =
  'compute-sanitizer was not found on this machine (Devices shows where it was looked for). It ships with the CUDA toolkit ' +
  '(bin/compute-sanitizer); install it, or set GPU_WORKBENCH_COMPUTE_SANITIZER to its path. Open sanitizer report… opens a report saved elsewhere.';

/** Re-running a plan under compute-sanitizer: the tool must be installed, and the plan runs on a GPU. */
export function sanitizerRerunUnavailable(discovery: Pick<DiscoveryReport, 'computeSanitizer'> | null, gpu: GpuPresence): string | null {
  if (discovery === null || gpu === null) return 'Looking for compute-sanitizer and a CUDA device…';
  if (discovery.computeSanitizer && !discovery.computeSanitizer.found) return NO_SANITIZER;
  if (!gpu.present)
    return `compute-sanitizer runs the plan on a GPU, and this machine has none: ${gpu.reason} Open sanitizer report… opens a report saved on a GPU machine.`;
  return null;
}

/**
 * Anything else run under compute-sanitizer — a program (Sanitize a program…), the sanitizer passes of a diagnosis: the
 * tool must be installed. Whether the program needs a GPU is the program's business, and the report says what happened.
 */
export function sanitizerUnavailable(discovery: Pick<DiscoveryReport, 'computeSanitizer'> | null): string | null {
  if (discovery === null) return 'Looking for compute-sanitizer…';
  return discovery.computeSanitizer && !discovery.computeSanitizer.found ? NO_SANITIZER : null;
}

/** Monitoring (and sampling during runs): NVML, which the NVIDIA driver installs, reads each GPU's and each process's memory. */
export function monitorUnavailable(discovery: Pick<DiscoveryReport, 'nvml'> | null): string | null {
  if (discovery === null) return 'Looking for NVML…';
  if (!discovery.nvml.loaded)
    return 'Monitoring needs NVML (libnvidia-ml.so.1, installed with the NVIDIA driver), and it was not found on this machine (Devices shows where it was looked for).';
  return null;
}
