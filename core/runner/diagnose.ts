import * as z from 'zod';

import { schemaFor } from '../api/typed-schema';
import { gpuProcessSchema } from '../devices';
import { SANITIZER_TOOLS } from '../sanitizer/findings';
import { findingSchema } from '../validate/finding';
import type { Explanation } from '../cuda/explanations';
import type { GpuProcess } from '../devices';
import type { Problem } from '../discovery';
import type { LaunchPlan } from '../plan/plan-schema';
import type { SanitizerTool } from '../sanitizer/findings';
import type { Finding } from '../validate/validate-launch';
import { judgeRun, runFacts } from './diagnosis-rules';
import { describeRun } from './diagnosis-sentences';
import type { ExitClassification } from './protocol';
import type { RunResult } from './run-result';

export type RunStatus = 'ok' | 'cuda-error' | 'compile-error' | 'unavailable' | 'runner-died' | 'invalid' | 'cancelled';

export type DiagnosisKind =
  | 'ok'
  | 'cancelled'
  | 'leak'
  | 'invalid-plan'
  | 'compile-error'
  | 'unavailable'
  | 'watchdog'
  | 'runner-crashed'
  | 'out-of-memory'
  | 'invalid-launch'
  | 'module-load'
  | 'plan-error'
  | 'cuda-error'
  | 'out-of-bounds-write'
  | 'use-after-free'
  | 'uninitialised-read'
  | 'nondeterministic'
  | 'wrong-result';

export type { SanitizerTool } from '../sanitizer/findings';

export interface Diagnosis {
  kind: DiagnosisKind;
  severity: 'ok' | 'warning' | 'error';
  headline: string;
  /** The step it happened at, 0-based, with the label the run shows. */
  step: { index: number; label: string; op: string } | null;
  kernel: { id: string; entry: string } | null;
  /** The buffer it is about, where there is one (the one written out of bounds, read uninitialised, found wrong). */
  buffer: string | null;
  error: { name: string; code: number; api: string; message: string; runtimeName: string | null; sticky: boolean; library: string } | null;
  explanation: Explanation | null;
  /** What the workbench itself saw, in sentences built from this run's numbers and names. */
  specifics: string[];
  /** The validator's findings for the failing launch, computed from the kernel's attributes as the driver reported them. */
  launchFindings: Finding[];
  memory: { requestedBytes: number; freeBytes: number; totalBytes: number; processes: GpuProcess[] | null } | null;
  /**
   * Where compute-sanitizer would pin this to a source line. The in-app re-run is a later feature; the
   * command works today from a terminal.
   */
  sanitizer: { tool: SanitizerTool; why: string; command: string; available: false } | null;
  /** The source line it points at, where the run itself says (a failed device-side assert names its line). */
  sourceLocation: { file: string; line: number } | null;
  next: string[];
}

/** Every diagnosis kind, checked against DiagnosisKind both ways (a sample's expectation and a run's answer name one). */
export const DIAGNOSIS_KINDS = [
  'ok',
  'cancelled',
  'leak',
  'invalid-plan',
  'compile-error',
  'unavailable',
  'watchdog',
  'runner-crashed',
  'out-of-memory',
  'invalid-launch',
  'module-load',
  'plan-error',
  'cuda-error',
  'out-of-bounds-write',
  'use-after-free',
  'uninitialised-read',
  'nondeterministic',
  'wrong-result',
] as const satisfies readonly DiagnosisKind[];
const _everyKind = (k: DiagnosisKind): (typeof DIAGNOSIS_KINDS)[number] => k;
void _everyKind;

export const diagnosisSchema = schemaFor<Diagnosis>()(
  z.object({
    kind: z.enum(DIAGNOSIS_KINDS),
    severity: z.enum(['ok', 'warning', 'error']),
    headline: z.string(),
    step: z.object({ index: z.number().int(), label: z.string(), op: z.string() }).nullable(),
    kernel: z.object({ id: z.string(), entry: z.string() }).nullable(),
    buffer: z.string().nullable(),
    error: z
      .object({
        name: z.string(),
        code: z.number().int(),
        api: z.string(),
        message: z.string(),
        runtimeName: z.string().nullable(),
        sticky: z.boolean(),
        library: z.string(),
      })
      .nullable(),
    explanation: z.object({ summary: z.string(), causes: z.array(z.string()), next: z.array(z.string()) }).nullable(),
    specifics: z.array(z.string()),
    launchFindings: z.array(findingSchema),
    memory: z.object({ requestedBytes: z.number(), freeBytes: z.number(), totalBytes: z.number(), processes: z.array(gpuProcessSchema).nullable() }).nullable(),
    sanitizer: z
      .object({ tool: z.enum(SANITIZER_TOOLS as [SanitizerTool, ...SanitizerTool[]]), why: z.string(), command: z.string(), available: z.literal(false) })
      .nullable(),
    sourceLocation: z.object({ file: z.string(), line: z.number().int() }).nullable(),
    next: z.array(z.string()),
  }),
);

export interface DiagnosisInput {
  status: RunStatus;
  problem: Problem | null;
  result: RunResult | null;
  exit: ExitClassification | null;
  plan: Pick<LaunchPlan, 'kernels' | 'steps'> | null;
  /** The validator's findings for the failed launch step (empty when it did not fail at a launch). */
  launchFindings: Finding[];
  /** NVML's processes on the run's device, for an out-of-memory failure. */
  processes: GpuProcess[] | null;
  /** The plan file, when there is one, for the compute-sanitizer command. */
  planPath?: string | null;
  /**
   * The workbench's own processes, so the memory they hold is named as such: its runners, spares included, and under
   * compute-sanitizer both the tool and the runner it started (main/process/own-processes.ts).
   */
  ownPids?: number[];
}

/**
 * Turns what a run produced into one verdict: what failed, where, why, and what to do next. The first of the
 * rules (diagnosis-rules.ts, in priority order) that finds something decides; its finding is told in words
 * in one place (diagnosis-sentences.ts).
 */
export function diagnoseRun(input: DiagnosisInput): Diagnosis {
  const facts = runFacts(input);
  return describeRun(judgeRun(facts), facts);
}
