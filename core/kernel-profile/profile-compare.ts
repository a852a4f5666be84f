import { effectiveBandwidth } from './profile-findings';
import type { AccessFigures, Profile } from './profile';

/** One figure before and after an edit: lower is better for times and sectors, higher for the rest. */
export interface ComparedFigure {
  name: string;
  unit: string;
  before: number | null;
  after: number | null;
  /** Which way is an improvement; null where a change says nothing by itself (a wasteful kernel can be busier). */
  better: 'lower' | 'higher' | null;
  /** after / before − 1, when both are known and before is not 0. */
  change: number | null;
}

const spr = (a: AccessFigures | undefined) => (a && a.requests ? a.sectors / a.requests : null);

const FIGURES: { name: string; unit: string; better: 'lower' | 'higher' | null; of: (p: Profile) => number | null }[] = [
  { name: 'Kernel time (ncu)', unit: 'µs', better: 'lower', of: (p) => (p.counters ? p.counters.durationNs / 1000 : null) },
  { name: 'Kernel time (CUDA events)', unit: 'µs', better: 'lower', of: (p) => (p.effective?.timedBy === 'events' ? p.effective.kernelMs * 1000 : null) },
  { name: 'Sectors per load request', unit: '', better: 'lower', of: (p) => spr(p.counters?.loads) },
  { name: 'Sectors per store request', unit: '', better: 'lower', of: (p) => spr(p.counters?.stores) },
  { name: 'Memory throughput', unit: '% of peak', better: null, of: (p) => p.counters?.memoryPct ?? null },
  { name: 'DRAM throughput', unit: '% of peak', better: null, of: (p) => p.counters?.dramPct ?? null },
  { name: 'Compute throughput', unit: '% of peak', better: null, of: (p) => p.counters?.computePct ?? null },
  { name: 'Achieved occupancy', unit: '%', better: 'higher', of: (p) => p.counters?.occupancy.achievedPct ?? null },
  {
    name: 'Effective bandwidth',
    unit: 'GB/s',
    better: 'higher',
    of: (p) => {
      const bw = effectiveBandwidth(p);
      return bw ? bw.bytesPerSecond / 1e9 : null;
    },
  },
];

export function compareProfiles(before: Profile, after: Profile): ComparedFigure[] {
  return FIGURES.map(({ name, unit, better, of }) => {
    const b = of(before);
    const a = of(after);
    return { name, unit, better, before: b, after: a, change: a !== null && b !== null && b !== 0 ? a / b - 1 : null };
  }).filter((f) => f.before !== null || f.after !== null);
}
