/**
 * A saved run result is a file from anywhere: before its event log becomes a timeline, the parts the timeline
 * reads (the log, the allocation records, the steps, the failure, the device, the start time) are checked here —
 * types, bounded strings and lists, finite numbers. What passes is safe to hand to timelineFromRun.
 */
import { z } from 'zod';

import { MAX_RUN_EVENTS, type RunLogEvent } from '../runner/event-log';
import type { RunResult } from '../runner/run-result';

const name = z.string().max(256);
const ms = z.number().min(0).max(1e10);
const bytes = z
  .number()
  .min(0)
  .max(2 ** 53);
const address = z.string().max(20);
const step = z.number().int().min(0).max(1_000_000).nullable();
const dim3 = z.tuple([z.number().int().min(0), z.number().int().min(0), z.number().int().min(0)]);
const cudaError = z.object({ library: name, api: name, code: z.number().int(), name, message: z.string().max(4096) }).passthrough();
const memory = z.object({ requestedBytes: bytes, freeBytes: bytes, totalBytes: bytes }).nullable().optional();

const base = { t: ms, dur: ms, step, phase: z.enum(['load', 'run', 'determinism', 'probe', 'teardown']) };

const eventSchema = z.discriminatedUnion('kind', [
  z.object({ ...base, kind: z.literal('module-load'), kernel: name, imageBytes: bytes }),
  z.object({ ...base, kind: z.literal('alloc'), buffer: name, address, bytes, allocatedBytes: bytes }),
  z.object({ ...base, kind: z.literal('free'), buffer: name, address, bytes, allocatedBytes: bytes }),
  z.object({ ...base, kind: z.literal('memset'), buffer: name, address, bytes, value: z.number(), why: z.enum(['poison', 'zero', 'guard']) }),
  z.object({ ...base, kind: z.literal('copy'), direction: z.enum(['HtoD', 'DtoH']), buffer: name.nullable(), bytes, why: z.enum(['data', 'guards']) }),
  z.object({
    ...base,
    kind: z.literal('launch'),
    kernel: name,
    entry: name,
    grid: dim3,
    block: dim3,
    sharedBytes: bytes,
    gpu: z.array(z.object({ startMs: z.number().min(-1e10).max(1e10), endMs: z.number().min(-1e10).max(1e10) })).max(10_000),
  }),
  z.object({ ...base, kind: z.literal('sync') }),
  z.object({ ...base, kind: z.literal('error'), api: name, error: cudaError, memory }),
]);

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
    startedAtMs: z.number().min(0).max(1e14).optional(),
    // A little past the runner's own bound: a result is never refused for the runner's rounding.
    events: z
      .array(eventSchema)
      .max(MAX_RUN_EVENTS + 16)
      .optional(),
    eventsDropped: z.number().int().min(0).optional(),
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

// The schema must describe the runner's events: this fails to compile when event-log.ts moves away from it.
const describesRunLog = (event: z.infer<typeof eventSchema>): RunLogEvent => event;
void describesRunLog;
