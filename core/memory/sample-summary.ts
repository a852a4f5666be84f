/**
 * What a monitoring session says at the end, kept up sample by sample (so it covers every sample, also
 * those the store has since dropped): per device the baseline, the peak and when, the end; per process on
 * each device its first, last and peak memory and how it moved — a leak shows as steady growth.
 */
import { formatBytes } from '../format';
import { listingsByRow, type RowListing } from './row-listings';
import type { MemorySample, ProcessMemorySample } from './samples';

export interface DeviceTrend {
  index: number;
  samples: number;
  firstUs: number;
  lastUs: number;
  baselineUsedBytes: number;
  peakUsedBytes: number;
  peakAtUs: number;
  endUsedBytes: number;
  minFreeBytes: number;
  totalBytes: number;
}

export interface ProcessTrend {
  device: number;
  pid: number;
  /** Samples that listed it. */
  samples: number;
  /** Of those, the ones where NVML could not tell its memory. */
  unknownSamples: number;
  firstUs: number;
  lastUs: number;
  /** Its first and last known memory (null while NVML never told). */
  firstBytes: number | null;
  lastBytes: number | null;
  peakBytes: number | null;
  peakAtUs: number | null;
  /** From one known value to the next: how often it went up, and down. */
  rises: number;
  falls: number;
}

/** Processes followed at most (a session of days can see many short-lived ones); past it new ones are counted. */
export const MAX_PROCESS_TRENDS = 10_000;

/** Growth below this is noise (allocator rounding, the driver's own bookkeeping). */
export const GROWTH_NOISE_BYTES = 2 * 2 ** 20;

export class SeriesSummarizer {
  private readonly deviceTrends = new Map<number, DeviceTrend>();
  private readonly processTrends = new Map<number, Map<number, ProcessTrend>>();
  private count = 0;
  private trends = 0;
  private left = 0;

  get samples(): number {
    return this.count;
  }

  /** Process entries (one per process per sample) of processes past MAX_PROCESS_TRENDS, left out of the summary. */
  get untracked(): number {
    return this.left;
  }

  observe(sample: MemorySample): void {
    this.count++;
    const t = sample.timeUs;
    for (const d of sample.devices) this.observeDevice(d.index, t, d.usedBytes, d.freeBytes, d.totalBytes);
    if (sample.processes) this.observeProcesses(t, sample.processes);
  }

  /**
   * Samples as rows (time, then per device used, free, total: the sample store's layout), with the
   * processes of those that listed them: what a sampling thread hands over, taken in with no object per sample.
   */
  observeRows(rows: Float64Array, count: number, deviceCount: number, listed: readonly RowListing[]): void {
    const width = 1 + 3 * deviceCount;
    const processesAt = listingsByRow(listed);
    for (let i = 0; i < count; i++) {
      this.count++;
      const at = i * width;
      const t = rows[at]!;
      for (let j = 0; j < deviceCount; j++) this.observeDevice(j, t, rows[at + 1 + 3 * j]!, rows[at + 2 + 3 * j]!, rows[at + 3 + 3 * j]!);
      const processes = processesAt(i);
      if (processes) this.observeProcesses(t, processes);
    }
  }

  private observeDevice(index: number, t: number, usedBytes: number, freeBytes: number, totalBytes: number): void {
    const trend = this.deviceTrends.get(index);
    if (!trend) {
      this.deviceTrends.set(index, {
        index,
        samples: 1,
        firstUs: t,
        lastUs: t,
        baselineUsedBytes: usedBytes,
        peakUsedBytes: usedBytes,
        peakAtUs: t,
        endUsedBytes: usedBytes,
        minFreeBytes: freeBytes,
        totalBytes,
      });
      return;
    }
    trend.samples++;
    trend.lastUs = t;
    trend.endUsedBytes = usedBytes;
    trend.totalBytes = totalBytes;
    if (usedBytes > trend.peakUsedBytes) {
      trend.peakUsedBytes = usedBytes;
      trend.peakAtUs = t;
    }
    if (freeBytes < trend.minFreeBytes) trend.minFreeBytes = freeBytes;
  }

  private observeProcesses(t: number, processes: readonly ProcessMemorySample[]): void {
    for (const p of processes) {
      let onDevice = this.processTrends.get(p.device);
      if (!onDevice) this.processTrends.set(p.device, (onDevice = new Map()));
      let trend = onDevice.get(p.pid);
      if (!trend) {
        if (this.trends >= MAX_PROCESS_TRENDS) {
          this.left++;
          continue;
        }
        this.trends++;
        trend = {
          device: p.device,
          pid: p.pid,
          samples: 0,
          unknownSamples: 0,
          firstUs: t,
          lastUs: t,
          firstBytes: null,
          lastBytes: null,
          peakBytes: null,
          peakAtUs: null,
          rises: 0,
          falls: 0,
        };
        onDevice.set(p.pid, trend);
      }
      trend.samples++;
      trend.lastUs = t;
      const used = p.usedBytes;
      if (used === null) {
        trend.unknownSamples++;
        continue;
      }
      if (trend.lastBytes !== null) {
        if (used > trend.lastBytes) trend.rises++;
        else if (used < trend.lastBytes) trend.falls++;
      }
      trend.firstBytes ??= used;
      trend.lastBytes = used;
      if (trend.peakBytes === null || used > trend.peakBytes) {
        trend.peakBytes = used;
        trend.peakAtUs = t;
      }
    }
  }

  devices(): DeviceTrend[] {
    return [...this.deviceTrends.values()].sort((a, b) => a.index - b.index).map((t) => ({ ...t }));
  }

  processes(): ProcessTrend[] {
    return [...this.processTrends.values()].flatMap((m) => [...m.values()].map((t) => ({ ...t }))).sort((a, b) => a.device - b.device || a.pid - b.pid);
  }
}

export interface Growth {
  /** Last known minus first known (0 while unknown). */
  bytes: number;
  overUs: number;
  /** Grew by more than noise, and never fell on the way: what a leak looks like. */
  steady: boolean;
  /** One sentence: "grew by 300 MiB over 3.0 s, steadily (30 rises, no fall)". */
  text: string;
}

const seconds = (us: number) => `${(us / 1e6).toFixed(us < 10e6 ? 1 : 0)} s`;
const times = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** How a process's memory moved from its first sample to its last. */
export function growthOf(trend: ProcessTrend): Growth {
  const overUs = trend.lastUs - trend.firstUs;
  if (trend.firstBytes === null || trend.lastBytes === null)
    return { bytes: 0, overUs, steady: false, text: 'NVML did not report its memory (some drivers and containers do not)' };
  const bytes = trend.lastBytes - trend.firstBytes;
  if (trend.samples < 2) return { bytes: 0, overUs, steady: false, text: 'seen in one sample only' };
  if (Math.abs(bytes) < GROWTH_NOISE_BYTES)
    return {
      bytes,
      overUs,
      steady: false,
      text: `held steady over ${seconds(overUs)}${trend.peakBytes !== null && trend.peakBytes - trend.firstBytes >= GROWTH_NOISE_BYTES ? ` (it peaked higher, then came back)` : ''}`,
    };
  if (bytes < 0) return { bytes, overUs, steady: false, text: `shrank by ${formatBytes(-bytes)} over ${seconds(overUs)}` };
  const steady = trend.falls === 0 && trend.rises >= 2;
  return {
    bytes,
    overUs,
    steady,
    text: steady
      ? `grew by ${formatBytes(bytes)} over ${seconds(overUs)}, steadily (${times(trend.rises, 'rise', 'rises')}, never down): a leak looks like this`
      : `grew by ${formatBytes(bytes)} over ${seconds(overUs)} (${times(trend.rises, 'rise', 'rises')}, ${times(trend.falls, 'fall', 'falls')})`,
  };
}
