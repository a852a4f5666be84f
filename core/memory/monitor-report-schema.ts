/**
 * What monitor.start answers, as its channel checks it: apart from core/memory/monitor-report.ts, so a command that
 * only builds reports (a diagnosis watching its program) builds no schema when it starts.
 */
import * as z from 'zod';

import { schemaFor } from '../api/typed-schema';
import type { MonitorReport } from './monitor-report';
import { liveSampleSeriesSchema } from './sample-series-schema';

const us = z.number();
const bytesOrNull = z.number().nullable();
const count = z.number().int().min(0);
const exit = z.object({ code: z.number().int().nullable(), signal: z.string().nullable() });

/** What monitor.start answers. */
export const monitorReportSchema = schemaFor<MonitorReport>()(
  z.object({
    startedAtUs: us,
    endedAtUs: us,
    end: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('duration'), durationS: z.number() }),
      z.object({ kind: z.literal('target-exited'), pid: z.number().int(), ...exit.shape }),
      z.object({ kind: z.literal('stopped') }),
      z.object({ kind: z.literal('failed'), message: z.string() }),
    ]),
    target: z
      .object({
        pid: z.number().int(),
        command: z.string().nullable(),
        startedByMonitor: z.boolean(),
        exit: exit.nullable(),
        stoppedByMonitor: z.boolean(),
        leftBehind: z.array(z.object({ pid: z.number().int(), command: z.string().nullable(), heldBytes: bytesOrNull })),
      })
      .nullable(),
    sampling: z.object({
      intervalMs: z.number(),
      processIntervalMs: z.number(),
      mode: z.enum(['thread', 'worker', 'inline']),
      samples: count,
      kept: count,
      skipped: count,
      errors: count,
      stalls: count,
      meanNativeUs: z.number(),
    }),
    series: liveSampleSeriesSchema,
    samplesIncluded: z.boolean(),
    devices: z.array(
      z.object({
        index: count,
        samples: count,
        firstUs: us,
        lastUs: us,
        baselineUsedBytes: z.number(),
        peakUsedBytes: z.number(),
        peakAtUs: us,
        endUsedBytes: z.number(),
        minFreeBytes: z.number(),
        totalBytes: z.number(),
        name: z.string(),
        uuid: z.string(),
        reservedBytes: bytesOrNull,
      }),
    ),
    processes: z.array(
      z.object({
        device: count,
        pid: z.number().int(),
        samples: count,
        unknownSamples: count,
        firstUs: us,
        lastUs: us,
        firstBytes: bytesOrNull,
        lastBytes: bytesOrNull,
        peakBytes: bytesOrNull,
        peakAtUs: us.nullable(),
        rises: count,
        falls: count,
        command: z.string().nullable(),
        relation: z.enum(['target', 'target-descendant', 'workbench', 'other']).nullable(),
        parents: z.array(z.number().int()).nullable(),
        flag: z.object({ kind: z.enum(['exited', 'not-visible', 'foreign']), text: z.string(), fix: z.string() }).nullable(),
        growth: z.object({ bytes: z.number(), overUs: z.number(), steady: z.boolean(), text: z.string() }),
      }),
    ),
    problems: z.array(z.string()),
  }),
);
