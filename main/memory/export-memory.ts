import { ApiError, monitorTimelineId, type ChannelRequest } from '../../core/api/channels';
import { checkRunForTimeline, RunLogError } from '../../core/memory/run-log-schema';
import { NoEventLogError, samplesDuring, timelineFromRun } from '../../core/memory/run-timeline';
import type { SampleSeries } from '../../core/memory/samples';
import { samplesToCsv } from '../../core/memory/samples-csv';
import { timelineFromSamples } from '../../core/memory/samples-timeline';
import type { Timeline } from '../../core/memory/timeline';
import { decodeTimeline } from '../../core/memory/timeline-wire';
import type { HeldResults } from '../services/held-results';
import { writeFileAtomic } from '../services/safe-fs';
import { TraceTooLargeError, writeTimelineTrace } from './write-trace';

type MemoryExportRequest = Omit<ChannelRequest<'memory.export'>, 'path'>;

const DOING = 'export';

/** The samples a monitoring session has streamed so far, when the host holds them; null otherwise (the run is drawn without). */
function monitorSamples(held: HeldResults, monitorId: string | undefined): SampleSeries | null {
  if (monitorId === undefined) return null;
  try {
    return held.samples(monitorTimelineId(monitorId), DOING);
  } catch {
    return null;
  }
}

/**
 * The timeline or the samples the id names, as the Memory tab draws them: an opened file's timeline, a run's (from
 * its event log, with its own samples or the monitor's taken while it ran), or a monitoring session's.
 */
function exported(request: MemoryExportRequest, held: HeldResults): { timeline: Timeline } | { series: SampleSeries } {
  const entry = held.entry(request.timelineId, DOING);
  if (entry.kind === 'timeline') {
    if (request.format === 'csv') throw new ApiError('A file’s timeline has no samples to export as CSV: export it as a trace.', 'MEMORY_EXPORT_INVALID');
    return { timeline: decodeTimeline(entry.wire) };
  }
  if (entry.kind === 'samples')
    return request.format === 'csv' ? { series: entry.live.series } : { timeline: timelineFromSamples(entry.live.series, 'Monitor') };
  if (entry.kind !== 'outcome')
    throw new ApiError(`That id names a ${entry.kind === 'profile' ? 'kernel profile' : 'sanitizer report'}, which has no memory timeline.`, 'HELD_KIND');
  const { result, samples } = entry.outcome;
  if (request.format === 'csv') {
    if (!samples) throw new ApiError('This run did not sample device memory: there are no samples to export.', 'MEMORY_EXPORT_INVALID');
    return { series: samples };
  }
  if (!result) throw new ApiError('This run has no result from the device: there is no memory timeline to export.', 'MEMORY_EXPORT_INVALID');
  try {
    // A held outcome may come from a file (run.open, bundle.open): checked for what a timeline reads, as the renderer checks it.
    const checked = checkRunForTimeline(result);
    return { timeline: timelineFromRun(checked, samples ?? samplesDuring(monitorSamples(held, request.monitorId), checked)) };
  } catch (error) {
    if (error instanceof NoEventLogError || error instanceof RunLogError) throw new ApiError(error.message, 'MEMORY_EXPORT_INVALID');
    throw error;
  }
}

/**
 * What the Memory tab exports, written to `path` (already a full path the user chose): the timeline or the samples
 * the host holds under the request's id — its own data, never sent back to it by the renderer.
 */
export async function exportMemory(
  request: MemoryExportRequest,
  path: string,
  held: HeldResults,
): Promise<{ path: string; bytes: number; events: number | null }> {
  const what = exported(request, held);
  if ('series' in what) {
    const text = samplesToCsv(what.series);
    await writeFileAtomic(path, text);
    return { path, bytes: Buffer.byteLength(text), events: null };
  }
  try {
    const written = await writeTimelineTrace([what.timeline], path, { source: `gpu-workbench: ${what.timeline.title}` });
    return { path, ...written };
  } catch (error) {
    if (error instanceof TraceTooLargeError) throw new ApiError(error.message, 'MEMORY_TRACE_TOO_LARGE');
    throw error;
  }
}
