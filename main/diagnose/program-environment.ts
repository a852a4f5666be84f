import type { AbortLike } from '../../core/api/channels';
import type { EnvironmentEvidence } from '../../core/diagnose/evidence';
import { pickDoctorEnvironment, programEnvironmentChecks } from '../../core/diagnose/environment-rules';
import { formatCudaVersion } from '../../core/format';
import { ProcReader } from '../memory/proc-reader';
import type { NvmlSource } from '../memory/nvml-source';
import { discoverLibraries } from '../services/discovery-service';
import PROBE from './python/probe.py';
import { runProgramOnce } from './program-process';
import { pythonCommandOf } from '../../core/diagnose/python-command';
import { within } from './time-bound';
import { LIBCUDA_LOOKUP_MS, libcudaOnPath } from './libcuda-on-path';

/** How long NVML may take to open and answer before the diagnosis goes on without it. */
const NVML_WAIT_MS = 10_000;
/** How long the Python probe may take (it imports nothing heavy). */
const PROBE_TIMEOUT_MS = 15_000;

export const isPythonProgram = (argv: string[]): boolean => pythonCommandOf(argv) !== null;

interface ProbeAnswer {
  python: string;
  packages: { torch?: { version: string | null; cuda: string | null }; cupy?: { version: string | null; cuda: string | null } };
}

const stringOrNull = (v: unknown): string | null => (typeof v === 'string' && v.length < 100 ? v : null);
const pkg = (v: unknown) =>
  v && typeof v === 'object'
    ? { version: stringOrNull((v as Record<string, unknown>).version), cuda: stringOrNull((v as Record<string, unknown>).cuda) }
    : null;

/** The probe's answer is the program's interpreter's output: data, checked field by field. */
export function parseProbe(text: string): ProbeAnswer | null {
  const line = text.trim().split('\n').pop() ?? '';
  try {
    const value = JSON.parse(line.slice(0, 10_000)) as Record<string, unknown>;
    const packages = (value.packages ?? {}) as Record<string, unknown>;
    const python = stringOrNull(value.python);
    if (!python) return null;
    return { python, packages: { torch: pkg(packages.torch) ?? undefined, cupy: pkg(packages.cupy) ?? undefined } };
  } catch {
    return null;
  }
}

/** A check that could not be made is said, so that "nothing stands in the way" is never said in its place. */
function uncompared(python: EnvironmentEvidence['python'], driver: EnvironmentEvidence['driver']): string[] {
  const built = [python?.torch?.cuda ? 'PyTorch' : null, python?.cupy?.cuda ? 'CuPy' : null].filter(Boolean);
  if (!built.length || driver?.cuda) return [];
  return [`The driver's CUDA version is not known here (its libcuda was not loaded), so ${built.join(' and ')}'s CUDA was not compared with it.`];
}

/**
 * The Before step: the environment as the program will see it — the GPUs NVML lists and what holds them now, the
 * driver, PyTorch's and CuPy's CUDA (read without importing them), the libcuda its LD_LIBRARY_PATH would load
 * instead of the driver's own, and the program's CUDA variables, judged. What
 * NVML says comes first (it must be read before the program starts: what holds the GPUs then is not the program);
 * the Python probe (a Python start, tens to hundreds of milliseconds) answers meanwhile, while the program runs,
 * as `python`: the same environment with its facts added.
 */
export async function gatherProgramEnvironment(options: {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** NVML, opening meanwhile. */
  nvml: Promise<{ source: NvmlSource | null; problem: string | null }>;
  deadlineMs: number;
  signal?: AbortLike;
}): Promise<{ environment: EnvironmentEvidence; python: Promise<EnvironmentEvidence> | null }> {
  const problems: string[] = [];
  // The probe starts Python (slow) while NVML is read: the two do not wait on each other.
  const pythonCommand = pythonCommandOf(options.argv);
  const probe = pythonCommand
    ? runProgramOnce({
        argv: [...pythonCommand, '-c', PROBE],
        cwd: options.cwd,
        env: options.env,
        timeoutMs: Math.min(PROBE_TIMEOUT_MS, Math.max(0, options.deadlineMs - performance.now())),
        signal: options.signal,
      })
    : null;
  const libraries = discoverLibraries(undefined, 'monitor');
  // Off the event loop, beside NVML: which libcuda the program's LD_LIBRARY_PATH would load.
  const libcudaLimitMs = Math.min(LIBCUDA_LOOKUP_MS, options.deadlineMs - performance.now());
  const lookingForLibcuda = libcudaOnPath(options.env['LD_LIBRARY_PATH'], options.cwd, libraries.cuda.loaded ? libraries.cuda.path : null, libcudaLimitMs);
  const driverCuda = libraries.cuda.version ? formatCudaVersion(libraries.cuda.version) : null;
  let gpus: EnvironmentEvidence['gpus'] = null;
  const processes: EnvironmentEvidence['processes'] = [];
  const left = () => Math.min(NVML_WAIT_MS, options.deadlineMs - performance.now());
  const { source: nvml, problem: nvmlProblem } = await within(options.nvml, left(), () => ({
    source: null,
    problem: `NVML did not answer within ${NVML_WAIT_MS / 1000} s (a wedged driver, or a GPU that fell off the bus: check nvidia-smi and dmesg for Xid errors): the GPUs are not watched.`,
  }));
  if (nvml) {
    const taken = await within(
      nvml.take(true).catch((error: unknown) => {
        problems.push(`NVML could not be read: ${error instanceof Error ? error.message : String(error)}`);
        return null;
      }),
      left(),
      () => {
        problems.push(`NVML did not answer within ${NVML_WAIT_MS / 1000} s: the GPUs' memory and processes were not read.`);
        return null;
      },
    );
    if (taken === null && !problems.length) problems.push('NVML was busy with another call: the processes already on the GPUs were not listed.');
    const used = new Map(taken?.sample.devices.map((d) => [d.index, d.usedBytes]) ?? []);
    gpus = nvml.devices.map((d) => ({ index: d.index, name: d.name, totalBytes: d.totalBytes, usedBytes: used.get(d.index) ?? null }));
    const proc = new ProcReader();
    const listed = taken?.sample.processes ?? [];
    const commands = await Promise.all(listed.map((p) => proc.cmdline(p.pid)));
    listed.forEach((p, i) => processes.push({ pid: p.pid, device: p.device, usedBytes: p.usedBytes, command: commands[i] ?? null }));
  } else problems.push(nvmlProblem ?? 'NVML is not available: the GPUs and what holds them were not looked at.');

  const driver = { version: nvml?.driverVersion ?? null, cuda: driverCuda };
  const onPath = await lookingForLibcuda;
  if (onPath === null)
    problems.push(
      libcudaLimitMs < LIBCUDA_LOOKUP_MS
        ? "The diagnosis's time budget ran out before the folders on the program's LD_LIBRARY_PATH were looked in: the libcuda it would load was not looked for."
        : `The folders on the program's LD_LIBRARY_PATH did not answer within ${LIBCUDA_LOOKUP_MS / 1000} s (a hung network mount?): the libcuda it would load was not looked for.`,
    );
  const judged = (python: EnvironmentEvidence['python'], more: string[]): EnvironmentEvidence => ({
    checks: programEnvironmentChecks({ env: pickDoctorEnvironment(options.env), gpus, driver, python, libcudaOnPath: onPath ?? [] }),
    gpus,
    driver,
    python,
    processes,
    problems: [...problems, ...more, ...uncompared(python, driver)],
  });
  return { environment: judged(null, []), python: probe ? probe.then((done) => withProbe(done, judged)) : null };
}

/** The environment again once the probe has answered: PyTorch's and CuPy's CUDA judged against the driver. */
function withProbe(
  done: Awaited<ReturnType<typeof runProgramOnce>>,
  judged: (python: EnvironmentEvidence['python'], more: string[]) => EnvironmentEvidence,
): EnvironmentEvidence {
  const answer = done.exit.code === 0 ? parseProbe(done.output) : null;
  if (answer) return judged({ version: answer.python, torch: answer.packages.torch ?? null, cupy: answer.packages.cupy ?? null }, []);
  const why = done.spawnError ?? `it ${done.exit.code === null ? 'was stopped' : `exited with ${done.exit.code}`}`;
  return judged(null, [`The program's Python could not be asked which PyTorch and CuPy it loads (${why}).`]);
}
