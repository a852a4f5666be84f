import { ApiError } from '../../core/api/channels';
import { sampleSeriesSchema } from '../../core/memory/sample-series-schema';
import { samplesToCsv } from '../../core/memory/samples-csv';
import { decodeTimeline } from '../../core/memory/timeline-wire';
import { writeFileAtomic } from '../services/safe-fs';
import { TraceTooLargeError, writeTimelineTrace } from './write-trace';

export type MemoryExportRequest = { format: 'trace'; timeline: unknown } | { format: 'csv'; series: unknown };

/**
 * What the Memory tab exports, written to `path` (already a full path the user chose). The timeline or the series
 * comes from the renderer, so it is decoded and checked as any outside data is before a byte is written.
 */
export async function exportMemory(request: MemoryExportRequest, path: string): Promise<{ path: string; bytes: number; events: number | null }> {
  if (request.format === 'trace') {
    let timeline;
    try {
      timeline = decodeTimeline(request.timeline);
    } catch (error) {
      throw new ApiError(`The timeline to export is not one the workbench can write: ${(error as Error).message}`, 'MEMORY_EXPORT_INVALID');
    }
    try {
      const written = await writeTimelineTrace([timeline], path, { source: `gpu-workbench: ${timeline.title}` });
      return { path, ...written };
    } catch (error) {
      if (error instanceof TraceTooLargeError) throw new ApiError(error.message, 'MEMORY_TRACE_TOO_LARGE');
      throw error;
    }
  }
  const parsed = sampleSeriesSchema.safeParse(request.series);
  if (!parsed.success)
    throw new ApiError(`The samples to export are not a sample series: ${parsed.error.issues[0]?.message ?? 'malformed'}`, 'MEMORY_EXPORT_INVALID');
  const text = samplesToCsv(parsed.data);
  await writeFileAtomic(path, text);
  return { path, bytes: Buffer.byteLength(text), events: null };
}
