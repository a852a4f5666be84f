import * as z from 'zod';

import { CHECK_NAMES } from '../check/check-model';
import { DIAGNOSIS_KINDS, type Diagnosis } from '../runner/diagnose';
import type { DeterminismReport } from '../runner/run-result';

/**
 * A failure-gallery sample (samples/<name>/sample.json): a broken and a fixed variant, each a kernel
 * source and a plan, and the diagnosis each must produce — data the GPU suite checks and the UI shows.
 */

const fileName = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be a file name in the sample folder');

export const expectedDiagnosisSchema = z
  .object({
    kind: z.enum(DIAGNOSIS_KINDS),
    /** The driver API's error name. */
    error: z.string().optional(),
    /** 0-based step index. */
    step: z.number().int().min(0).optional(),
    /** The kernel's entry name. */
    kernel: z.string().optional(),
    buffer: z.string().optional(),
    sticky: z.boolean().optional(),
    /** A validator rule that must be among the launch findings. */
    finding: z.string().optional(),
    /** The source line the diagnosis points at (a failed device-side assert names it). */
    line: z.number().int().min(1).optional(),
    /** What the determinism check must find: read-backs that differ on a second run, or bit-identical ones. */
    determinism: z.enum(['differs', 'identical']).optional(),
  })
  .strict();
export type ExpectedDiagnosis = z.infer<typeof expectedDiagnosisSchema>;

const variantSchema = z.object({ source: fileName, plan: fileName }).strict();

export const sampleManifestSchema = z
  .object({
    title: z.string().min(1).max(200),
    summary: z.string().min(1).max(2000),
    /** The watchdog's limit for this sample's runs. */
    timeoutMs: z.number().int().min(100).max(600_000).optional(),
    variants: z.object({ broken: variantSchema, fixed: variantSchema }).strict(),
    expect: z
      .object({
        /** `check`: the one `gpu-workbench check` must fail on the broken variant, its own finding (the fixed one passes every check). */
        broken: expectedDiagnosisSchema.extend({ check: z.enum(CHECK_NAMES) }).strict(),
        fixed: expectedDiagnosisSchema,
      })
      .strict(),
  })
  .strict();
export type SampleManifest = z.infer<typeof sampleManifestSchema>;
export type SampleVariant = keyof SampleManifest['variants'];

/** Every way a diagnosis differs from what the sample expects; empty when it matches. */
export function compareWithExpected(diagnosis: Diagnosis, expected: ExpectedDiagnosis, determinism?: DeterminismReport | null): string[] {
  const out: string[] = [];
  const check = (what: string, actual: unknown, wanted: unknown) => {
    if (wanted !== undefined && actual !== wanted) out.push(`${what}: expected ${JSON.stringify(wanted)}, got ${JSON.stringify(actual)}`);
  };
  check('kind', diagnosis.kind, expected.kind);
  check('error', diagnosis.error?.name ?? null, expected.error);
  check('step', diagnosis.step?.index ?? null, expected.step);
  check('kernel', diagnosis.kernel?.entry ?? null, expected.kernel);
  check('buffer', diagnosis.buffer, expected.buffer);
  check('sticky', diagnosis.error?.sticky ?? false, expected.sticky);
  check('line', diagnosis.sourceLocation?.line ?? null, expected.line);
  if (expected.determinism) {
    const found =
      determinism?.status !== 'compared' ? `not compared (${determinism?.reason ?? 'no report'})` : determinism.differences.length ? 'differs' : 'identical';
    check('determinism', found, expected.determinism);
  }
  if (expected.finding && !diagnosis.launchFindings.some((f) => f.rule === expected.finding)) {
    out.push(`finding: expected rule ${expected.finding}, got ${JSON.stringify(diagnosis.launchFindings.map((f) => f.rule))}`);
  }
  return out;
}
