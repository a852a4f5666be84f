import { formatBytes, plural } from '../../core/format';
import type { MonitorReport, ProcessMemorySummary } from '../../core/memory/monitor-report';
import type { ProcessRelation } from '../../core/memory/process-flags';
import type { MemorySample } from '../../core/memory/samples';

/** Longest command line the text shows whole; a longer one (a `python3 -c` script) keeps its start and its end. */
const SHOWN_COMMAND_CHARS = 160;
const shown = (command: string | null) =>
  command === null
    ? '(command unknown)'
    : command.length <= SHOWN_COMMAND_CHARS
      ? command
      : `${command.slice(0, SHOWN_COMMAND_CHARS - 50).trimEnd()} … ${command.slice(-40).trimStart()}`;

const at = (us: number, originUs: number) => `+${((us - originUs) / 1e6).toFixed(1)} s`;

const RELATION: Record<ProcessRelation, string> = {
  target: 'the monitored process',
  'target-descendant': 'started by the monitored process',
  workbench: 'the workbench',
  other: '',
};

function describeEnd(report: MonitorReport): string {
  const { end, target } = report;
  const span = `${((report.endedAtUs - report.startedAtUs) / 1e6).toFixed(1)} s`;
  const who = target ? `${target.command ?? '(command unknown)'} (PID ${target.pid})` : 'the whole device';
  switch (end.kind) {
    case 'duration':
      return `Monitored ${who} for ${span}: the ${end.durationS} s asked for passed${target?.stoppedByMonitor ? `, so the command was stopped (SIGTERM to its process group, then SIGKILL)` : ''}.`;
    case 'target-exited': {
      const how =
        end.signal !== null
          ? `was killed by ${end.signal}`
          : end.code !== null
            ? `exited with code ${end.code}`
            : 'exited (its exit status is its parent’s to see)';
      return `Monitored ${who} for ${span}: it ${how}.`;
    }
    case 'stopped':
      return `Monitored ${who} for ${span}, until stopped${target?.stoppedByMonitor ? '; the command was stopped with it (SIGTERM to its process group, then SIGKILL)' : ''}.`;
    case 'failed':
      return `Monitoring ${who} stopped after ${span}: ${end.message}`;
  }
}

/** How it relates to the monitored process; for one it started, through which of its processes when not directly. */
function relationText(p: ProcessMemorySummary): string {
  if (!p.relation) return '';
  const through = p.relation === 'target-descendant' && p.parents && p.parents.length > 1 ? p.parents.slice(0, -1).reverse() : [];
  if (!through.length) return RELATION[p.relation];
  return `${RELATION[p.relation]}, through PID${through.length > 1 ? 's' : ''} ${through.join(' → ')}`;
}

function renderProcess(p: ProcessMemorySummary, origin: number): string[] {
  const relation = relationText(p);
  const tags = [relation, p.flag ? p.flag.kind.toUpperCase() : ''].filter(Boolean).join(', ');
  const lines = [`  ${p.flag ? '!' : ' '} PID ${p.pid}  ${shown(p.command)}${tags ? `  [${tags}]` : ''}  on GPU ${p.device}`];
  const peak = p.peakBytes === null ? 'memory not reported by NVML' : `peak ${formatBytes(p.peakBytes)} at ${at(p.peakAtUs!, origin)}`;
  lines.push(`      ${peak}; seen ${at(p.firstUs, origin)} to ${at(p.lastUs, origin)}; ${p.growth.text}`);
  if (p.flag) lines.push(`      ${p.flag.text}`, `      → ${p.flag.fix}`);
  return lines;
}

export function renderMonitorReport(report: MonitorReport): string {
  const origin = report.startedAtUs;
  const s = report.sampling;
  const out = [
    describeEnd(report),
    `Sampled every ${s.intervalMs} ms${s.processIntervalMs && s.processIntervalMs !== s.intervalMs ? ` (processes every ${s.processIntervalMs} ms)` : ''}${s.processIntervalMs ? '' : ' (device memory only)'}: ${plural(s.samples, 'sample')}, ${s.skipped} skipped${s.errors ? `, ${plural(s.errors, 'failed call')}` : ''}; NVML took ${s.meanNativeUs.toFixed(0)} µs a call on average.`,
  ];
  for (const d of report.devices) {
    out.push(
      '',
      `GPU ${d.index}  ${d.name}  (${formatBytes(d.totalBytes)}${d.reservedBytes !== null ? `, of which the driver reserves ${formatBytes(d.reservedBytes)}` : ''})`,
      `  used at the start ${formatBytes(d.baselineUsedBytes)} · peak ${formatBytes(d.peakUsedBytes)} at ${at(d.peakAtUs, origin)} (${d.peakUsedBytes >= d.baselineUsedBytes ? '+' : ''}${formatBytes(d.peakUsedBytes - d.baselineUsedBytes)}) · at the end ${formatBytes(d.endUsedBytes)} · least free ${formatBytes(d.minFreeBytes)}`,
    );
    const end = d.endUsedBytes - d.baselineUsedBytes;
    if (report.target?.exit && Math.abs(end) >= 2 * 2 ** 20)
      out.push(
        end > 0
          ? `  ${formatBytes(end)} more was in use at the end than before the program started, although it has ended: see below which processes still held memory, and any flagged.`
          : `  ${formatBytes(-end)} less was in use at the end than before the program started: another process freed memory meanwhile.`,
      );
  }
  if (report.processes.length) {
    out.push('', 'Processes that held GPU memory:');
    for (const p of report.processes) out.push(...renderProcess(p, origin));
  } else if (report.sampling.processIntervalMs) {
    out.push('', 'No process held GPU memory while monitored (or NVML could not list them: see the problems below).');
  }
  const left = report.target?.leftBehind ?? [];
  if (left.length) {
    out.push('', `Still running when the monitored process ended (stopped with its process group):`);
    for (const l of left) out.push(`    PID ${l.pid}  ${shown(l.command)}  held ${l.heldBytes === null ? 'an unknown amount' : formatBytes(l.heldBytes)}`);
  }
  if (report.problems.length) out.push('', 'Problems:', ...report.problems.map((p) => `  - ${p}`));
  return out.join('\n');
}

/** One line while monitoring (once a second): each device's use now and since the start, and the target's or the largest process's. */
export function renderProgressLine(latest: MemorySample, first: MemorySample, originUs: number, targetPid: number | null): string {
  const devices = latest.devices.map((d) => {
    const base = first.devices.find((b) => b.index === d.index)?.usedBytes ?? d.usedBytes;
    const delta = d.usedBytes - base;
    return `GPU ${d.index} ${formatBytes(d.usedBytes)} used (${delta >= 0 ? '+' : ''}${formatBytes(delta)})`;
  });
  const processes = latest.processes ?? [];
  const shown = processes.filter((p) => p.pid === targetPid);
  const largest = shown.length ? shown : [...processes].sort((a, b) => (b.usedBytes ?? 0) - (a.usedBytes ?? 0)).slice(0, 1);
  const who = largest.map((p) => `PID ${p.pid}${p.pid === targetPid ? ' (monitored)' : ''} ${p.usedBytes === null ? '?' : formatBytes(p.usedBytes)}`);
  return `[${at(latest.timeUs, originUs).slice(1).padStart(7)}] ${devices.join(' · ')}${who.length ? ` · ${who.join(', ')}` : ''}${processes.length > 1 ? ` · ${processes.length} processes` : ''}`;
}
