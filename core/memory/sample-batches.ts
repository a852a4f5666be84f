/**
 * The monitor's samples as they stream in (monitor.start's batches), kept as one SampleSeries for
 * timelineFromSamples: bounded, so a session left running for days holds an hour's samples.
 */
import type { MemorySample, SampledProcess, SampleSeries } from './samples';

/** An hour at 10 samples a second; past it the oldest go, and the timeline says how many. */
export const MAX_MONITOR_SAMPLES = 36_000;

/** Merges a batch of samples into the series: processes by pid (a later listing replaces an earlier one), samples appended, bounded. */
export function addSamples(series: SampleSeries, samples: MemorySample[], processes: SampledProcess[]): SampleSeries {
  const byPid = new Map(series.processes.map((p) => [p.pid, p]));
  for (const p of processes) byPid.set(p.pid, { ...byPid.get(p.pid), ...p, firstSeenUs: Math.min(byPid.get(p.pid)?.firstSeenUs ?? Infinity, p.firstSeenUs) });
  const all = series.samples.concat(samples);
  const over = Math.max(0, all.length - MAX_MONITOR_SAMPLES);
  return { ...series, processes: [...byPid.values()], samples: over ? all.slice(over) : all, dropped: series.dropped + over };
}
