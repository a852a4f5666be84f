import type { NoCountersReason } from './profile';

/** Why Nsight Compute gave no counters, from what it printed and how it ended. */
export function classifyNcuFailure(output: string, exitCode: number | null): { reason: NoCountersReason; detail: string } | null {
  if (/ERR_NVGPUCTRPERM/.test(output)) return { reason: 'no-permission', detail: 'ERR_NVGPUCTRPERM' };
  if (/No kernels were profiled/i.test(output)) return { reason: 'not-profiled', detail: lastLines(output) };
  if (exitCode !== 0 && /==ERROR==/.test(output)) return { reason: 'ncu-failed', detail: lastLines(output) };
  return null;
}

const lastLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => /==(ERROR|WARNING)==/.test(l))
    .slice(-6)
    .join('\n')
    .slice(0, 2000);

/** What the user reads: what happened, why, how to allow it, and that what needs no counters is still given. */
export function noCountersMessage(reason: NoCountersReason, detail: string, entry: string): { headline: string; body: string } {
  const still = 'Still given below: the kernel’s time by CUDA events and the bytes its buffers hold, as an effective bandwidth against the device’s peak.';
  switch (reason) {
    case 'turned-off':
      return { headline: 'No hardware counters: Nsight Compute was not asked (--no-counters)', body: still };
    case 'no-ncu':
      return {
        headline: 'No hardware counters: Nsight Compute (ncu) was not found',
        body: `ncu is looked for on PATH and in the CUDA toolkit’s bin folder. It ships with the CUDA toolkit (package nsight-compute); install it, or put its folder on PATH, and profile again. ${still}`,
      };
    case 'no-node':
      return { headline: 'No hardware counters: no usable Node.js to run the plan under Nsight Compute', body: `${detail} ${still}` };
    case 'no-permission':
      return {
        headline: 'No hardware counters: the driver does not let this user read them (ERR_NVGPUCTRPERM)',
        body:
          'NVIDIA’s driver restricts the GPU performance counters to administrators by default on many systems. To allow every user, as root on the machine with the GPU: ' +
          'write `options nvidia NVreg_RestrictProfilingToAdminUsers=0` to /etc/modprobe.d/nvidia-profiling.conf, rebuild the initramfs if your distribution needs it (update-initramfs -u), and reboot. ' +
          'Or profile as root. In a container the host’s setting applies, and the container needs the SYS_ADMIN capability (docker run --cap-add=SYS_ADMIN; in Kubernetes, securityContext.capabilities.add: ["SYS_ADMIN"]); ' +
          `some cloud instances do not expose counters at all. ${still}`,
      };
    case 'not-profiled':
      return {
        headline: `No hardware counters: ncu ran but profiled no launch of ${entry}`,
        body: `The plan ran under ncu and no launch matched the kernel. ${detail ? `ncu said:\n${detail}\n` : ''}${still}`,
      };
    case 'ncu-failed':
      return { headline: 'No hardware counters: ncu failed', body: `${detail ? `ncu said:\n${detail}\n` : ''}${still}` };
  }
}
