/**
 * NVML samples as timeline counters: each device's used (and free) memory drawn against its total, and each
 * process's memory on each device as a track of its own, flagged when the process has exited, is not visible
 * here, or is nobody's the user runs. Used by the monitor's timeline, and by a run's when samples were taken
 * while it ran (then on the run's axis).
 */
import { formatBytes } from '../format';
import type { MemorySample, SampledProcess, SampleSeries } from './samples';
import type { Timeline, TimelineCounter, TimelineMarker } from './timeline';
import { CounterBuilder, counterHead, emptyAllocations, emptySpans } from './timeline-columns';
import { counterPeak } from './timeline-model';

const COMMAND_CHARS = 120;

export const gpuName = (index: number) => `GPU ${index}`;

export function commandOf(process: SampledProcess | undefined): string {
  const command = process?.command?.trim();
  if (!command) return 'command unknown';
  return command.length > COMMAND_CHARS ? `${command.slice(0, COMMAND_CHARS - 1)}…` : command;
}

/** The samples in time order (they arrive in order; a series merged from elsewhere may not be). */
export function orderedSamples(series: SampleSeries): MemorySample[] {
  const samples = series.samples.filter((s) => Number.isFinite(s.timeUs));
  for (let i = 1; i < samples.length; i++) if (samples[i - 1]!.timeUs > samples[i]!.timeUs) return [...samples].sort((a, b) => a.timeUs - b.timeUs);
  return samples;
}

/** The last sample taken at or before `epochUs` (the first one when all came after); null without samples. */
export function sampleAt(series: SampleSeries, epochUs: number): MemorySample | null {
  const samples = orderedSamples(series);
  let found: MemorySample | null = null;
  for (const s of samples) {
    if (s.timeUs > epochUs) break;
    found = s;
  }
  return found ?? samples[0] ?? null;
}

/** One line per process holding memory in a sample (most first): what an OOM's or a peak's detail lists. */
export function processLines(series: SampleSeries, sample: MemorySample, device: number | null): string[] {
  if (sample.processes === null) return ['The driver could not list the processes at that moment.'];
  const byPid = new Map(series.processes.map((p) => [p.pid, p]));
  const listed = sample.processes.filter((p) => device === null || p.device === device);
  if (!listed.length) return ['No process held memory on the device then (as NVML saw it).'];
  return [...listed]
    .sort((a, b) => (b.usedBytes ?? -1) - (a.usedBytes ?? -1))
    .map((p) => {
      const info = byPid.get(p.pid);
      const used = p.usedBytes === null ? 'an amount NVML does not report' : formatBytes(p.usedBytes);
      const flag = info?.flag ? ` — ${info.flag.text} ${info.flag.fix}` : '';
      return `pid ${p.pid} (${commandOf(info)}) on ${gpuName(p.device)}: ${used}${flag}`;
    });
}

/**
 * Counters from the samples, times made relative to `originUs`: per device its used memory (and, with `free`,
 * its free memory) with the device's total as capacity; per device and process the process's memory. A process
 * not listed in a sample that lists processes holds nothing then (0); an amount NVML does not report is left out
 * rather than drawn as 0.
 */
export function sampleCounters(series: SampleSeries, originUs: number, options: { free?: boolean } = {}): TimelineCounter[] {
  const samples = orderedSamples(series);
  const deviceInfo = new Map(series.devices.map((d) => [d.index, d]));
  const processInfo = new Map(series.processes.map((p) => [p.pid, p]));
  const multiDevice = new Set([...series.devices.map((d) => d.index), ...samples.flatMap((s) => s.devices.map((d) => d.index))]).size > 1;
  const used = new Map<number, CounterBuilder>();
  const free = new Map<number, CounterBuilder>();
  const processes = new Map<string, CounterBuilder>();

  for (const s of samples) {
    const at = s.timeUs - originUs;
    for (const d of s.devices) {
      let u = used.get(d.index);
      if (!u) {
        const info = deviceInfo.get(d.index);
        const total = info?.totalBytes ?? d.totalBytes;
        const name = info?.name ? ` · ${info.name}` : '';
        used.set(d.index, (u = new CounterBuilder(counterHead(`device:${d.index}:used`, `${gpuName(d.index)} used${name}`, 'device', { capacity: total }))));
        if (options.free)
          free.set(d.index, new CounterBuilder(counterHead(`device:${d.index}:free`, `${gpuName(d.index)} free${name}`, 'device', { capacity: total })));
      }
      if (Number.isFinite(d.usedBytes)) u.push(at, d.usedBytes);
      if (Number.isFinite(d.freeBytes)) free.get(d.index)?.push(at, d.freeBytes);
    }
    if (s.processes === null) continue;
    const seen = new Set<string>();
    for (const p of s.processes) {
      const key = `${p.device}:${p.pid}`;
      seen.add(key);
      let track = processes.get(key);
      if (!track) {
        const info = processInfo.get(p.pid);
        const where = multiDevice ? ` on ${gpuName(p.device)}` : '';
        processes.set(
          key,
          (track = new CounterBuilder(
            counterHead(`process:${p.device}:${p.pid}`, `pid ${p.pid} · ${commandOf(info)}${where}`, 'process', {
              pid: p.pid,
              ...(info?.flag ? { flag: info.flag } : {}),
              ...(deviceInfo.get(p.device) ? { capacity: deviceInfo.get(p.device)!.totalBytes } : {}),
            }),
          )),
        );
      }
      if (p.usedBytes !== null && Number.isFinite(p.usedBytes)) track.push(at, p.usedBytes);
    }
    // Gone from the list: it holds nothing any more.
    for (const [key, track] of processes) if (!seen.has(key) && Number.isFinite(track.last)) track.push(at, 0);
  }
  return [...used.keys()]
    .sort((a, b) => a - b)
    .flatMap((d) => [used.get(d)!.finish(), ...(free.has(d) ? [free.get(d)!.finish()] : [])])
    .concat([...processes.values()].map((p) => p.finish()));
}

/** A device's peak as a marker, with the processes that held memory at that sample. */
export function devicePeakMarkers(series: SampleSeries, counters: TimelineCounter[], originUs: number): TimelineMarker[] {
  const out: TimelineMarker[] = [];
  for (const c of counters) {
    const m = /^device:(\d+):used$/.exec(c.id);
    if (!m) continue;
    const peak = counterPeak(c);
    if (!peak || peak.value <= 0) continue;
    const device = Number(m[1]);
    const sample = sampleAt(series, originUs + peak.timeUs);
    const capacity = c.capacity ? ` of ${formatBytes(c.capacity)}` : '';
    out.push({
      kind: 'peak',
      timeUs: peak.timeUs,
      label: `${gpuName(device)} peak: ${formatBytes(peak.value)} used${capacity}`,
      detail: [`The most memory in use on ${gpuName(device)} in this recording.`, 'Held then:', ...(sample ? processLines(series, sample, device) : [])].join(
        '\n',
      ),
    });
  }
  return out;
}

/** A process that exited yet still holds memory: memory nobody can free but the driver (a leak of the machine's). */
function exitedProcessMarkers(series: SampleSeries, counters: TimelineCounter[], originUs: number): TimelineMarker[] {
  return series.processes
    .filter((p) => p.flag?.kind === 'exited')
    .map((p) => {
      const held = counters.filter((c) => c.group === 'process' && c.pid === p.pid).reduce((m, c) => Math.max(m, counterPeak(c)?.value ?? 0), 0);
      return {
        kind: 'leak' as const,
        timeUs: Math.max(0, p.firstSeenUs - originUs),
        label: `pid ${p.pid} has exited but holds ${formatBytes(held)}`,
        detail: [`pid ${p.pid} (${commandOf(p)}): ${p.flag!.text}`, p.flag!.fix].join('\n'),
      };
    });
}

export function sampleMarkers(series: SampleSeries, counters: TimelineCounter[], originUs: number): TimelineMarker[] {
  return [...devicePeakMarkers(series, counters, originUs), ...exitedProcessMarkers(series, counters, originUs)];
}

/** The monitor's timeline: the devices' used and free memory and each process's, from NVML samples alone. */
export function timelineFromSamples(series: SampleSeries, title: string): Timeline {
  const samples = orderedSamples(series);
  const originUs = samples[0]?.timeUs ?? 0;
  const counters = sampleCounters(series, originUs, { free: true });
  const devices = new Set(counters.filter((c) => c.group === 'device').map((c) => Number(/^device:(\d+):/.exec(c.id)![1])));
  const notes = [
    ...(samples.length ? [] : ['no samples yet']),
    ...(series.dropped > 0 ? [`the ${series.dropped} oldest samples were left out to bound memory`] : []),
  ];
  return {
    version: 1,
    source: 'monitor',
    title: notes.length ? `${title} (${notes.join('; ')})` : title,
    device: devices.size === 1 ? [...devices][0]! : null,
    originUs,
    durationUs: samples.length ? samples[samples.length - 1]!.timeUs - originUs : 0,
    counters,
    allocations: emptyAllocations(),
    spans: emptySpans(),
    markers: sampleMarkers(series, counters, originUs).sort((a, b) => a.timeUs - b.timeUs),
    labels: [],
    stacks: [],
    steps: [],
  };
}
