import type { DoctorCheck } from '../discovery';

/** The environment variables the doctor reads (an allow-list: nothing else is looked at or shown). */
export const DOCTOR_ENV_VARIABLES = [
  'CUDA_VISIBLE_DEVICES',
  'CUDA_DEVICE_ORDER',
  'CUDA_LAUNCH_BLOCKING',
  'CUDA_MODULE_LOADING',
  'PYTORCH_CUDA_ALLOC_CONF',
  'LD_LIBRARY_PATH',
] as const;

export type DoctorEnvironment = Partial<Record<(typeof DOCTOR_ENV_VARIABLES)[number], string>>;

export interface EnvironmentFacts {
  env: DoctorEnvironment;
  /** Where the driver library was loaded from, if it was. */
  libcudaPath: string | null;
  /** 'path' when libcudaPath is where a program would load it from (the first on its LD_LIBRARY_PATH), not where it was. */
  libcudaFrom?: 'loaded' | 'path';
}

/** A toolkit's link-time stubs folder, by a path's folder names. */
export const stubDir = (path: string): boolean => /(^|\/)stubs(\/|$)/.test(path);
/** A CUDA forward-compatibility package's folder, by a path's folder names: the toolkit's `compat`, conda-forge's `cuda-compat`. */
export const compatDir = (path: string): boolean => /(^|\/)[^/]*compat[^/]*(\/|$)/.test(path);

/** Checks on the environment a CUDA program inherits: each with its evidence and the fix (area 'environment'). */
export function environmentChecks(facts: EnvironmentFacts): DoctorCheck[] {
  const { env } = facts;
  const checks: DoctorCheck[] = [];
  const visible = env.CUDA_VISIBLE_DEVICES;
  if (visible !== undefined) {
    const hidesAll = visible.trim() === '' || /^(-1|NoDevFiles|none)$/i.test(visible.trim());
    checks.push({
      id: 'cuda-visible-devices',
      status: hidesAll ? 'fail' : 'warn',
      title: 'CUDA_VISIBLE_DEVICES is set',
      detail: hidesAll
        ? `CUDA_VISIBLE_DEVICES="${visible}" hides every GPU: CUDA programs see none (cudaErrorNoDevice, 100) while nvidia-smi shows them all.`
        : `CUDA_VISIBLE_DEVICES="${visible}": CUDA programs see only these devices, renumbered from 0, so device 0 in your program is "${visible.split(',')[0]!.trim()}" in nvidia-smi.`,
      remedy: hidesAll
        ? 'unset CUDA_VISIBLE_DEVICES (or list the GPUs to use, e.g. CUDA_VISIBLE_DEVICES=0).'
        : 'If this is left over from another job, unset it; otherwise remember the renumbering when you read nvidia-smi.',
    });
  }
  // CUDA_DEVICE_ORDER is judged against the devices themselves: device-order-rules.ts.
  if (env.CUDA_LAUNCH_BLOCKING !== undefined && env.CUDA_LAUNCH_BLOCKING !== '0')
    checks.push({
      id: 'cuda-launch-blocking',
      status: 'warn',
      title: 'CUDA_LAUNCH_BLOCKING is on',
      detail: `CUDA_LAUNCH_BLOCKING=${env.CUDA_LAUNCH_BLOCKING}: every kernel launch waits for the kernel to finish. Right for finding which launch faults; much slower for everything else.`,
      remedy: 'Unset it once the fault is found.',
    });
  if (env.CUDA_MODULE_LOADING !== undefined && env.CUDA_MODULE_LOADING.toUpperCase() !== 'LAZY')
    checks.push({
      id: 'cuda-module-loading',
      status: 'warn',
      title: `CUDA_MODULE_LOADING=${env.CUDA_MODULE_LOADING}`,
      detail:
        'Every kernel of every library is loaded when the context is created (lazy loading is the default since CUDA 11.7): slower start-up and more device memory held.',
      remedy: 'Unset it unless a tool needs eager loading.',
    });
  if (env.PYTORCH_CUDA_ALLOC_CONF !== undefined) {
    const settings = env.PYTORCH_CUDA_ALLOC_CONF.split(/[,;]/)
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = settings.filter(
      (s) =>
        !/^(expandable_segments|max_split_size_mb|garbage_collection_threshold|roundup_power2_divisions|backend|pinned_use_cuda_host_register|pinned_num_register_threads|release_lock_on_cudamalloc)\s*:/.test(
          s,
        ),
    );
    checks.push({
      id: 'pytorch-cuda-alloc-conf',
      status: unknown.length ? 'warn' : 'ok',
      title: 'PYTORCH_CUDA_ALLOC_CONF is set',
      detail: `PyTorch's caching allocator runs with ${settings.join(', ') || '(nothing)'}${unknown.length ? `; PyTorch does not know ${unknown.join(', ')}` : ''}.`,
      remedy: unknown.length ? 'Check the spelling against PyTorch\'s "Optimizing memory usage with PYTORCH_CUDA_ALLOC_CONF".' : null,
    });
  }
  const libraryPath = (env.LD_LIBRARY_PATH ?? '').split(/[:;]/).filter(Boolean); // ld.so reads both separators
  const loaded = facts.libcudaPath;
  const from =
    facts.libcudaFrom === 'path' ? `The program will load libcuda from ${loaded}, the first on its LD_LIBRARY_PATH` : `libcuda was loaded from ${loaded}`;
  if (loaded && stubDir(loaded))
    checks.push({
      id: 'libcuda-stub',
      status: 'fail',
      title: facts.libcudaFrom === 'path' ? 'The driver library the program will load is a build stub' : 'The driver library loaded is a build stub',
      detail:
        `${from}: the toolkit's link-time stub, which answers every call with CUDA_ERROR_STUB_LIBRARY (34). ${libraryPath.some(stubDir) ? 'LD_LIBRARY_PATH puts a stubs folder before the real driver.' : ''}`.trim(),
      remedy: "Remove the stubs folder from LD_LIBRARY_PATH (it is for linking only), so the driver's own libcuda.so.1 loads.",
    });
  else if (loaded && compatDir(loaded))
    checks.push({
      id: 'libcuda-compat',
      status: 'warn',
      title:
        facts.libcudaFrom === 'path' ? 'The program will load the forward-compatibility driver library' : 'The forward-compatibility driver library is in use',
      detail: `${from}: the CUDA compat package, which works only with data-center GPUs and a matching kernel driver; elsewhere calls fail with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804), or CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803) beside a kernel driver it does not match.`,
      remedy: 'If this GPU is not a data-center part, remove the compat folder from LD_LIBRARY_PATH.',
    });
  else if (libraryPath.some((p) => stubDir(p) || compatDir(p)))
    checks.push({
      id: 'ld-library-path',
      status: 'warn',
      title: 'LD_LIBRARY_PATH names a stubs or compat folder',
      detail: `LD_LIBRARY_PATH includes ${libraryPath.filter((p) => stubDir(p) || compatDir(p)).join(', ')}: a libcuda there is found before the driver's own by programs that load it by name.`,
      remedy: 'Remove it from LD_LIBRARY_PATH unless you mean to use it.',
    });
  return checks;
}
