/**
 * What the `memory.open` channel answers: the memory timelines of a file the user opened (a PyTorch snapshot
 * pickle: one per device with data; a saved run result: one; a Chrome trace: one per process), ready for the wire,
 * each with its summary.
 */
import * as z from 'zod';

import { schemaFor } from '../api/typed-schema';
import type { RunResult } from '../runner/run-result';
import { NoEventLogError } from './run-timeline';
import { checkRunForTimeline, RunLogError } from './run-log-schema';
import type { SnapshotModel } from './snapshot-model';
import { timelineFromSnapshot } from './snapshot-timeline';
import type { TraceEventRow } from './trace-timeline';
import type { Timeline } from './timeline';
import { summarizeTimeline, timelineSummarySchema, type TimelineSummary } from './timeline-model';
import { encodeTimeline, timelineWireSchema, type TimelineWire } from './timeline-wire';

export type MemoryFileKind = 'snapshot' | 'run' | 'trace';

export interface MemoryOpenResult {
  path: string;
  kind: MemoryFileKind;
  /** Decode each with decodeTimeline (core/memory/timeline-wire.ts). */
  timelines: TimelineWire[];
  /** One per timeline, in the same order. */
  summary: TimelineSummary[];
  /** What the reader wants the user to know (a snapshot with no trace, events left out, …). */
  notes: string[];
  /** A Chrome trace's events that have a duration, in a table (core/memory/trace-timeline.ts); absent for other files. */
  traceEvents?: { rows: TraceEventRow[]; more: number };
  timings: { readMs: number; parseMs: number; modelMs: number; timelineMs: number; bytes: number };
}

/** What memory.open answers: each timeline's wire checked as the renderer will read it; a summary is checked as an object. */
export const memoryOpenResultSchema = schemaFor<MemoryOpenResult>()(
  z.object({
    path: z.string(),
    kind: z.enum(['snapshot', 'run', 'trace']),
    timelines: z.array(timelineWireSchema),
    summary: z.array(timelineSummarySchema),
    notes: z.array(z.string()),
    traceEvents: z
      .object({
        rows: z.array(z.object({ name: z.string(), cat: z.string(), count: z.number().int().min(0), totalUs: z.number(), longestUs: z.number() })),
        more: z.number().int().min(0),
      })
      .optional(),
    timings: z.object({ readMs: z.number(), parseMs: z.number(), modelMs: z.number(), timelineMs: z.number(), bytes: z.number() }),
  }),
);

/** What memory.open streams while it works: the phase it entered. */
export type MemoryOpenEvent = { kind: 'phase'; phase: 'read' | 'parse' | 'model' | 'timeline' };

/** The devices of a snapshot that have a trace or segments, each as a timeline. */
export function snapshotTimelines(model: SnapshotModel, name?: string): Timeline[] {
  return model.devices
    .filter((t) => t.count > 0 || model.segments.some((s) => s.device === t.device))
    .map((t) => timelineFromSnapshot(model, t.device, name ? { name } : {}));
}

/** A saved result file's run: a RunOutcome's `result` (what the workbench saves), or a bare RunResult; checked. */
export function runFromSavedJson(value: unknown): RunResult {
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  if (record && 'diagnosis' in record && 'status' in record) {
    if (record['result'] === null || record['result'] === undefined)
      throw new NoEventLogError(
        `This result holds no record of a run on the device (its status is "${String(record['status']).slice(0, 40)}"), so there is no memory timeline to draw.`,
      );
    return checkRunForTimeline(record['result']);
  }
  if (record && 'runId' in record && 'steps' in record) return checkRunForTimeline(record);
  throw new RunLogError('This JSON file is not a run result saved by the workbench (it has neither a run outcome nor a run result at its top level).');
}

/** Timelines on the wire with their summaries. */
export function memoryOpenResult(
  path: string,
  kind: MemoryFileKind,
  timelines: Timeline[],
  notes: string[],
  timings: Omit<MemoryOpenResult['timings'], 'timelineMs'> & { timelineMs?: number },
): MemoryOpenResult {
  const started = Date.now();
  const summary = timelines.map(summarizeTimeline);
  const wires = timelines.map((t) => encodeTimeline(t));
  return { path, kind, timelines: wires, summary, notes, timings: { ...timings, timelineMs: (timings.timelineMs ?? 0) + (Date.now() - started) } };
}
