import { BYTES_PER_EVENT_ESTIMATE, chromeTraceChunks, countTraceEvents, MAX_TRACE_BYTES, TraceTooLargeError } from '../../core/memory/chrome-trace';
import type { SnapshotModel } from '../../core/memory/snapshot-model';
import type { Timeline } from '../../core/memory/timeline';
import { estimateTimelineTraceBytes, timelineTooLargeMessage, timelineTraceChunks } from '../../core/memory/timeline-trace';
import { formatBytes } from '../../core/format';
import { writeStreamAtomic } from '../services/safe-fs';

export { TraceTooLargeError };

/**
 * Streams trace chunks to `path`: written as they are made (never one giant string), through writeStreamAtomic
 * (a temporary file beside the target, flushed, renamed over it at the end), so a refused or failed export leaves
 * no half-written trace. Refused before writing when the estimate is past the limit, and stopped when the bytes
 * written pass it.
 */
async function writeTraceChunks(
  path: string,
  chunks: () => Iterable<string>,
  estimateBytes: number,
  maxBytes: number,
  tooLarge: (what: string) => TraceTooLargeError,
): Promise<number> {
  if (estimateBytes > maxBytes) throw tooLarge(`about ${formatBytes(estimateBytes)}`);
  let bytes = 0;
  await writeStreamAtomic(path, async (handle) => {
    let pending: string[] = [];
    let pendingChars = 0;
    const flush = async () => {
      if (!pending.length) return;
      const data = Buffer.from(pending.join(''), 'utf8');
      pending = [];
      pendingChars = 0;
      bytes += data.byteLength;
      if (bytes > maxBytes) throw tooLarge(`more than ${formatBytes(maxBytes)}`);
      await handle.write(data);
    };
    for (const chunk of chunks()) {
      pending.push(chunk);
      pendingChars += chunk.length;
      if (pendingChars >= 1 << 20) await flush();
    }
    await flush();
  });
  return bytes;
}

/** The Chrome trace of a snapshot model (what `gpu-workbench memory --trace` writes). */
export async function writeChromeTrace(
  model: SnapshotModel,
  path: string,
  options: { maxBytes?: number; source?: string } = {},
): Promise<{ bytes: number; events: number }> {
  const maxBytes = options.maxBytes ?? MAX_TRACE_BYTES;
  const estimate = countTraceEvents(model);
  const stats = { events: 0 };
  const tooLarge = (what: string) =>
    new TraceTooLargeError(
      `The trace would be ${what}, over the ${formatBytes(maxBytes)} that Perfetto and chrome://tracing can open in a browser tab (a 900 MB JSON trace crashes Perfetto's UI). ` +
        'Record a shorter window (torch.cuda.memory._record_memory_history with a smaller max_entries), or use the summary without --trace.',
    );
  const estimateBytes = estimate * BYTES_PER_EVENT_ESTIMATE;
  if (estimateBytes > maxBytes) throw tooLarge(`about ${formatBytes(estimateBytes)} (${estimate} events)`);
  const bytes = await writeTraceChunks(path, () => chromeTraceChunks(model, { source: options.source, stats }), estimateBytes, maxBytes, tooLarge);
  return { bytes, events: stats.events };
}

/** The Chrome trace of timelines (a run's, a snapshot's devices, a monitoring session's). */
export async function writeTimelineTrace(
  timelines: Timeline[],
  path: string,
  options: { maxBytes?: number; source?: string } = {},
): Promise<{ bytes: number; events: number }> {
  const maxBytes = options.maxBytes ?? MAX_TRACE_BYTES;
  const stats = { events: 0 };
  const tooLarge = (what: string) => new TraceTooLargeError(timelineTooLargeMessage(what, maxBytes));
  const bytes = await writeTraceChunks(
    path,
    () => timelineTraceChunks(timelines, { source: options.source, stats, maxChars: maxBytes }),
    estimateTimelineTraceBytes(timelines),
    maxBytes,
    tooLarge,
  );
  return { bytes, events: stats.events };
}
