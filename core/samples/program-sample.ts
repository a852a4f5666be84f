import * as z from 'zod';

import { VERDICT_KINDS } from '../diagnose/verdict';
import type { DiagnosisReport } from '../diagnose/report';

/**
 * A program sample (samples/programs/<name>/diagnose.json): a program that fails the way users' programs do, the
 * command and environment to run it with, and the diagnosis it must produce — data the GPU suite checks.
 */
const place = z.object({ file: z.string().regex(/^[A-Za-z0-9_.-]+$/), line: z.number().int().min(1) }).strict();

export const programSampleSchema = z
  .object({
    title: z.string().min(1).max(200),
    command: z.array(z.string().min(1).max(200)).min(1).max(20),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(1000)).optional(),
    thorough: z.boolean().optional(),
    expect: z
      .object({
        verdict: z.enum(VERDICT_KINDS),
        line: place.optional(),
        misleadingLine: place.optional(),
        kernel: z
          .object({ name: z.string(), file: z.string().optional(), line: z.number().int().min(1).optional() })
          .strict()
          .optional(),
        steps: z.array(z.string()).optional(),
        /** A regular expression the verdict's sentence must match. */
        sentence: z.string().optional(),
        /** Lines that must be among what was alive at the out-of-memory, from the allocator history. */
        aliveLines: z.array(place).optional(),
      })
      .strict(),
  })
  .strict();

export type ProgramSample = z.infer<typeof programSampleSchema>;

const base = (path: string | null | undefined) => (path ?? '').split('/').pop();

/** What in the report differs from what the sample expects, one sentence each: empty when it matches. */
export function diagnosisMismatches(report: DiagnosisReport, expect: ProgramSample['expect']): string[] {
  const v = report.verdict;
  const out: string[] = [];
  if (v.kind !== expect.verdict) out.push(`verdict ${v.kind} (${v.rule}), expected ${expect.verdict}: ${v.sentence}`);
  const samePlace = (got: { file: string; line: number | null } | null, want: { file: string; line: number }) =>
    !!got && base(got.file) === want.file && got.line === want.line;
  if (expect.line && !samePlace(v.userLine, expect.line))
    out.push(`line ${v.userLine ? `${base(v.userLine.file)}:${v.userLine.line}` : 'none'}, expected ${expect.line.file}:${expect.line.line}`);
  if (expect.misleadingLine && !samePlace(v.misleadingLine, expect.misleadingLine))
    out.push(
      `misleading line ${v.misleadingLine ? `${base(v.misleadingLine.file)}:${v.misleadingLine.line}` : 'none'}, expected ${expect.misleadingLine.file}:${expect.misleadingLine.line}`,
    );
  if (expect.kernel) {
    const k = v.kernel;
    const ok =
      k &&
      k.name === expect.kernel.name &&
      (!expect.kernel.file || base(k.file) === expect.kernel.file) &&
      (!expect.kernel.line || k.line === expect.kernel.line);
    if (!ok)
      out.push(
        `kernel ${k ? `${k.name} at ${base(k.file)}:${k.line}` : 'none'}, expected ${expect.kernel.name}${expect.kernel.file ? ` at ${expect.kernel.file}:${expect.kernel.line}` : ''}`,
      );
  }
  if (expect.steps) {
    const steps = report.steps.filter((s) => s.status !== 'not-run').map((s) => s.kind);
    if (steps.join(',') !== expect.steps.join(',')) out.push(`steps ${steps.join(', ')}, expected ${expect.steps.join(', ')}`);
  }
  if (expect.sentence && !new RegExp(expect.sentence).test(v.sentence)) out.push(`sentence "${v.sentence}" does not match /${expect.sentence}/`);
  for (const want of expect.aliveLines ?? []) {
    const alive = report.evidence.runs.flatMap((r) => r.oomPicture?.aliveByLine ?? []);
    if (!alive.some((a) => a.frame && base(a.frame.file) === want.file && a.frame.line === want.line))
      out.push(
        `nothing alive at the OOM from ${want.file}:${want.line} (alive: ${alive.map((a) => (a.frame ? `${base(a.frame.file)}:${a.frame.line}` : '?')).join(', ') || 'none'})`,
      );
  }
  return out;
}
