import type { Diagnostic } from '../compile/diagnostics';
import type { Problem } from '../discovery';
import type { Diagnosis, RunStatus } from './diagnose';
import type { ExitClassification } from './protocol';
import type { RunResult } from './run-result';
import type { SampleSeries } from '../memory/samples';

export interface CompileRecord {
  kernel: string;
  ok: boolean;
  backend: string;
  command: string;
  log: string;
  diagnostics: Diagnostic[];
  ms: number;
  cached: boolean;
  symbol: string | null;
}

/** Everything one run produced, as the CLI prints it (--json), the UI shows it and a result file keeps it. */
export interface RunOutcome {
  status: RunStatus;
  /** Why the run never ran (status invalid, compile-error, unavailable, or a request refused); null once it ran. */
  problem: Problem | null;
  compile: CompileRecord[];
  result: RunResult | null;
  exit: ExitClassification | null;
  /** The one verdict the CLI and the UI show: what failed, where, why, what to do. */
  diagnosis: Diagnosis;
  /** Where the host's time went: checking the plan, compiling (or the cache), the runner round trip. */
  timing: { checkMs: number; compileMs: number; runMs: number; totalMs: number };
  /** Device memory sampled through NVML while it ran, when asked for (absent otherwise, and in older results). */
  samples?: SampleSeries | null;
  /** Why it was asked for but not sampled (no NVML, …): said, never left silent. */
  samplingProblem?: string | null;
}
