/**
 * NVML samples as CSV for a spreadsheet: one row per sample and device (time, device, used, free, total), and one
 * column per process with its memory on that device: 0 where a sample lists processes and not this one on that
 * device, empty where NVML did not say (no process list at that sample, or no amount for the process). Process commands come from /proc and are anyone's text: cells are quoted, and a cell a spreadsheet would
 * read as a formula is prefixed with an apostrophe.
 */
import type { SampleSeries } from './samples';
import { commandOf, orderedSamples } from './samples-timeline';

function cell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

const number = (n: number | null | undefined) => (n === null || n === undefined || !Number.isFinite(n) ? '' : String(n));

export function samplesToCsv(series: SampleSeries): string {
  const samples = orderedSamples(series);
  const known = new Map(series.processes.map((p) => [p.pid, p]));
  const pids = new Set(series.processes.map((p) => p.pid));
  for (const s of samples) for (const p of s.processes ?? []) pids.add(p.pid);
  const columns = [...pids];
  const names = new Map(series.devices.map((d) => [d.index, d.name]));

  const header = [
    'time_us',
    'time_utc',
    'device',
    'device_name',
    'used_bytes',
    'free_bytes',
    'total_bytes',
    ...columns.map((pid) => `pid ${pid} (${commandOf(known.get(pid))})`),
  ];
  const rows = [header.map(cell).join(',')];
  for (const s of samples) {
    const iso = Number.isFinite(s.timeUs / 1000) && Math.abs(s.timeUs / 1000) < 8.64e15 ? new Date(s.timeUs / 1000).toISOString() : '';
    for (const d of s.devices) {
      const held = new Map<number, number | null>();
      for (const p of s.processes ?? []) if (p.device === d.index) held.set(p.pid, p.usedBytes);
      rows.push(
        [
          number(s.timeUs),
          iso,
          String(d.index),
          cell(names.get(d.index) ?? ''),
          number(d.usedBytes),
          number(d.freeBytes),
          number(d.totalBytes),
          ...columns.map((pid) => (s.processes === null ? '' : held.has(pid) ? number(held.get(pid)) : '0')),
        ].join(','),
      );
    }
  }
  return rows.join('\n') + '\n';
}
