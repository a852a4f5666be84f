/**
 * What a monitoring session answers when it ends (`gpu-workbench monitor --json`, and the monitor.start
 * channel): how it ended, per device the baseline, peak and end, per process its memory over time and
 * its flag, and the series itself (its samples only when asked: a long session holds millions).
 */
import { growthOf, type DeviceTrend, type Growth, type ProcessTrend } from './sample-summary';
import type { ProcessRelation } from './process-flags';
import type { SampledDevice, SampledProcess, SampleSeries } from './samples';

export type MonitorEnd =
  | { kind: 'duration'; durationS: number }
  /** The monitored process ended (code and signal are known only for a command the monitor started). */
  | { kind: 'target-exited'; pid: number; code: number | null; signal: string | null }
  /** Ctrl-C, the Stop button, or the caller cancelled. */
  | { kind: 'stopped' }
  | { kind: 'failed'; message: string };

export interface MonitorTarget {
  pid: number;
  /** Its command line (the one given after --, or read from /proc). */
  command: string | null;
  /** Whether the monitor started it (`-- command`) or followed one already running (--pid). */
  startedByMonitor: boolean;
  /** How it ended, when it did and the monitor could see (a command it started). */
  exit: { code: number | null; signal: string | null } | null;
  /** The monitor stopped it (the duration passed, or Ctrl-C) rather than it ending by itself. */
  stoppedByMonitor: boolean;
  /** Its descendants still running when it ended (stopped with its process group), with what they held. */
  leftBehind: { pid: number; command: string | null; heldBytes: number | null }[];
}

export interface SamplingStats {
  intervalMs: number;
  /** How often processes were listed (at most as often as samples were taken). */
  processIntervalMs: number;
  /** 'thread': a native sampling thread, drained four times a second; 'worker': a JS timer, each NVML call on a libuv thread; 'inline': each on the JS thread. */
  mode: 'thread' | 'worker' | 'inline';
  samples: number;
  /** Samples kept in the series (the rest dropped past its bound). */
  kept: number;
  /** Ticks not sampled: the previous call was still in flight, or the host was busy past the tick. */
  skipped: number;
  /** NVML calls that failed. */
  errors: number;
  /** Times an NVML call took longer than the stall limit. */
  stalls: number;
  /** Mean µs one NVML call took inside the addon. */
  meanNativeUs: number;
}

export interface DeviceMemorySummary extends DeviceTrend {
  name: string;
  uuid: string;
  /** The driver's own reserve (in used), where NVML reports it. */
  reservedBytes: number | null;
}

export interface ProcessMemorySummary extends ProcessTrend {
  command: string | null;
  relation: ProcessRelation | null;
  /**
   * For one the monitored process started ('target-descendant'): its parent, that one's parent, … up to the
   * monitored process, nearest first ([target] for a child of it). Read from /proc, or, for one gone before NVML's
   * listing of it was read, from what the monitor recorded while it ran. Null otherwise.
   */
  parents: number[] | null;
  flag: SampledProcess['flag'];
  growth: Growth;
}

export interface MonitorReport {
  startedAtUs: number;
  endedAtUs: number;
  end: MonitorEnd;
  target: MonitorTarget | null;
  sampling: SamplingStats;
  series: SampleSeries;
  /** Whether series.samples holds the samples (asked for), or is left empty. */
  samplesIncluded: boolean;
  devices: DeviceMemorySummary[];
  processes: ProcessMemorySummary[];
  /** What went wrong on the way, for a person: stalls, NVML errors, what could not be read. */
  problems: string[];
}

export interface ReportInput {
  startedAtUs: number;
  endedAtUs: number;
  end: MonitorEnd;
  target: MonitorTarget | null;
  sampling: SamplingStats;
  devices: SampledDevice[];
  reservedBytes: (number | null)[];
  deviceTrends: DeviceTrend[];
  processTrends: ProcessTrend[];
  processes: SampledProcess[];
  relations: ReadonlyMap<number, ProcessRelation | null>;
  /** See ProcessMemorySummary.parents. */
  parents?: ReadonlyMap<number, number[]>;
  series: SampleSeries;
  samplesIncluded: boolean;
  problems: string[];
}

/** Puts the pieces together; pure. Processes come flagged first, then by peak memory. */
export function buildMonitorReport(input: ReportInput): MonitorReport {
  const byPid = new Map(input.processes.map((p) => [p.pid, p]));
  const devices = input.deviceTrends.map((t) => {
    const d = input.devices.find((x) => x.index === t.index);
    return { ...t, name: d?.name ?? `GPU ${t.index}`, uuid: d?.uuid ?? '', reservedBytes: input.reservedBytes[t.index] ?? null };
  });
  const processes = input.processTrends
    .map((t) => {
      const p = byPid.get(t.pid);
      const relation = input.relations.get(t.pid) ?? null;
      const parents = relation === 'target-descendant' ? (input.parents?.get(t.pid) ?? null) : null;
      return { ...t, command: p?.command ?? null, relation, parents, flag: p?.flag ?? null, growth: growthOf(t) };
    })
    .sort((a, b) => Number(b.flag !== null) - Number(a.flag !== null) || (b.peakBytes ?? 0) - (a.peakBytes ?? 0) || a.pid - b.pid);
  return {
    startedAtUs: input.startedAtUs,
    endedAtUs: input.endedAtUs,
    end: input.end,
    target: input.target,
    sampling: input.sampling,
    series: input.series,
    samplesIncluded: input.samplesIncluded,
    devices,
    processes,
    problems: input.problems,
  };
}
