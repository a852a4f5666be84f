import * as z from 'zod';

import { MAX_RUN_EVENTS, MAX_RUN_GPU_TIMES, type RunLogEvent } from './event-log';

/**
 * The event log as a saved result (or a bundle) carries it: data from a file someone may have written by
 * hand, checked before anything draws it — bounded arrays and strings, known kinds and phases, finite
 * numbers (zod's number refuses NaN and ±Infinity; JSON's 1e999 parses to Infinity). Unknown fields inside
 * an event are let through, as elsewhere in a result, so a newer version's additions still open.
 */
/** A time from the run's start: within ±10^12 ms (31 years), so that a timeline's arithmetic on it stays finite. */
const ms = z.number().min(-1e12).max(1e12);
const bytes = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const name = z.string().max(1024);
const address = z.string().regex(/^0x[0-9a-f]{1,16}$/, 'must be a device address in hex (0x…)');
const dim = z.number().int().min(1).max(0xffffffff);
const dim3 = z.tuple([dim, dim, dim]).readonly();

const base = {
  t: ms,
  dur: ms.min(0),
  step: z.number().int().min(0).max(1_000_000).nullable(),
  phase: z.enum(['load', 'run', 'determinism', 'probe', 'teardown']),
};

const cudaErrorInfoSchema = z.object({
  library: z.string().max(64),
  api: z.string().max(256),
  code: z.number().int(),
  name: z.string().max(256),
  message: z.string().max(16_384),
});

export const runLogEventSchema = z.discriminatedUnion('kind', [
  z.object({ ...base, kind: z.literal('module-load'), kernel: name, imageBytes: bytes }),
  z.object({ ...base, kind: z.literal('alloc'), buffer: name, address, bytes, allocatedBytes: bytes }),
  z.object({ ...base, kind: z.literal('free'), buffer: name, address, bytes, allocatedBytes: bytes }),
  z.object({
    ...base,
    kind: z.literal('memset'),
    buffer: name,
    address,
    bytes,
    value: z.number().int().min(0).max(255),
    why: z.enum(['poison', 'zero', 'guard']),
  }),
  z.object({ ...base, kind: z.literal('copy'), direction: z.enum(['HtoD', 'DtoH']), buffer: name.nullable(), bytes, why: z.enum(['data', 'guards']) }),
  z.object({
    ...base,
    kind: z.literal('launch'),
    kernel: name,
    entry: name,
    grid: dim3,
    block: dim3,
    sharedBytes: bytes,
    gpu: z.array(z.object({ startMs: ms, endMs: ms })).max(MAX_RUN_GPU_TIMES),
    gpuDropped: bytes.optional(),
  }),
  z.object({ ...base, kind: z.literal('sync') }),
  z.object({
    ...base,
    kind: z.literal('error'),
    api: z.string().max(256),
    error: cudaErrorInfoSchema,
    memory: z.object({ requestedBytes: bytes, freeBytes: bytes, totalBytes: bytes }).nullable().optional(),
  }),
]);

/** The run-result fields of the event log; each absent in results saved before it was recorded. */
export const savedEventLogFields = {
  // Milliseconds since 1970, up to the year 33,000: as microseconds, still exact enough to draw.
  startedAtMs: z.number().min(0).max(1e15).optional(),
  events: z
    .array(runLogEventSchema)
    .max(MAX_RUN_EVENTS)
    .refine(
      (events) => events.reduce((sum, e) => sum + (e.kind === 'launch' ? e.gpu.length : 0), 0) <= MAX_RUN_GPU_TIMES,
      `must hold at most ${MAX_RUN_GPU_TIMES} GPU placements of launches in all`,
    )
    .optional(),
  eventsDropped: bytes.optional(),
};

// The schema and the type describe the same events: a drift in either breaks the build here.
type Parsed = z.infer<typeof runLogEventSchema>;
const _parsedIsEvent = (e: Parsed): RunLogEvent => e;
const _eventIsParsed = (e: RunLogEvent): Parsed => e;
void _parsedIsEvent;
void _eventIsParsed;
