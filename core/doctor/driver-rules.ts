import type { DoctorCheck } from '../discovery';
import { formatCudaVersion } from '../format';
import type { DoctorFacts } from './facts';
import { NVML_LIB_RM_VERSION_MISMATCH, NVML_NO_PERMISSION, nvmlReturnName } from './nvml-codes';

/**
 * The driver's own version and whether NVML answers. NVML must match the kernel module (else
 * NVML_ERROR_LIB_RM_VERSION_MISMATCH), so its release is the installed driver's; libcuda is whichever copy the
 * loader found first, and its file name carries its release (libcuda.so.580.159.04). They differ when a
 * forward-compatibility libcuda (cuda-compat) or a stray older copy comes first. NVML failing while the driver is
 * installed is the classic "driver updated, not rebooted" state.
 */

const area = 'driver' as const;

function nvmlAnswerCheck(facts: DoctorFacts): DoctorCheck | null {
  const c = facts.nvml;
  const base = { id: 'nvml-answer', area, title: 'NVML answers' };
  if (c.status === 'ok' || c.status === 'skipped') return null;
  if (c.status === 'timed-out')
    return {
      ...base,
      status: 'fail',
      detail: `${c.detail} NVML talks to the kernel driver without a CUDA context: a call that hangs means the GPU or the driver is wedged.`,
      remedy: 'See the kernel log for Xid errors (sudo dmesg | grep -i xid); reset the GPU (sudo nvidia-smi -r -i N) or reboot.',
    };
  const code = c.error?.code ?? null;
  return {
    ...base,
    status: 'fail',
    detail: `${c.detail}${code !== null ? ` (${nvmlReturnName(code)})` : ''}.`,
    remedy:
      code === NVML_LIB_RM_VERSION_MISMATCH
        ? "The driver's libraries and its kernel module are different versions — usually a driver update without a reboot: reboot (or reload the nvidia kernel modules)."
        : code === NVML_NO_PERMISSION
          ? 'This user may not open the GPU devices (/dev/nvidia*): add it to the group that owns them, or, in a container, pass the GPUs in (--gpus).'
          : 'Check nvidia-smi: it uses the same library and says the same thing in more words.',
  };
}

/**
 * "…/libcuda.so.580.159.04" → "580.159.04": the driver release a libcuda file (a path or a bare name) belongs to. A
 * driver's major version has three digits or more: Jetson's `libcuda.so.1.1` names no release.
 */
export function libcudaRelease(realPath: string | null): string | null {
  return /(?:^|\/)libcuda\.so\.(\d{3,}\.\d+(?:\.\d+)?)$/.exec(realPath ?? '')?.[1] ?? null;
}

function driverVersionCheck(facts: DoctorFacts): DoctorCheck | null {
  const { cuda } = facts.discovery;
  const nvml = facts.nvml.status === 'ok' ? facts.nvml.value : null;
  const base = { id: 'driver-version', area, title: 'Driver version' };
  const installed = nvml?.driverVersion.ok ? nvml.driverVersion.value : null;
  if (!cuda.loaded) {
    if (!installed) return null; // the 'driver' check says what was searched
    return {
      ...base,
      status: 'fail',
      detail: `NVML reports driver ${installed} installed, but its CUDA library (libcuda.so.1) could not be loaded.`,
      remedy:
        'In a container, ask for the compute capability (NVIDIA_DRIVER_CAPABILITIES=compute,utility, or --gpus all): without it only NVML is mounted. Elsewhere, check that libcuda.so.1 is on the loader path (ldconfig -p | grep libcuda), or set GPU_WORKBENCH_CUDA_LIB.',
    };
  }
  const realPath = facts.installations.status === 'ok' ? facts.installations.value.libcudaRealPath : null;
  const release = libcudaRelease(realPath);
  const supports = cuda.version ? `supports CUDA ${formatCudaVersion(cuda.version)}` : 'did not say which CUDA it supports';
  const said = `libcuda ${cuda.path}${realPath && realPath !== cuda.path ? ` (${realPath})` : ''} ${supports}`;
  if (!nvml)
    return {
      ...base,
      status: 'not-run',
      detail: `${said}. The installed driver's release could not be read to compare: ${facts.nvml.status === 'ok' ? '' : facts.nvml.detail}`,
      remedy: null,
    };
  if (!installed) return { ...base, status: 'not-run', detail: `${said}. NVML did not say the driver's release.`, remedy: null };
  if (!release || release === installed) return { ...base, status: 'ok', detail: `Driver ${installed}; ${said}.`, remedy: null };
  const newer = isNewerRelease(release, installed);
  if (newer === null)
    return {
      ...base,
      status: 'warn',
      detail: `The installed driver is ${installed}, but the libcuda in use is from ${release}: a user-mode driver that is not the kernel driver's may fail with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803). ${said}.`,
      remedy: `Unless ${realPath} is a forward-compatibility package you meant to use, remove it from the loader path (LD_LIBRARY_PATH, ldconfig).`,
    };
  return {
    ...base,
    status: 'warn',
    detail: newer
      ? `The installed driver is ${installed}, but the libcuda in use is from ${release}: a forward-compatibility libcuda (cuda-compat). It works only on data-center GPUs with a supported driver branch; elsewhere calls fail with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804) or CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803). ${said}.`
      : `The installed driver is ${installed}, but the libcuda in use is from ${release}, an older copy found first on the loader path; it may fail with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803). ${said}.`,
    remedy: newer
      ? 'If this is not a data-center GPU, remove the compat folder from LD_LIBRARY_PATH so the driver’s own libcuda loads.'
      : `Remove the older copy (${realPath}) from the loader path (LD_LIBRARY_PATH, ldconfig), so the installed driver's own libcuda loads.`,
  };
}

export function driverChecks(facts: DoctorFacts): DoctorCheck[] {
  return [driverVersionCheck(facts), nvmlAnswerCheck(facts)].filter((c): c is DoctorCheck => c !== null);
}

/**
 * "580.159.04" against "575.57.08", part by part as numbers (not ICU's collator: its first use costs tens of ms);
 * null when either has a part that is not a number, so neither is called newer.
 */
export function isNewerRelease(release: string, than: string): boolean | null {
  const a = release.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : NaN));
  const b = than.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : NaN));
  if ([...a, ...b].some(Number.isNaN)) return null;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d) return d > 0;
  }
  return false;
}
