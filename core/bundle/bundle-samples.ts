import { z } from 'zod';

import type { SampleSeries } from '../memory/samples';

/**
 * samples.json: device memory sampled through NVML while the run ran (core/memory/samples.ts), drawn on the
 * memory timeline beside the run's own allocations. Other people's processes are in it; a redacted bundle keeps
 * each one's program name and drops the rest of its command line (an argument can be a token), as the doctor's
 * shareable facts do.
 */

/** Samples a bundle carries at most: a run sampled at 100 Hz for almost three hours. */
export const MAX_BUNDLE_SAMPLES = 1_000_000;

const text = (max: number) => z.string().max(max);
const bytes = z
  .number()
  .min(0)
  .max(2 ** 53);
const flag = z.object({ kind: z.enum(['exited', 'not-visible', 'foreign']), text: text(2000), fix: text(2000) }).nullable();

/** A SampleSeries as read from a bundle (or a request): bounded, every number a number. */
export const sampleSeriesSchema = z.object({
  intervalMs: z.number().min(0).max(3_600_000),
  devices: z.array(z.object({ index: z.number().int().min(0).max(1023), name: text(256), uuid: text(128), totalBytes: bytes })).max(64),
  processes: z
    .array(
      z.object({
        pid: z
          .number()
          .int()
          .min(0)
          .max(2 ** 31),
        command: text(4096).nullable(),
        flag,
        firstSeenUs: z.number(),
        lastSeenUs: z.number(),
      }),
    )
    .max(100_000),
  samples: z
    .array(
      z.object({
        timeUs: z.number(),
        devices: z.array(z.object({ index: z.number().int().min(0).max(1023), usedBytes: bytes, freeBytes: bytes, totalBytes: bytes })).max(64),
        processes: z
          .array(
            z.object({
              device: z.number().int().min(0).max(1023),
              pid: z
                .number()
                .int()
                .min(0)
                .max(2 ** 31),
              usedBytes: bytes.nullable(),
            }),
          )
          .max(4096)
          .nullable(),
      }),
    )
    .max(MAX_BUNDLE_SAMPLES),
  dropped: z.number().int().min(0),
});

const _agrees = (s: z.infer<typeof sampleSeriesSchema>): SampleSeries => s;
void _agrees;

/** A command line cut to its program's name: `/home/alice/venv/bin/python train.py --token=…` → `python`. */
export function programName(command: string | null): string | null {
  if (command === null) return null;
  const first = command.trim().split(/\s+/)[0] ?? '';
  const name = first.replace(/^.*\//, '');
  return name || null;
}

/** The series as it may leave the machine in a redacted bundle: each process's program name, not its command line. */
export function shareableSamples(series: SampleSeries): SampleSeries {
  return { ...series, processes: series.processes.map((p) => ({ ...p, command: programName(p.command) })) };
}
