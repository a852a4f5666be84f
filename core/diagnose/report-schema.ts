import * as z from 'zod';

import { readAs } from '../api/typed-schema';
import { RUN_KINDS } from './evidence';
import type { DiagnosisReport } from './report';
import { VERDICT_KINDS } from './verdict';

/**
 * Keys the schema does not name are dropped (zod's default), so what passes has a bounded shape and depth: it can be
 * handed from the reader's child process to the host as JSON without carrying a file's nesting along.
 *
 * A saved diagnosis (`gpu-workbench diagnose --json`, or a bundle's) is data from outside: every field the views
 * read is checked here, strings and lists bounded, before anything shows it.
 */
const text = (max = 20_000) => z.string().max(max);
const line = z.number().int().min(0).max(10_000_000);
const frame = z.object({ file: text(4096), line, function: text(1000), code: text(4000).nullable() });
const place = z.object({ file: text(4096), line, code: text(4000).nullable(), function: text(1000).nullable() });
const envChanges = z.record(text(256), text(32_768)).refine((e) => Object.keys(e).length <= 256, 'at most 256 variables');
const argv = z.array(text(32_768)).max(1024);
const runKind = z.enum(RUN_KINDS);
const check = z.object({ id: text(200), status: z.enum(['ok', 'warn', 'fail', 'not-run']), title: text(1000), detail: text(), remedy: text().nullable() });
const dim = z.object({ x: z.number(), y: z.number(), z: z.number() });

const group = z.object({
  key: text(4000),
  tool: text(40),
  kind: text(40),
  text: text(),
  count: z.number().int().min(0),
  where: z.object({ func: text(4000), path: text(4096).nullable(), line: line.nullable() }).nullable(),
  userFrame: z.object({ func: text(4000).nullable(), file: text(4096).nullable(), line: line.nullable() }).nullable(),
  leakedBytes: z.number().min(0),
  hazards: z.number().min(0),
  threads: z.object({ min: dim, max: dim }).nullable().optional(),
  heldBy: text(60).nullable().optional(),
  sourceMapped: z
    .object({ file: text(4096), line })
    .nullable()
    .optional(),
});

const run = z.object({
  kind: runKind,
  argv,
  envChanges,
  exit: z.object({ code: z.number().int().nullable(), signal: text(40).nullable(), outOfBudget: z.boolean(), cancelled: z.boolean() }),
  durationMs: z.number().min(0),
  output: text(8 * 2 ** 20),
  outputDroppedBytes: z.number().min(0),
  failure: z.object({
    category: text(40),
    title: text(),
    error: z.object({ name: text(200), code: z.number().int(), runtimeName: text(200).nullable() }).nullable(),
    userFrame: frame.nullable(),
    innermost: frame.nullable(),
    exitText: text(1000),
  }),
  sanitizer: z
    .object({
      verdict: text(40),
      headline: text(),
      groups: z.array(group).max(10_000),
      unavailable: text().nullable(),
      launchLines: z
        .array(z.object({ key: text(4000), file: text(4096), line }))
        .max(10_000)
        .default([]),
    })
    .nullable(),
  oomPicture: z
    .object({
      snapshotPath: text(4096).nullable(),
      requestedBytes: z.number().nullable(),
      aliveByLine: z.array(z.object({ frame: frame.nullable(), bytes: z.number().min(0), count: z.number().int().min(0) })).max(100_000),
      allocatedBytes: z.number().nullable(),
      reservedBytes: z.number().nullable(),
      largestFreeInCacheBytes: z.number().nullable(),
      freeInCacheBytes: z.number().nullable(),
      missing: text().nullable(),
    })
    .nullable(),
  processes: z
    .array(z.object({ pid: z.number().int(), command: text(32_768).nullable(), peakBytes: z.number(), isProgram: z.boolean(), childOfProgram: z.boolean() }))
    .max(10_000)
    .nullable(),
  memory: z.object({ peakUsedBytes: z.number(), baselineUsedBytes: z.number(), totalBytes: z.number() }).nullable(),
  watchProblems: z.array(text()).max(100).default([]),
});

const step = z.object({
  kind: z.union([z.literal('environment'), runKind]),
  title: text(1000),
  why: text(),
  rule: text(200).nullable(),
  argv,
  envChanges,
  status: z.enum(['running', 'done', 'stopped', 'could-not-run', 'not-run']),
  durationMs: z.number().min(0).nullable(),
  findings: z.array(text()).max(1000),
});

export const diagnosisReportSchema = z.object({
  schema: z.literal(1),
  program: z.object({ argv, cwd: text(4096), envChanges, thorough: z.boolean() }),
  startedAt: text(40),
  durationMs: z.number().min(0),
  budgetMs: z.number().min(0),
  verdict: z.object({
    kind: z.enum(VERDICT_KINDS),
    rule: text(200),
    sentence: text(),
    userLine: place.nullable(),
    misleadingLine: place.nullable(),
    kernel: z.object({ name: text(4000), file: text(4096).nullable(), line: line.nullable() }).nullable(),
    cause: text(),
    whatToDo: z.array(text()).max(100),
  }),
  steps: z.array(step).max(100),
  evidence: z.object({
    argv,
    python: z.boolean(),
    thorough: z.boolean(),
    environment: z.object({
      checks: z.array(check).max(200),
      gpus: z
        .array(z.object({ index: z.number().int(), name: text(200), totalBytes: z.number().nullable(), usedBytes: z.number().nullable() }))
        .max(64)
        .nullable(),
      driver: z.object({ version: text(100).nullable(), cuda: text(40).nullable() }).nullable(),
      python: z
        .object({
          version: text(40),
          torch: z.object({ version: text(100).nullable(), cuda: text(40).nullable() }).nullable(),
          cupy: z.object({ version: text(100).nullable(), cuda: text(40).nullable() }).nullable(),
        })
        .nullable(),
      processes: z
        .array(z.object({ pid: z.number().int(), command: text(32_768).nullable(), usedBytes: z.number().nullable(), device: z.number().int() }))
        .max(10_000),
      problems: z.array(text()).max(100),
    }),
    runs: z.array(run).max(100),
    notRun: z.array(z.object({ kind: runKind, why: text(), reason: text() })).max(100),
  }),
  offered: z.array(runKind).max(10),
});

/** A report as diagnose.program and diagnose.open answer it: checked as a saved one is, typed as the views read it. */
export const diagnosisAnswerSchema = readAs<DiagnosisReport>('a diagnosis report', diagnosisReportSchema);

/** A saved report, checked; the parsed value is typed as the report the views read. */
export function parseDiagnosisReport(value: unknown): { ok: true; report: DiagnosisReport } | { ok: false; error: string } {
  const parsed = diagnosisReportSchema.safeParse(value);
  if (parsed.success) return { ok: true, report: parsed.data as unknown as DiagnosisReport };
  const issue = parsed.error.issues[0];
  return { ok: false, error: `${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'not a diagnosis report'}` };
}
