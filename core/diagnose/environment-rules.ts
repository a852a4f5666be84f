import type { DoctorCheck } from '../discovery';
import { DOCTOR_ENV_VARIABLES, environmentChecks, type DoctorEnvironment } from '../doctor/environment-rules';
import type { EnvironmentEvidence } from './evidence';
import { libcudaOnPathCheck, type LibcudaOnPath } from './libcuda-rules';

/** What the program will inherit, and what the machine has: the facts the Before step judges. */
export interface ProgramEnvironmentFacts {
  /** The program's environment (the host's with the user's changes), only the variables the doctor reads. */
  env: DoctorEnvironment;
  gpus: EnvironmentEvidence['gpus'];
  driver: EnvironmentEvidence['driver'];
  python: EnvironmentEvidence['python'];
  /** Each libcuda.so.1 the program's LD_LIBRARY_PATH holds, in its order (main/diagnose/libcuda-on-path.ts); none read: empty. */
  libcudaOnPath?: readonly LibcudaOnPath[];
}

export const pickDoctorEnvironment = (env: Record<string, string | undefined>): DoctorEnvironment =>
  Object.fromEntries(DOCTOR_ENV_VARIABLES.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]!]])));

const version = (v: string | null | undefined): [number, number] | null => {
  const m = /^(\d+)(?:\.(\d+))?/.exec(v ?? '');
  return m ? [Number(m[1]), Number(m[2] ?? 0)] : null;
};

/** CUDA_VISIBLE_DEVICES against the GPUs that exist: CUDA stops reading the list at the first entry that names none. */
function visibleDevicesCheck(visible: string | undefined, gpus: ProgramEnvironmentFacts['gpus']): DoctorCheck | null {
  if (visible === undefined || gpus === null || visible.trim() === '') return null;
  const entries = visible.split(',').map((s) => s.trim());
  const exists = (entry: string) => (/^\d+$/.test(entry) ? Number(entry) < gpus.length : /^(GPU|MIG)-/i.test(entry) ? null : false);
  const firstMissing = entries.findIndex((entry) => exists(entry) === false);
  if (firstMissing < 0) return null;
  const have = gpus.length ? `${gpus.length} GPU${gpus.length === 1 ? '' : 's'} (${gpus.map((g) => `${g.index}: ${g.name}`).join(', ')})` : 'no GPU';
  const none = firstMissing === 0;
  return {
    id: 'cuda-visible-devices-missing',
    area: 'environment',
    status: none ? 'fail' : 'warn',
    title: none ? 'CUDA_VISIBLE_DEVICES hides every GPU' : 'CUDA_VISIBLE_DEVICES names a GPU that does not exist',
    detail: `CUDA_VISIBLE_DEVICES="${visible}" names GPU ${entries[firstMissing]}, but this machine has ${have}; CUDA ignores the list from that entry on, so the program sees ${none ? 'no GPU at all' : `only ${entries.slice(0, firstMissing).join(', ')}`}.`,
    remedy: `Unset CUDA_VISIBLE_DEVICES, or list GPUs that exist here (${gpus.length ? `0 to ${gpus.length - 1}` : 'none'}): it is often left over from a job script written for another machine.`,
  };
}

/** PyTorch's and CuPy's CUDA against the driver's: a newer major version cannot run; a newer minor mostly can. */
function runtimeChecks(python: ProgramEnvironmentFacts['python'], driver: ProgramEnvironmentFacts['driver']): DoctorCheck[] {
  const driverCuda = version(driver?.cuda);
  if (!python || !driverCuda) return [];
  const built = [
    { name: 'PyTorch', v: python.torch?.cuda ?? null, version: python.torch?.version },
    { name: 'CuPy', v: python.cupy?.cuda ?? null, version: python.cupy?.version },
  ];
  return built.flatMap(({ name, v, version: libVersion }) => {
    const runtime = version(v);
    if (!runtime) return [];
    const [major, minor] = runtime;
    const newerMajor = major > driverCuda[0];
    const newerMinor = major === driverCuda[0] && minor > driverCuda[1] && v!.includes('.');
    if (!newerMajor && !newerMinor) return [];
    return [
      {
        id: `runtime-newer-than-driver-${name.toLowerCase()}`,
        area: 'driver',
        status: newerMajor ? 'fail' : 'warn',
        title: `${name} was built for a newer CUDA than the driver runs`,
        detail: `${name} ${libVersion ?? ''} was built with CUDA ${v}; the driver (${driver?.version ?? 'unknown'}) runs CUDA up to ${driver?.cuda}. ${newerMajor ? 'It cannot start CUDA (cudaErrorInsufficientDriver, 35).' : 'Minor-version compatibility lets most of it run, but kernels shipped only as PTX will not load.'}`,
        remedy: `Update the NVIDIA driver, or install a ${name} build for CUDA ${driver?.cuda} or older.`,
      } satisfies DoctorCheck,
    ];
  });
}

/** The Before step: the environment as the program will see it, judged. Only what warns or fails is kept. */
export function programEnvironmentChecks(facts: ProgramEnvironmentFacts): DoctorCheck[] {
  const visible = visibleDevicesCheck(facts.env.CUDA_VISIBLE_DEVICES, facts.gpus);
  const onPath = facts.libcudaOnPath ?? [];
  // The first libcuda.so.1 on the path is the one the program loads: a stub or compat one there is the doctor's finding.
  const doctor = environmentChecks({ env: facts.env, libcudaPath: onPath[0]?.path ?? null, libcudaFrom: 'path' }).filter(
    (c) => !(visible && c.id === 'cuda-visible-devices'),
  );
  const copy = libcudaOnPathCheck(onPath, facts.driver?.version ?? null);
  return [...(visible ? [visible] : []), ...doctor, ...(copy ? [copy] : []), ...runtimeChecks(facts.python, facts.driver)].filter(
    (c) => c.status === 'warn' || c.status === 'fail',
  );
}
