import * as z from 'zod';

import type { SampleSeries } from './samples';

/**
 * A SampleSeries as a saved result or a bundle carries it: data from a file, checked before anything draws it —
 * bounded lists and strings, finite numbers (zod refuses NaN and ±Infinity), known flag kinds.
 */
export const MAX_SAVED_SAMPLES = 200_000;
const bytes = z.number().min(0).max(Number.MAX_SAFE_INTEGER);
const us = z.number().min(0).max(1e17);
const index = z.number().int().min(0).max(1023);
const pid = z.number().int().min(1).max(0xffffffff);
const text = z.string().max(4096);

const memorySampleSchema = z.object({
  timeUs: us,
  devices: z.array(z.object({ index, usedBytes: bytes, freeBytes: bytes, totalBytes: bytes })).max(64),
  processes: z
    .array(z.object({ device: index, pid, usedBytes: bytes.nullable() }))
    .max(4096)
    .nullable(),
});

export const sampleSeriesSchema = z.object({
  intervalMs: z.number().min(1).max(3_600_000),
  devices: z.array(z.object({ index, name: z.string().max(256), uuid: z.string().max(256), totalBytes: bytes })).max(64),
  processes: z
    .array(
      z.object({
        pid,
        command: text.nullable(),
        flag: z.object({ kind: z.enum(['exited', 'not-visible', 'foreign']), text, fix: text }).nullable(),
        firstSeenUs: us,
        lastSeenUs: us,
      }),
    )
    .max(10_000),
  samples: z.array(memorySampleSchema).max(MAX_SAVED_SAMPLES),
  dropped: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

/** A series as the host answers it (a run's, a monitoring session's): as saved, but as long as the host's sample store holds. */
export const liveSampleSeriesSchema = sampleSeriesSchema.extend({ samples: z.array(memorySampleSchema) });

// The schema and the type describe the same series: a drift in either breaks the build here.
const _parsedIsSeries = (s: z.infer<typeof sampleSeriesSchema>): SampleSeries => s;
const _seriesIsParsed = (s: SampleSeries): z.infer<typeof sampleSeriesSchema> => s;
void _parsedIsSeries;
void _seriesIsParsed;
