import type { DoctorCheck } from '../discovery';
import { compatDir, stubDir } from '../doctor/environment-rules';

/**
 * A `libcuda.so.1` in a folder of the program's LD_LIBRARY_PATH, as the dynamic loader finds it by name: before the
 * loader's cache, so the first one is what the program loads instead of the driver's own.
 */
export interface LibcudaOnPath {
  /** The folder as LD_LIBRARY_PATH names it (`.` for an empty entry); a relative one is the program's folder's. */
  dir: string;
  /** `<dir>/libcuda.so.1`. */
  path: string;
  /** What it resolves to through its links. */
  resolved: string;
  /** The user-mode driver's version from the resolved file's name (`libcuda.so.580.159.04`), or null when it has none. */
  version: string | null;
}

/** The version a driver library's file name carries: `libcuda.so.580.159.04` → `580.159.04`. */
export function libcudaVersionOf(fileName: string): string | null {
  return /^libcuda\.so\.(\d+\.\d+(?:\.\d+)?)$/.exec(fileName)?.[1] ?? null;
}

/**
 * A libcuda on LD_LIBRARY_PATH that is not the kernel driver's own: it is loaded instead of the driver's, and a
 * user-mode driver of another version than the kernel module fails at cuInit (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)
 * or the program sees no GPU. A stub or a compat package is the doctor's rule (core/doctor/environment-rules.ts, by
 * folder); this one is for any other copy: a conda or pip environment's, an image's built on another host, a driver
 * unpacked by hand. Judged against the driver's version as NVML gives it: without that, nothing is said here (the
 * environment's problems say NVML could not be read), since the driver's own folder on the path is common and right.
 */
export function libcudaOnPathCheck(found: readonly LibcudaOnPath[], driverVersion: string | null): DoctorCheck | null {
  const first = found[0];
  if (!first || driverVersion === null || first.version === driverVersion) return null;
  if ([first.dir, first.resolved].some((p) => stubDir(p) || compatDir(p))) return null;
  const shadowed = found.slice(1).map((f) => f.path);
  const named = `${first.path}${first.resolved !== first.path ? ` (${first.resolved})` : ''}`;
  const after = shadowed.length ? ` It also hides ${shadowed.join(', ')}, later on the path.` : '';
  if (first.version !== null) {
    return {
      id: 'libcuda-on-path-mismatch',
      area: 'environment',
      status: 'fail',
      title: 'LD_LIBRARY_PATH loads a driver library of another version than the driver',
      detail: `The program loads ${named}, libcuda ${first.version}, before the driver's own, but the kernel driver is ${driverVersion}. A user-mode driver must match the kernel module exactly: CUDA's first call fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803), or the program sees no GPU.${after}`,
      remedy: `Remove ${first.dir} from LD_LIBRARY_PATH (a libcuda copied into an environment or an image must be the driver's own), so the driver's libcuda.so.1 loads.`,
    };
  }
  return {
    id: 'libcuda-on-path-unknown',
    area: 'environment',
    status: 'warn',
    title: 'LD_LIBRARY_PATH loads a driver library of its own',
    detail: `The program loads ${named} before the driver's own. A driver's libcuda is named for its version, and this one is not, so whether it is the kernel driver's ${driverVersion} is not known; one that is not fails at CUDA's first call (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803).${after}`,
    remedy: `Unless you put it there on purpose, remove ${first.dir} from LD_LIBRARY_PATH.`,
  };
}
