import { formatBytes } from '../../core/format';
import type { ComparedFigure } from '../../core/kernel-profile/profile-compare';
import { profileFindings, sectorsPerRequest, STALL_WORDS, type ProfileThresholds } from '../../core/kernel-profile/profile-findings';
import type { AccessFigures, Profile, ProgramProfile, StallReason } from '../../core/kernel-profile/profile';
import { noCountersMessage } from '../../core/kernel-profile/no-counters';

const access = (a: AccessFigures | null) => (a && a.requests ? `${sectorsPerRequest(a)} (ideal ${(a.idealSectors / a.requests).toFixed(1)})` : '—');

/** The profile as the terminal shows it: the launch, each finding, the figures, and the lines that matter most. */
export function renderProfile(profile: Profile, thresholds?: ProfileThresholds): string {
  const k = profile.kernel;
  const out = [`Profile of ${k.entry}<<<(${k.grid.join(',')}), (${k.block.join(',')})>>> (step ${k.step + 1}) on ${profile.device.name}`];
  for (const f of profileFindings(profile, thresholds)) {
    out.push(`${f.severity === 'problem' ? '✗' : '·'} ${f.headline}`);
    out.push(...wrap(f.detail).map((l) => `    ${l}`));
  }
  const c = profile.counters;
  if (c) {
    out.push('', 'Figures (Nsight Compute)');
    out.push(`  time ${(c.durationNs / 1000).toFixed(2)} µs; DRAM read ${formatBytes(c.dramBytesRead)}, written ${formatBytes(c.dramBytesWritten)}`);
    out.push(`  sectors per request: loads ${access(c.loads)}, stores ${access(c.stores)}`);
    out.push(`  % of peak: memory ${c.memoryPct.toFixed(1)}, DRAM ${c.dramPct.toFixed(1)}, L2 ${c.l2Pct.toFixed(1)}, compute ${c.computePct.toFixed(1)}`);
    out.push(
      `  occupancy: achieved ${c.occupancy.achievedPct.toFixed(1)}%, theoretical ${c.occupancy.theoreticalPct.toFixed(1)}%, ${c.occupancy.registersPerThread} registers/thread`,
    );
    const total = c.lines.reduce((a, l) => a + l.samples, 0);
    const hot = [...c.lines].sort((a, b) => b.samples - a.samples).slice(0, 8);
    if (hot.length) out.push('', `Lines of ${k.sourceFile} by share of samples`);
    for (const l of hot) {
      const top = (Object.entries(l.stalls) as [StallReason, number][]).sort((a, b) => b[1] - a[1])[0];
      const memory = [l.loads ? `loads ${access(l.loads)}` : '', l.stores ? `stores ${access(l.stores)}` : ''].filter(Boolean).join(', ');
      out.push(
        `  ${k.sourceFile}:${l.line}  ${total ? ((100 * l.samples) / total).toFixed(1) : '0.0'}%${top ? `  mostly ${STALL_WORDS[top[0]]}` : ''}${memory ? `  [${memory}]` : ''}`,
      );
    }
  }
  return out.join('\n');
}

export function renderComparison(figures: ComparedFigure[]): string {
  const rows = figures.map((f) => {
    const value = (v: number | null) =>
      v === null ? '—' : `${v.toFixed(v >= 100 ? 0 : 2)}${f.unit && !f.unit.startsWith('%') ? ` ${f.unit}` : f.unit ? '%' : ''}`;
    const change =
      f.change === null
        ? ''
        : ` (${f.change >= 0 ? '+' : ''}${(100 * f.change).toFixed(1)}%${f.better ? ((f.better === 'lower') === f.change < 0 ? ', better' : f.change === 0 ? '' : ', worse') : ''})`;
    return `  ${f.name}: ${value(f.before)} → ${value(f.after)}${change}`;
  });
  return ['Before → after', ...rows].join('\n');
}

function wrap(text: string, width = 110): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** A program's profiled launches: how it ended, then each launch as one kernel's profile. */
export function renderProgramProfile(profile: ProgramProfile): string {
  const e = profile.exit;
  const ended = e.timedOut
    ? 'was stopped at the time limit'
    : e.cancelled
      ? 'was cancelled'
      : e.signal
        ? `was killed by ${e.signal}`
        : `exited with code ${e.code}`;
  const out = [`${profile.command.join(' ')} ${ended}; ${profile.kernels.length} kernel launch${profile.kernels.length === 1 ? '' : 'es'} profiled.`];
  if (profile.noCounters) {
    const m = noCountersMessage(profile.noCounters.reason, profile.noCounters.detail, 'the program’s kernels');
    out.push(`✗ ${m.headline}`, ...wrap(m.body.replace(/ Still given below:.*$/, '')).map((l) => `    ${l}`));
  }
  profile.kernels.forEach((k, i) => out.push('', `Launch ${i + 1}:`, renderProfile(k)));
  return out.join('\n');
}
