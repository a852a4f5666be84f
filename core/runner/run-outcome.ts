import * as z from 'zod';

import { schemaFor } from '../api/typed-schema';
import { diagnosticsSchema, type Diagnostic } from '../compile/diagnostics';
import type { Problem } from '../discovery';
import { problemSchema } from '../discovery-schema';
import { liveSampleSeriesSchema } from '../memory/sample-series-schema';
import type { SampleSeries } from '../memory/samples';
import { diagnosisSchema, type Diagnosis, type RunStatus } from './diagnose';
import { exitClassificationSchema, type ExitClassification } from './protocol';
import { runResultSchema, type RunResult } from './run-result';

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

const compileRecord = z.object({
  kernel: z.string(),
  ok: z.boolean(),
  backend: z.string(),
  command: z.string(),
  log: z.string(),
  diagnostics: diagnosticsSchema,
  ms: z.number().min(0),
  cached: z.boolean(),
  symbol: z.string().nullable(),
});

/** What run.plan answers (and run.open, sanitize.plan, profile.run beside their own). */
export const runOutcomeSchema = schemaFor<RunOutcome>()(
  z.object({
    status: z.enum(['ok', 'cuda-error', 'compile-error', 'unavailable', 'runner-died', 'invalid', 'cancelled']),
    problem: problemSchema.nullable(),
    compile: z.array(compileRecord),
    result: runResultSchema.nullable(),
    exit: exitClassificationSchema.nullable(),
    diagnosis: diagnosisSchema,
    timing: z.object({ checkMs: z.number(), compileMs: z.number(), runMs: z.number(), totalMs: z.number() }),
    samples: liveSampleSeriesSchema.nullable().optional(),
    samplingProblem: z.string().nullable().optional(),
  }),
);
