import type { GpuPresence } from '../availability';
import type { DiscoveryReport } from '../discovery';
import { counterAccess } from '../kernel-profile/counter-permission';
import { CHECK_NAMES, type CheckName } from './check-model';

const LOOKING = 'Looking for a CUDA device and the tools…';

/**
 * Which checks of Check everything can run on this machine, from what discovery found (as Run's readiness and the
 * sanitizer re-run's are told, core/availability.ts), so the button is off and says why before it is pressed when
 * none can, and the view lists each check that cannot with its reason. Where discovery could not tell (an older
 * host), the check itself says so when it runs.
 */
export function checksUnavailable(
  discovery: Pick<DiscoveryReport, 'computeSanitizer' | 'ncu' | 'profilingCounters'> | null,
  gpu: GpuPresence,
): Record<CheckName, string | null> {
  const each = (reason: (check: CheckName) => string | null) => Object.fromEntries(CHECK_NAMES.map((c) => [c, reason(c)])) as Record<CheckName, string | null>;
  if (discovery === null || gpu === null) return each(() => LOOKING);
  const sanitizerMissing = discovery.computeSanitizer && !discovery.computeSanitizer.found;
  const tool = (c: CheckName) => c === 'memcheck' || c === 'racecheck' || c === 'initcheck' || c === 'synccheck';
  const profiled = (c: CheckName) => c === 'coalescing' || c === 'occupancy';
  const noCounters =
    discovery.ncu && !discovery.ncu.found
      ? 'Nsight Compute (ncu) was not found on this machine (Devices shows where it was looked for); it ships with the CUDA toolkit, or set GPU_WORKBENCH_NCU to its path.'
      : counterAccess(discovery.profilingCounters) === 'denied'
        ? 'The driver lets only administrators read the GPU’s performance counters (RmProfilingAdminOnly is 1), so Nsight Compute would read none: Devices says how to allow it.'
        : null;
  if (gpu.present)
    return each((c) =>
      tool(c) && sanitizerMissing
        ? 'compute-sanitizer was not found on this machine (Devices shows where it was looked for); it ships with the CUDA toolkit, or set GPU_WORKBENCH_COMPUTE_SANITIZER to its path.'
        : profiled(c)
          ? noCounters
          : null,
    );
  const reason = gpu.reason.replace(/\.$/, '');
  return each((c) => {
    if (c === 'validator') return `There is no GPU here to check the plan against (${reason}); the Launch panel checks it against the profile you chose.`;
    if (c === 'run' || c === 'determinism') return `The plan runs on a GPU, and this machine has none: ${reason}.`;
    if (tool(c))
      return sanitizerMissing
        ? `compute-sanitizer was not found on this machine, and it runs the plan on a GPU, which this machine does not have either: ${reason}.`
        : `compute-sanitizer runs the plan on a GPU, and this machine has none: ${reason}.`;
    return `Nsight Compute profiles the plan on a GPU, and this machine has none: ${reason}.`;
  });
}

/** Why Check everything is off: null when some check can run; else why none can (the button's reason). */
export function checkEverythingOff(unavailable: Record<CheckName, string | null>): string | null {
  if (CHECK_NAMES.some((c) => unavailable[c] === null)) return null;
  const reasons = new Set(Object.values(unavailable));
  if (reasons.size === 1) return reasons.has(LOOKING) ? LOOKING : `No check could run here: ${[...reasons][0]}`;
  return `No check could run here: ${unavailable.run} Each check says why in the Check tab.`;
}
