import * as z from 'zod';

import { readAs } from '../api/typed-schema';
import { sampleSeriesSchema } from '../memory/sample-series-schema';
import { savedEventLogFields } from './event-log-schema';
import type { RunOutcome } from './run-outcome';

/**
 * Why a JSON file the user opened as a run result is not one, in words: what it looks like instead and
 * what to do, never the schema checker's dump.
 */
export function describeNotAResult(value: unknown, path: string, problems: string[]): string {
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  if (!record) {
    const kind = Array.isArray(value) ? 'a list' : value === null ? 'null' : `a ${typeof value}`;
    return `${path} is not a GPU Workbench run result: it holds ${kind}, where a result is an object with a status and a diagnosis. Open a file written by Save result (or by \`gpu-workbench run --json\`).`;
  }
  if ('steps' in record && 'kernels' in record && !('diagnosis' in record))
    return `${path} is a launch plan, not a run result. Load it with Load plan in the Run section, or run it with \`gpu-workbench run --plan ${path}\`.`;
  if ('device' in record && 'driverVersion' in record && !('diagnosis' in record))
    return `${path} is a device profile, not a run result. Shipped profiles are chosen under Device in the Launch panel.`;
  if (!('status' in record) && !('diagnosis' in record))
    return `${path} is not a GPU Workbench run result: it has neither a "status" nor a "diagnosis". Open a file written by Save result (or by \`gpu-workbench run --json\`).`;
  const shown = problems.slice(0, 3).join('; ');
  return `${path} is not a GPU Workbench run result that this version can read: ${shown}${problems.length > 3 ? `; and ${problems.length - 3} more` : ''}. It may be damaged, or written by another version: run the plan again and save its result.`;
}

/**
 * A run outcome as a result file's text: JSON indented by two, except that each event of the event log
 * takes one line. A 100,000-event log indented field by field is ~30 MB and 1.5 million lines; one line
 * an event halves it and keeps it readable (and diffable) in an editor. JSON.stringify's rules otherwise:
 * undefined fields are left out, undefined in an array is null.
 */
export function resultFileText(outcome: unknown): string {
  return `${formatJson(outcome, '', false)}\n`;
}

function formatJson(value: unknown, indent: string, rows: boolean): string {
  if (value === null || typeof value !== 'object' || typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value) ?? 'null';
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const items = value.map((item) => (rows ? (JSON.stringify(item) ?? 'null') : formatJson(item, inner, false)));
    return `[\n${inner}${items.join(`,\n${inner}`)}\n${indent}]`;
  }
  const fields: string[] = [];
  for (const [key, field] of Object.entries(value)) {
    if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
    fields.push(`${JSON.stringify(key)}: ${formatJson(field, inner, key === 'events' && Array.isArray(field))}`);
  }
  return fields.length ? `{\n${inner}${fields.join(`,\n${inner}`)}\n${indent}}` : '{}';
}

/** The fields of a saved run outcome the UI reads (and the event log the timeline draws): what a result file or a bundle's result.json must have. */
export const savedOutcomeSchema = z.object({
  status: z.enum(['ok', 'cuda-error', 'compile-error', 'unavailable', 'runner-died', 'invalid', 'cancelled']),
  diagnosis: z.object({
    kind: z.string(),
    severity: z.enum(['ok', 'warning', 'error']),
    headline: z.string(),
    specifics: z.array(z.string()),
    next: z.array(z.string()),
  }),
  compile: z.array(z.unknown()),
  result: z
    .object({ steps: z.array(z.unknown()), buffers: z.array(z.unknown()), launches: z.array(z.unknown()), ...savedEventLogFields })
    .passthrough()
    .nullable(),
  samples: sampleSeriesSchema.nullable().optional(),
  samplingProblem: z.string().max(4096).nullable().optional(),
});

/** A saved outcome as run.open and a bundle's view answer it: checked as far as savedOutcomeSchema goes. */
export const savedRunOutcomeSchema = readAs<RunOutcome>('a run result', savedOutcomeSchema);

/** A saved outcome checked for what the views read, or the schema's problems, one per line. */
export function checkSavedOutcome(value: unknown): { ok: true; outcome: RunOutcome } | { ok: false; problems: string[] } {
  const parsed = savedOutcomeSchema.safeParse(value);
  if (parsed.success) return { ok: true, outcome: value as RunOutcome };
  return { ok: false, problems: parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') + ': ' : ''}${i.message}`) };
}
