import type { DoctorCheck } from '../discovery';
import { compatDir, stubDir } from '../doctor/environment-rules';

/**
 * A `libcuda.so.1` in a folder of the program's LD_LIBRARY_PATH, as the dynamic loader finds it by name: before the
 * loader's cache, so the first one is what the program loads instead of the driver's own.
 */
export interface LibcudaOnPath {
  /** The folder as LD_LIBRARY_PATH names it: '' for an empty entry (the working folder); a relative one is from there. */
  dir: string;
  /** `<dir>/libcuda.so.1`, resolved against the program's working folder. */
  path: string;
  /** What it resolves to through its links. */
  resolved: string;
  /** The user-mode driver's version from the resolved file's name (`libcuda.so.580.159.04`, core/doctor/driver-rules.ts), or null when it has none. */
  version: string | null;
  /** The very file (device and inode) that the workbench loaded as the driver's libcuda: the driver's own, wherever. */
  driversOwn: boolean;
}

const major = (version: string) => Number(version.split('.')[0]);

/** How a folder of LD_LIBRARY_PATH is named in a sentence: an empty entry is easy to miss. */
export const shownDir = (dir: string): string => (dir === '' ? 'the empty entry (which means the working folder)' : dir);

/**
 * A libcuda on LD_LIBRARY_PATH that is not the kernel driver's own: it is loaded instead of the driver's, and a
 * user-mode driver of another version than the kernel module fails at cuInit (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)
 * or the program sees no GPU. The driver's own file anywhere on the path is right (a container's
 * /usr/local/nvidia/lib64, WSL's /usr/lib/wsl/lib), and so is a forward-compatibility package newer than the driver
 * (its purpose, on data-center GPUs; the doctor's compat rule says where it does not apply); one older than the driver
 * cannot run. A stub is the doctor's rule (core/doctor/environment-rules.ts). Judged against the driver's version as
 * NVML gives it: without that, nothing is said here (the environment's problems say NVML could not be read).
 */
export function libcudaOnPathCheck(found: readonly LibcudaOnPath[], driverVersion: string | null): DoctorCheck | null {
  const first = found[0];
  if (!first || first.driversOwn || driverVersion === null || first.version === driverVersion) return null;
  if ([first.dir, first.resolved].some(stubDir)) return null;
  const shadowed = found.slice(1).map((f) => f.path);
  const named = `${first.path}${first.resolved !== first.path ? ` (${first.resolved})` : ''}`;
  const after = shadowed.length ? ` It also hides ${shadowed.join(', ')}, later on the path.` : '';
  const remove = `Remove ${shownDir(first.dir)} from LD_LIBRARY_PATH`;
  if ([first.dir, first.resolved].some(compatDir)) {
    if (first.version === null || major(first.version) >= major(driverVersion)) return null;
    return {
      id: 'libcuda-compat-older',
      area: 'environment',
      status: 'fail',
      title: 'A forward-compatibility driver library older than the driver is first on LD_LIBRARY_PATH',
      detail: `The program loads ${named}, the compat package's libcuda ${first.version}, but the kernel driver is ${driverVersion}. A compat package only lets a newer CUDA run on an older driver; one older than the driver fails at CUDA's first call (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803).${after}`,
      remedy: `${remove}, or install a compat package at least as new as the driver (often the image was built for an older host).`,
    };
  }
  if (first.version !== null) {
    return {
      id: 'libcuda-on-path-mismatch',
      area: 'environment',
      status: 'fail',
      title: 'LD_LIBRARY_PATH loads a driver library of another version than the driver',
      detail: `The program loads ${named}, libcuda ${first.version}, before the driver's own, but the kernel driver is ${driverVersion}. A user-mode driver must match the kernel module: CUDA's first call fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803), or the program sees no GPU.${after}`,
      remedy: `${remove} (a libcuda copied into an environment or an image must be the driver's own), so the driver's libcuda.so.1 loads.`,
    };
  }
  return {
    id: 'libcuda-on-path-unknown',
    area: 'environment',
    status: 'warn',
    title: 'LD_LIBRARY_PATH loads a driver library of its own',
    detail: `The program loads ${named} before the driver's own: not the file the driver installed, and its name carries no version, so whether it is the kernel driver's ${driverVersion} is not known. One that is not fails at CUDA's first call (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803).${after}`,
    remedy: `Unless you put it there on purpose, ${remove.charAt(0).toLowerCase()}${remove.slice(1)}.`,
  };
}
