import type { CounterPermission } from './kernel-profile/counter-permission';
import { counterAccess } from './kernel-profile/counter-permission';
import { environmentChecks, type DoctorEnvironment } from './doctor/environment-rules';
import { formatCudaVersion, plural } from './format';

export interface LibraryAttempt {
  candidate: string;
  source: string;
  error: string | null;
}

export interface LibraryReport {
  loaded: boolean;
  path: string | null;
  source: string | null;
  /** 1000*major + 10*minor, where the library reports one. */
  version?: number | null;
  attempts: LibraryAttempt[];
  missingRequired: string[];
  missingOptional: string[];
  supportedArchs?: number[];
}

export interface ToolReport {
  found: boolean;
  path: string | null;
  version: string | null;
  searched: string[];
}

export interface DiscoveryReport {
  addon: { loaded: boolean; path: string; error: string | null };
  cuda: LibraryReport;
  nvrtc: LibraryReport;
  nvml: LibraryReport;
  nvcc: ToolReport;
  /** Absent in reports made before it was looked for. */
  computeSanitizer?: ToolReport;
  /** Nsight Compute's CLI, and whether the driver lets this user read the counters it needs (absent in older reports). */
  ncu?: ToolReport;
  profilingCounters?: CounterPermission;
  /** The allow-listed CUDA variables of the host's environment (core/doctor/environment-rules.ts). */
  env?: DoctorEnvironment;
  platform: string;
}

/** 'not-run': the check could not be made (no driver, NVML silent, not supported here): never reported as passed. */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'not-run';

/** The groups the doctor's report is shown in, in this order. */
export const DOCTOR_AREAS = ['driver', 'compilers', 'environment', 'gpu', 'processes'] as const;
export type DoctorArea = (typeof DOCTOR_AREAS)[number];

export interface DoctorCheck {
  id: string;
  status: CheckStatus;
  title: string;
  /** The evidence: what was found, with its numbers. */
  detail: string;
  /** The fix, or null when there is nothing to do. */
  remedy: string | null;
  /** Absent in reports made before the doctor grouped its checks. */
  area?: DoctorArea;
  /** Where a missing library was looked for, one place per entry. */
  searched?: string[];
}

/** A user-facing problem: what happened, why, and what to do. */
export interface Problem {
  title: string;
  detail: string;
  remedy: string;
  searched?: string[];
}

/** "path (why it was tried): what went wrong", without dlerror's repetition of the path. */
export const searched = (library: LibraryReport): string[] =>
  library.attempts.map(
    (a) => `${a.candidate} (${a.source})${a.error ? `: ${a.error.startsWith(`${a.candidate}: `) ? a.error.slice(a.candidate.length + 2) : a.error}` : ''}`,
  );

export function driverMissingProblem(report: Pick<DiscoveryReport, 'addon' | 'cuda'>): Problem {
  if (!report.addon.loaded) {
    return {
      title: 'The native addon is not built',
      detail: `Could not load ${report.addon.path}: ${report.addon.error ?? 'unknown error'}`,
      remedy: 'Run `npm ci` (or `npm run build`) to build it; it needs g++ and cmake, not CUDA.',
    };
  }
  const tooOld = report.cuda.attempts.find((a) => a.error?.startsWith('too old'));
  return {
    title: tooOld ? 'The NVIDIA driver is too old' : 'No NVIDIA driver found',
    detail: tooOld
      ? `${tooOld.candidate} loaded but ${tooOld.error}.`
      : 'libcuda.so.1, which the NVIDIA driver installs, was not found in any of the places searched.',
    remedy: tooOld
      ? 'Install a driver of the 525 series or newer (CUDA 12+).'
      : 'Install the NVIDIA driver (it provides libcuda.so.1), or set GPU_WORKBENCH_CUDA_LIB to its full path. On a machine without an NVIDIA GPU you can still compile and validate against a saved device profile.',
    searched: searched(report.cuda),
  };
}

export function doctorChecks(report: DiscoveryReport, deviceCount: number | null, deviceError: string | null): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  checks.push(
    report.addon.loaded
      ? { id: 'addon', status: 'ok', title: 'Native addon', detail: report.addon.path, remedy: null }
      : { id: 'addon', status: 'fail', title: 'Native addon', detail: report.addon.error ?? 'not loaded', remedy: 'Run `npm ci` or `npm run build`.' },
  );
  if (report.cuda.loaded) {
    const version = report.cuda.version ? ` — supports CUDA ${formatCudaVersion(report.cuda.version)}` : '';
    checks.push({ id: 'driver', status: 'ok', title: 'CUDA driver', detail: `${report.cuda.path}${version}`, remedy: null });
  } else {
    const problem = driverMissingProblem(report);
    checks.push({ id: 'driver', status: 'fail', title: 'CUDA driver', detail: problem.title, remedy: problem.remedy, searched: problem.searched ?? [] });
  }
  if (report.cuda.loaded) {
    if (deviceError)
      checks.push({
        id: 'devices',
        status: 'fail',
        title: 'CUDA devices',
        detail: deviceError,
        remedy: 'Check `nvidia-smi`; a driver/kernel-module mismatch or a missing /dev/nvidia* is the usual cause.',
      });
    else if (deviceCount === 0)
      checks.push({
        id: 'devices',
        status: 'fail',
        title: 'CUDA devices',
        detail: 'The driver loaded but reports no device',
        remedy: 'Check CUDA_VISIBLE_DEVICES and `nvidia-smi`.',
      });
    else if (deviceCount !== null) checks.push({ id: 'devices', status: 'ok', title: 'CUDA devices', detail: plural(deviceCount, 'device'), remedy: null });
  }
  if (report.nvrtc.loaded) {
    const v = report.nvrtc.version;
    checks.push({
      id: 'nvrtc',
      status: 'ok',
      title: 'NVRTC (run-time compiler)',
      detail: `${report.nvrtc.path}${v ? ` — CUDA ${formatCudaVersion(v)}` : ''}`,
      remedy: null,
    });
  } else {
    checks.push({
      id: 'nvrtc',
      status: report.nvcc.found ? 'warn' : 'fail',
      title: 'NVRTC (run-time compiler)',
      detail: 'not found',
      searched: searched(report.nvrtc),
      remedy: report.nvcc.found
        ? `Compiling with nvcc (${report.nvcc.path}) instead. Install the CUDA toolkit or the nvidia-cuda-nvrtc wheel to use NVRTC.`
        : 'Install the CUDA toolkit (it provides libnvrtc.so), `pip install nvidia-cuda-nvrtc`, or set GPU_WORKBENCH_NVRTC_LIB.',
    });
  }
  checks.push(
    report.nvcc.found
      ? { id: 'nvcc', status: 'ok', title: 'nvcc', detail: `${report.nvcc.path}${report.nvcc.version ? ` — ${report.nvcc.version}` : ''}`, remedy: null }
      : {
          id: 'nvcc',
          status: 'warn',
          title: 'nvcc',
          detail: 'not found',
          searched: report.nvcc.searched,
          remedy: 'Optional: the CUDA toolkit provides it, as a second compiler backend.',
        },
  );
  if (report.computeSanitizer)
    checks.push(
      report.computeSanitizer.found
        ? {
            id: 'compute-sanitizer',
            status: 'ok',
            title: 'compute-sanitizer',
            detail: `${report.computeSanitizer.path}${report.computeSanitizer.version ? ` — ${report.computeSanitizer.version}` : ''}`,
            remedy: null,
          }
        : {
            id: 'compute-sanitizer',
            status: 'warn',
            title: 'compute-sanitizer',
            detail: 'not found',
            searched: report.computeSanitizer.searched,
            remedy:
              "It names the faulting line, thread and buffer (memcheck, racecheck, initcheck, synccheck). It ships with the CUDA toolkit (bin/compute-sanitizer); on Debian or Ubuntu with NVIDIA's repository: apt install cuda-sanitizer-13-0 (your toolkit's version). Or set GPU_WORKBENCH_COMPUTE_SANITIZER to its path.",
          },
    );
  checks.push(...profilerChecks(report));
  if (report.env) checks.push(...environmentChecks({ env: report.env, libcudaPath: report.cuda.loaded ? report.cuda.path : null }));
  checks.push(
    report.nvml.loaded
      ? { id: 'nvml', status: 'ok', title: 'NVML (memory monitoring)', detail: report.nvml.path ?? '', remedy: null }
      : {
          id: 'nvml',
          status: 'warn',
          title: 'NVML (memory monitoring)',
          detail: 'not found',
          searched: searched(report.nvml),
          remedy: 'It ships with the NVIDIA driver (libnvidia-ml.so.1); without it there is no per-process GPU memory.',
        },
  );
  return checks.map((c) => ({ ...c, area: c.area ?? LIBRARY_CHECK_AREAS[c.id] ?? 'environment' }));
}

const LIBRARY_CHECK_AREAS: Record<string, DoctorArea> = {
  addon: 'driver',
  driver: 'driver',
  devices: 'driver',
  nvml: 'driver',
  nvrtc: 'compilers',
  nvcc: 'compilers',
  'compute-sanitizer': 'compilers',
};

/** Nsight Compute, and the driver's permission to read the counters a profile needs. */
function profilerChecks(report: DiscoveryReport): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  if (report.ncu)
    checks.push(
      report.ncu.found
        ? {
            id: 'ncu',
            status: 'ok',
            title: 'Nsight Compute (ncu)',
            detail: `${report.ncu.path}${report.ncu.version ? ` — ${report.ncu.version}` : ''}`,
            remedy: null,
          }
        : {
            id: 'ncu',
            status: 'warn',
            title: 'Nsight Compute (ncu)',
            detail: 'not found: Profile gives the kernel\u2019s time and effective bandwidth only',
            searched: report.ncu.searched,
            remedy: 'It ships with the CUDA toolkit (bin/ncu; package nsight-compute). Install it, put it on PATH, or set GPU_WORKBENCH_NCU to its path.',
          },
    );
  const permission = report.profilingCounters;
  if (permission) {
    const access = counterAccess(permission);
    const title = 'GPU performance counters';
    if (access === 'unknown')
      checks.push({
        id: 'profiling-counters',
        status: 'not-run',
        title,
        detail: `the driver did not say whether they are restricted (${permission.source})`,
        remedy: null,
      });
    else if (access === 'allowed')
      checks.push({
        id: 'profiling-counters',
        status: 'ok',
        title,
        detail: permission.restrictedToAdmins
          ? 'restricted to administrators, and this user is one'
          : `open to every user (RmProfilingAdminOnly: 0 in ${permission.source})`,
        remedy: null,
      });
    else
      checks.push({
        id: 'profiling-counters',
        status: 'warn',
        title,
        detail: `restricted to administrators (RmProfilingAdminOnly: 1 in ${permission.source}): ncu fails with ERR_NVGPUCTRPERM for this user`,
        remedy:
          'As root: write `options nvidia NVreg_RestrictProfilingToAdminUsers=0` to /etc/modprobe.d/nvidia-profiling.conf, rebuild the initramfs if your distribution needs it (update-initramfs -u), and reboot. In a container the host\u2019s setting applies, and the container needs --cap-add=SYS_ADMIN.',
      });
  }
  return checks;
}
