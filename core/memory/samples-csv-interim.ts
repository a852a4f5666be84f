/**
 * INTERIM: a minimal CSV of NVML samples for `gpu-workbench monitor --csv`, until the memory timeline's own
 * `samplesToCsv` lands in core/memory/ (the timeline work owns the format). When it does, point the import in
 * main/cli/monitor-command.ts at it and delete this file.
 *
 * One row per device per sample, and one per process per sample (long format: any spreadsheet or pandas
 * pivots it): time_us, elapsed_s, device, pid (empty on a device row), used_bytes (empty where NVML cannot
 * tell), free_bytes and total_bytes (empty on a process row). Produced in chunks, so a long session streams
 * to disk instead of becoming one string.
 */
import type { MemorySample } from './samples';

export const CSV_HEADER = 'time_us,elapsed_s,device,pid,used_bytes,free_bytes,total_bytes\n';

export function* samplesToCsv(samples: Iterable<MemorySample>, originUs?: number, rowsPerChunk = 4096): Generator<string> {
  let rows: string[] = [CSV_HEADER];
  let origin = originUs;
  for (const s of samples) {
    origin ??= s.timeUs;
    const elapsed = ((s.timeUs - origin) / 1e6).toFixed(6);
    for (const d of s.devices) rows.push(`${s.timeUs},${elapsed},${d.index},,${d.usedBytes},${d.freeBytes},${d.totalBytes}\n`);
    for (const p of s.processes ?? []) rows.push(`${s.timeUs},${elapsed},${p.device},${p.pid},${p.usedBytes ?? ''},,\n`);
    if (rows.length >= rowsPerChunk) {
      yield rows.join('');
      rows = [];
    }
  }
  if (rows.length) yield rows.join('');
}
