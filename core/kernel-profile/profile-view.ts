import { formatMs, thousands } from '../format';
import { basenameOf } from '../workspace/paths';
import type { AccessFigures, Profile, ProfileLine, StallReason } from './profile';
import type { ComparedFigure } from './profile-compare';
import {
  DEFAULT_PROFILE_THRESHOLDS,
  effectiveBandwidth,
  formatRate,
  profileFindings,
  STALL_WORDS,
  type ProfileFinding,
  type ProfileThresholds,
} from './profile-findings';

/**
 * What the Profile tab and the editor's margin show of a profile, worded once (pure): the findings in the order a
 * person reads them, the kernel's figures each beside what it is measured against, a row per source line, and the
 * hover text of a line. The numbers are the profile's; nothing here measures.
 */

const pct = (n: number) => `${n.toFixed(1)}%`;

/** Findings with the problems (what to fix) first, each group in the order the profile gives. */
export function orderedFindings(profile: Profile, thresholds: ProfileThresholds = DEFAULT_PROFILE_THRESHOLDS): ProfileFinding[] {
  const all = profileFindings(profile, thresholds);
  return [...all.filter((f) => f.severity === 'problem'), ...all.filter((f) => f.severity !== 'problem')];
}

/** One of the kernel's figures: its value, and what it is measured against (the ideal, the peak, the theory). */
export interface KernelFigure {
  name: string;
  value: string;
  beside: string | null;
}

/** Sectors per request and the ideal for these accesses: what a coalesced warp would move. */
export interface AccessCell {
  perRequest: number;
  ideal: number;
  requests: number;
  /** Bytes each thread moves per access, when ncu says. */
  bytes: number | null;
}

const cell = (a: AccessFigures | null | undefined): AccessCell | null =>
  a && a.requests > 0
    ? { perRequest: a.sectors / a.requests, ideal: a.idealSectors / a.requests, requests: a.requests, bytes: a.accessBits ? a.accessBits / 8 : null }
    : null;

/** "32.0 where 4.0 would do", "4.0, the ideal". */
export function accessWords(c: AccessCell): string {
  const got = c.perRequest.toFixed(1);
  const ideal = c.ideal.toFixed(1);
  return got === ideal ? `${got}, the ideal` : `${got} where ${ideal} would do`;
}

function timeFigure(profile: Profile): KernelFigure | null {
  const c = profile.counters;
  if (c) return { name: 'Kernel time', value: formatMs(c.durationNs / 1e6), beside: 'measured by ncu, one launch' };
  const e = profile.effective;
  if (!e) return null;
  return { name: 'Kernel time', value: formatMs(e.kernelMs), beside: e.timedBy === 'events' ? 'median by CUDA events' : 'measured by ncu, one launch' };
}

/** The kernel's figures, each beside what it is measured against; only those the profile has. */
export function kernelFigures(profile: Profile, validatorOccupancyPct: number | null = null): KernelFigure[] {
  const out: KernelFigure[] = [];
  const time = timeFigure(profile);
  if (time) out.push(time);
  const c = profile.counters;
  if (c) {
    for (const [name, a] of [
      ['Sectors per load request', cell(c.loads)],
      ['Sectors per store request', cell(c.stores)],
    ] as const)
      if (a) out.push({ name, value: a.perRequest.toFixed(1), beside: `ideal ${a.ideal.toFixed(1)}${a.bytes ? ` for ${a.bytes}-byte accesses` : ''}` });
    out.push(
      { name: 'Memory throughput', value: pct(c.memoryPct), beside: 'of peak (the busiest memory unit)' },
      { name: 'Compute throughput', value: pct(c.computePct), beside: 'of peak (SM)' },
      { name: 'DRAM throughput', value: pct(c.dramPct), beside: 'of peak' },
      { name: 'L2 throughput', value: pct(c.l2Pct), beside: 'of peak' },
      {
        name: 'Achieved occupancy',
        value: pct(c.occupancy.achievedPct),
        beside: `theoretical ${pct(c.occupancy.theoreticalPct)}${validatorOccupancyPct === null ? '' : `; the validator's ${pct(validatorOccupancyPct)}`}`,
      },
    );
  }
  const bw = effectiveBandwidth(profile);
  if (bw)
    out.push({
      name: 'Effective bandwidth',
      value: formatRate(bw.bytesPerSecond),
      beside:
        bw.pctOfPeak === null ? 'the device’s peak is not known' : `${pct(bw.pctOfPeak)} of the device’s ${formatRate(profile.device.peakDramBytesPerSecond!)}`,
    });
  return out;
}

/** One source line as the table and the margin show it. */
export interface LineRow {
  line: number;
  samples: number;
  /** Its share of the kernel's samples, 0 to 1. */
  share: number;
  /** 0 (no samples) to 4 (the hottest): the margin's shade. */
  heat: 0 | 1 | 2 | 3 | 4;
  /** Its main stall reasons, in words, each with its share of the line's samples. */
  stalls: { reason: StallReason; words: string; share: number }[];
  loads: AccessCell | null;
  stores: AccessCell | null;
  /** Which of its accesses move more sectors than they need (a problem finding names this line). */
  uncoalesced: ('loads' | 'stores')[];
}

/** The margin's shade for a share of the samples. */
export function heatLevel(share: number): LineRow['heat'] {
  if (share <= 0) return 0;
  if (share >= 0.4) return 4;
  if (share >= 0.15) return 3;
  if (share >= 0.05) return 2;
  return 1;
}

/** A line's main stall reasons, each as a share of all its samples (a sample of an issuing warp is no stall). */
function topStalls(line: ProfileLine, n = 3): LineRow['stalls'] {
  const total = Math.max(
    line.samples,
    Object.values(line.stalls).reduce((a, b) => a + (b ?? 0), 0),
  );
  if (!total) return [];
  return (Object.entries(line.stalls) as [StallReason, number][])
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([reason, count]) => ({ reason, words: STALL_WORDS[reason], share: count / total }));
}

/** A row per profiled line, in line order (none without counters). */
export function lineRows(profile: Profile, thresholds: ProfileThresholds = DEFAULT_PROFILE_THRESHOLDS): LineRow[] {
  const c = profile.counters;
  if (!c) return [];
  const total = c.lines.reduce((a, l) => a + l.samples, 0);
  const flagged = profileFindings(profile, thresholds).filter((f) => f.id === 'uncoalesced');
  return c.lines.map((l) => {
    const share = total ? l.samples / total : 0;
    const loads = cell(l.loads);
    const stores = cell(l.stores);
    const over = (a: AccessCell | null) => !!a && a.ideal > 0 && a.perRequest / a.ideal >= thresholds.uncoalescedRatio;
    const named = flagged.some((f) => f.line === l.line);
    const uncoalesced = named ? (['loads', 'stores'] as const).filter((k) => over(k === 'loads' ? loads : stores)) : [];
    return { line: l.line, samples: l.samples, share, heat: heatLevel(share), stalls: topStalls(l), loads, stores, uncoalesced };
  });
}

/** What a line's margin says on hover, one sentence a line (plain text: the editor escapes it). */
export function lineHover(row: LineRow): string[] {
  const out = [`Line ${row.line}: ${pct(row.share * 100)} of the kernel’s samples (${thousands(row.samples)}).`];
  for (const kind of ['stores', 'loads'] as const) {
    const a = row[kind];
    if (!a) continue;
    const width = a.bytes ? ` for ${a.bytes}-byte accesses` : '';
    const bad = row.uncoalesced.includes(kind);
    out.push(
      `${kind === 'loads' ? 'Loads' : 'Stores'}: ${a.perRequest.toFixed(1)} sectors per request ${a.perRequest.toFixed(1) === a.ideal.toFixed(1) ? `(the ideal${width})` : `where ${a.ideal.toFixed(1)} would do${width}`}${bad ? ` — uncoalesced, ${(a.perRequest / a.ideal).toFixed(1)}× the ideal` : ''}.`,
    );
  }
  if (row.stalls.length) out.push(`Warps wait here: ${row.stalls.map((s) => `${pct(s.share * 100)} ${s.words}`).join('; ')}.`);
  return out;
}

/** Whether two profiles are of the same kernel in the same file (by name: a path differs between machines). */
export const sameKernel = (a: Profile, b: Profile): boolean =>
  a.kernel.entry === b.kernel.entry && basenameOf(a.kernel.sourceFile) === basenameOf(b.kernel.sourceFile);

/** The file a profile's lines are in: the path ncu named (the profiling machine's), else the compile's name. */
export const profileSourceFile = (profile: Profile): string => profile.counters?.sourceFile ?? profile.kernel.sourceFile;

/** A compared figure in words: each side, the change, and whether it is better, worse, the same, or neither. */
export function comparedWords(f: ComparedFigure): { before: string; after: string; change: string; verdict: 'better' | 'worse' | 'same' | null } {
  const show = (v: number | null) => {
    if (v === null) return '—';
    if (f.unit === '% of peak' || f.unit === '%') return pct(v);
    return f.unit ? `${v.toFixed(1)} ${f.unit}` : v.toFixed(1);
  };
  const same = f.change !== null && Math.abs(f.change) < 0.005;
  const verdict = f.change === null || f.better === null ? null : same ? 'same' : f.change < 0 === (f.better === 'lower') ? 'better' : 'worse';
  const change = f.change === null ? '—' : same ? 'no change' : `${f.change > 0 ? '+' : '−'}${Math.abs(f.change * 100).toFixed(0)}%`;
  return { before: show(f.before), after: show(f.after), change, verdict };
}
