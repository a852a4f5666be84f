import type { DoctorCheck } from '../discovery';
import type { DeviceAssert, OomBreakdown, TraceFrame } from '../explain/explain-paste';
import type { FindingGroup } from '../sanitizer/findings';
import type { SanitizeVerdict } from '../sanitizer/sanitize-report';

/**
 * The runs a diagnosis can make of a program, each a step: the program as it is, and the re-runs the evidence
 * can call for (with CUDA_LAUNCH_BLOCKING=1, under a compute-sanitizer tool, with Python's fault handler, with
 * PyTorch's allocator history recorded).
 */
export const RUN_KINDS = ['as-is', 'blocking', 'memcheck', 'racecheck', 'initcheck', 'fault-handler', 'allocator-history'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

export const SANITIZER_RUNS = ['memcheck', 'racecheck', 'initcheck'] as const satisfies readonly RunKind[];
export type SanitizerRunKind = (typeof SANITIZER_RUNS)[number];
export const isSanitizerRun = (k: RunKind): k is SanitizerRunKind => (SANITIZER_RUNS as readonly RunKind[]).includes(k);

/** How a run ended, as the process said it. */
export interface ExitStatus {
  code: number | null;
  signal: string | null;
  /** Stopped because the diagnosis's time budget ran out. */
  outOfBudget: boolean;
  /** Stopped because the user cancelled. */
  cancelled: boolean;
}

/** What a run's output and exit say went wrong, from the explain engine and the traceback. */
export type FailureCategory =
  | 'clean' // exit 0, no CUDA error printed
  | 'kernel-fault' // a kernel failed while running: sticky, reported late (700, 710, 716, 719…)
  | 'out-of-memory'
  | 'host-crash' // killed by SIGSEGV, SIGABRT, SIGBUS, SIGILL or SIGFPE
  | 'cuda-error' // a CUDA error that is not a fault: no device, driver too old, invalid device ordinal…
  | 'python-error' // an exception that is not a CUDA one (a tensor on the wrong device, a bad shape…)
  | 'exit-code' // a non-zero exit with nothing recognised in the output
  | 'stopped'; // the budget ran out, or the user cancelled

export interface FailureReading {
  category: FailureCategory;
  /** One line: the error's name and code, the exception, or the exit. */
  title: string;
  error: { name: string; code: number; runtimeName: string | null } | null;
  framework: 'pytorch' | 'cupy' | null;
  /** PyTorch's traceback shows CUDA_LAUNCH_BLOCKING=1 was in effect (true), was not (false), or cannot tell (null). */
  launchBlocking: boolean | null;
  /** The innermost frame in the program's own code (not the libraries'), from the traceback or the fault handler. */
  userFrame: TraceFrame | null;
  /** The library call under it that raised, where the traceback shows one. */
  innermost: TraceFrame | null;
  /** The exception the traceback ends with. */
  exception: { type: string; message: string } | null;
  asserts: DeviceAssert[];
  oom: OomBreakdown | null;
  /** The explain engine's sentences for this error, built from its own numbers. */
  specifics: string[];
  /** "exited with code 1", "killed by SIGSEGV (a segmentation fault)". */
  exitText: string;
}

/** A compute-sanitizer run's findings, as the diagnosis reads them. */
export interface SanitizerEvidence {
  verdict: SanitizeVerdict;
  headline: string;
  groups: FindingGroup[];
  /** Why the tool could not run (not installed, failed to start), when it could not. */
  unavailable: string | null;
  /** The Python line that launched a group's kernel where the tool recorded no host stack (a CuPy RawKernel called once). */
  launchLines: { key: string; file: string; line: number }[];
}

/** What the allocator history said at the out-of-memory, where the shim recorded one. */
export interface OomPicture {
  /** The snapshot's file (a private temporary folder's, until it is exported). */
  snapshotPath: string | null;
  requestedBytes: number | null;
  /** What PyTorch's allocator held at the failure, by the user's line. */
  aliveByLine: { frame: TraceFrame | null; bytes: number; count: number }[];
  allocatedBytes: number | null;
  reservedBytes: number | null;
  /** Free memory in the allocator's own segments: the largest single piece, and in all. */
  largestFreeInCacheBytes: number | null;
  freeInCacheBytes: number | null;
  /** Why there is no picture, when there is none (the shim could not arm, no OOM happened on the re-run…). */
  missing: string | null;
}

/** One run of the program, with what it found. */
export interface RunEvidence {
  kind: RunKind;
  argv: string[];
  /** The variables this run set or changed, against the program's own environment. */
  envChanges: Record<string, string>;
  exit: ExitStatus;
  durationMs: number;
  /** The program's output, stdout and stderr interleaved as they came, bounded. */
  output: string;
  outputDroppedBytes: number;
  failure: FailureReading;
  sanitizer: SanitizerEvidence | null;
  oomPicture: OomPicture | null;
  /** Processes that held GPU memory while it ran (NVML), or null when it was not monitored. */
  processes: MonitoredProcess[] | null;
  /** The device's memory over the run. */
  memory: { peakUsedBytes: number; baselineUsedBytes: number; totalBytes: number } | null;
  /** What the monitor could not see of this run (it failed, NVML could not list processes…); empty when it saw it all. */
  watchProblems: string[];
}

export interface MonitoredProcess {
  pid: number;
  command: string | null;
  peakBytes: number;
  /** The program itself, or a process it started (its descendant). */
  isProgram: boolean;
  childOfProgram: boolean;
}

/** The environment as the program will see it, before it runs. */
export interface EnvironmentEvidence {
  /** Doctor checks on the program's environment (CUDA_VISIBLE_DEVICES, a stub libcuda on the path…): warn and fail only. */
  checks: DoctorCheck[];
  /** GPUs the driver has (NVML, no CUDA context), or null when it could not tell. */
  gpus: { index: number; name: string; totalBytes: number | null; usedBytes: number | null }[] | null;
  /** The driver's version and the highest CUDA it runs ("13.0"). */
  driver: { version: string | null; cuda: string | null } | null;
  /** What the program's Python will load: PyTorch's and CuPy's versions and the CUDA they were built for. */
  python: {
    version: string;
    torch: { version: string | null; cuda: string | null } | null;
    cupy: { version: string | null; cuda: string | null } | null;
  } | null;
  /** Processes already holding GPU memory before the program starts. */
  processes: { pid: number; command: string | null; usedBytes: number | null; device: number }[];
  /** What could not be looked at, and why. */
  problems: string[];
}

/** Everything the rules read: the program, its environment, the runs so far, and what could not be run. */
export interface Evidence {
  argv: string[];
  /** The program is Python (python, python3, python3.12… or a .py script). */
  python: boolean;
  thorough: boolean;
  environment: EnvironmentEvidence;
  runs: RunEvidence[];
  /** Steps the rules asked for that were not made, and why (out of budget, cancelled, a tool missing). */
  notRun: { kind: RunKind; why: string; reason: string }[];
}

export const runsOf = (e: Evidence, kind: RunKind): RunEvidence[] => e.runs.filter((r) => r.kind === kind);
export const tried = (e: Evidence, kind: RunKind): boolean => e.runs.some((r) => r.kind === kind) || e.notRun.some((n) => n.kind === kind);
export const firstRun = (e: Evidence): RunEvidence | null => e.runs.find((r) => r.kind === 'as-is') ?? null;
