import type { MonitorReport } from '../../core/memory/monitor-report';
import type { SampleStore } from '../../core/memory/sample-store';
import type { MemorySample, SampledProcess, SampleSeries } from '../../core/memory/samples';
import { samplesToCsv } from '../../core/memory/samples-csv';
import { timelineFromSamples } from '../../core/memory/samples-timeline';
import { writeStreamAtomic } from '../services/safe-fs';
import { writeTimelineTrace } from './write-trace';

/** Samples turned into CSV at a time: the file is written slice by slice, never held whole. */
export const CSV_SLICE_SAMPLES = 10_000;
/**
 * Samples a trace is made from at most (the newest): the timeline holds them all in memory, and a trace of more
 * would pass what Perfetto opens anyway (the trace writer refuses past its own byte bound).
 */
export const MAX_TRACE_SAMPLES = 500_000;

/**
 * The session's series with the given samples, every pid they list named among its processes (a pid the monitor
 * did not follow gets a bare entry), so every slice of a CSV has the same columns.
 */
function seriesWith(report: MonitorReport, store: SampleStore, samples: MemorySample[]): SampleSeries {
  const processes: SampledProcess[] = [...report.series.processes];
  const named = new Set(processes.map((p) => p.pid));
  for (const s of store.iterate())
    for (const p of s.processes ?? []) {
      if (named.has(p.pid)) continue;
      named.add(p.pid);
      processes.push({ pid: p.pid, command: null, flag: null, firstSeenUs: s.timeUs, lastSeenUs: s.timeUs });
    }
  return { intervalMs: report.series.intervalMs, devices: report.series.devices, processes, samples, dropped: store.dropped };
}

/** The session's newest samples (at most `max`) as a series: what a run's outcome keeps of its sampling. */
export function seriesOf(report: MonitorReport, store: SampleStore, max: number): SampleSeries {
  const samples = store.newest(max);
  return { ...seriesWith(report, store, samples), dropped: store.dropped + (store.length - samples.length) };
}

/** Every sample kept, as the timeline's CSV (core/memory/samples-csv.ts), written atomically in slices. */
export async function writeMonitorCsv(path: string, report: MonitorReport, store: SampleStore): Promise<{ samples: number }> {
  const base = seriesWith(report, store, []);
  const header = samplesToCsv(base);
  await writeStreamAtomic(path, async (handle) => {
    await handle.write(header);
    for (let from = 0; from < store.length; from += CSV_SLICE_SAMPLES) {
      const samples: MemorySample[] = [];
      for (let i = from; i < Math.min(store.length, from + CSV_SLICE_SAMPLES); i++) samples.push(store.at(i));
      const text = samplesToCsv({ ...base, samples });
      if (!text.startsWith(header)) throw new Error('the CSV columns changed between slices'); // cannot: every pid is named above
      await handle.write(text.slice(header.length));
    }
  });
  return { samples: store.length };
}

/** The session as a Chrome trace (Perfetto): its timeline (timelineFromSamples) through the timeline's trace writer. */
export async function writeMonitorTrace(
  path: string,
  report: MonitorReport,
  store: SampleStore,
  title: string,
): Promise<{ bytes: number; events: number; samples: number; leftOut: number }> {
  const samples = store.newest(MAX_TRACE_SAMPLES);
  const timeline = timelineFromSamples(seriesWith(report, store, samples), title);
  const written = await writeTimelineTrace([timeline], path, { source: 'gpu-workbench monitor' });
  return { ...written, samples: samples.length, leftOut: store.length - samples.length };
}
