/**
 * A saved run result is a file from anywhere: before its event log becomes a timeline, the parts the timeline
 * reads (the log, the allocation records, the steps, the failure, the device, the start time) are checked here —
 * types, bounded strings and lists, finite numbers. What passes is safe to hand to timelineFromRun.
 */
import * as z from 'zod';

import { savedEventLogFields } from '../runner/event-log-schema';
import type { RunResult } from '../runner/run-result';

const name = z.string().max(256);
const bytes = z
  .number()
  .min(0)
  .max(2 ** 53);
const address = z.string().max(20);
const step = z.number().int().min(0).max(1_000_000).nullable();
const cudaError = z.object({ library: name, api: name, code: z.number().int(), name, message: z.string().max(4096) }).passthrough();
const memory = z.object({ requestedBytes: bytes, freeBytes: bytes, totalBytes: bytes }).nullable().optional();

/** The fields of a RunResult a timeline is built from. */
export const runForTimelineSchema = z
  .object({
    device: z.object({ ordinal: z.number().int().min(0).max(1023), name: z.string().max(256) }).passthrough(),
    steps: z.array(z.object({ index: z.number().int().min(0), label: z.string().max(1000), op: z.string().max(64) }).passthrough()).max(100_000),
    failure: z
      .object({ stepIndex: step, op: z.string().max(64), error: cudaError, sticky: z.boolean(), memory })
      .passthrough()
      .nullable(),
    memory: z
      .array(
        z.object({
          buffer: name,
          address,
          bytes,
          allocatedAtStep: z.number().int().min(0).max(1_000_000),
          freedAtStep: z.number().int().min(0).max(1_000_000).nullable(),
        }),
      )
      .max(100_000)
      .optional(),
    // The event log is checked by the one schema of it that result files use too.
    ...savedEventLogFields,
  })
  .passthrough();

export class RunLogError extends Error {}

/** The result, checked for what a timeline reads; throws RunLogError saying what is wrong. */
export function checkRunForTimeline(value: unknown): RunResult {
  const parsed = runForTimelineSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`);
    if (parsed.error.issues.length > 5) issues.push(`… and ${parsed.error.issues.length - 5} more problems`);
    throw new RunLogError(`The run result cannot be drawn as a memory timeline: ${issues.join('; ')}`);
  }
  return value as RunResult;
}
