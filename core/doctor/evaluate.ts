import { DOCTOR_AREAS, doctorChecks, type DoctorArea, type DoctorCheck } from '../discovery';
import { notRun, whyMissing } from './check-helpers';
import { clockChecks } from './clock-rules';
import { compilerChecks } from './compiler-rules';
import { cudaComputeModeCheck, deviceModeChecks } from './device-mode-rules';
import { deviceOrderChecks } from './device-order-rules';
import { driverChecks } from './driver-rules';
import { asDiscoveryReport, type DoctorFacts } from './facts';
import { installationChecks } from './installation-rules';
import { memoryHealthChecks } from './memory-health-rules';
import { processChecks } from './process-rules';

/** What NVML's per-GPU checks look at, named once for the report that says they could not run. */
const GPU_STATE_CHECKS = 'persistence mode, compute mode, MIG, ECC errors, remapped rows and retired pages, whether a reset is needed, clock limits';

function gpuStateChecks(facts: DoctorFacts): DoctorCheck[] {
  const cuda = facts.cudaDevices.status === 'ok' ? facts.cudaDevices.value : null;
  if (facts.nvml.status === 'ok') {
    const devices = facts.nvml.value.devices;
    return [...memoryHealthChecks(devices), ...deviceModeChecks(devices, cuda), ...clockChecks(devices)];
  }
  // Without NVML the compute mode still comes from the CUDA driver; the rest cannot be read.
  const computeMode = cuda ? cudaComputeModeCheck(cuda) : null;
  const rest = computeMode ? GPU_STATE_CHECKS.replace('compute mode, ', '') : GPU_STATE_CHECKS;
  return [...(computeMode ? [computeMode] : []), notRun('gpu-state', 'gpu', 'GPU state', `${whyMissing(facts.nvml)} So ${rest} could not be read.`)];
}

/** Every check the doctor makes, from facts alone (pure: the same facts give the same report anywhere), grouped by area. */
export function evaluateDoctor(facts: DoctorFacts): DoctorCheck[] {
  const devices = facts.cudaDevices;
  const count = devices.status === 'ok' ? devices.value.length : null;
  const error = devices.status === 'failed' || devices.status === 'timed-out' ? devices.detail : null;
  const checks = [
    ...doctorChecks(asDiscoveryReport(facts.discovery), count, error),
    ...driverChecks(facts),
    ...compilerChecks(facts),
    ...installationChecks(facts),
    ...deviceOrderChecks(facts),
    ...gpuStateChecks(facts),
    ...processChecks(facts),
  ];
  const order = (area: DoctorArea | undefined) => DOCTOR_AREAS.indexOf(area ?? 'environment');
  // A stable sort: within an area, checks keep the order they were made in.
  return checks
    .map((c, i) => ({ c, i }))
    .sort((a, b) => order(a.c.area) - order(b.c.area) || a.i - b.i)
    .map((x) => x.c);
}
