import { formatBytes } from '../format';
import { noCountersMessage } from './no-counters';
import type { AccessFigures, Profile, ProfileCounters, ProfileLine, StallReason } from './profile';

/**
 * What a profile's numbers mean, in words: which line moves more sectors than its accesses need and the usual fix,
 * whether the kernel is bound by memory, compute or latency, achieved occupancy against theoretical and why they
 * differ, and where the warps wait. Pure: the CLI, the Profile tab and the `check` gate read the same findings.
 */
export interface ProfileFinding {
  id: 'uncoalesced' | 'bound' | 'occupancy' | 'stalls' | 'no-counters' | 'bandwidth';
  /** A problem is something to fix (what `check` fails on); a note explains a figure. */
  severity: 'problem' | 'note';
  line: number | null;
  headline: string;
  detail: string;
}

export interface ProfileThresholds {
  /** A line's sectors per request over its ideal at which it counts as uncoalesced. */
  uncoalescedRatio: number;
  /** Achieved occupancy (%) below which `check` fails; 0 turns it off. */
  minAchievedOccupancyPct: number;
}
export const DEFAULT_PROFILE_THRESHOLDS: ProfileThresholds = { uncoalescedRatio: 2, minAchievedOccupancyPct: 0 };

const pct = (n: number) => `${n.toFixed(1)}%`;
const ratio = (a: AccessFigures) => (a.requests ? a.sectors / a.requests : 0);
const idealRatio = (a: AccessFigures) => (a.requests ? a.idealSectors / a.requests : 0);
export const sectorsPerRequest = (a: AccessFigures): string => ratio(a).toFixed(1);

/** Speed of light below which neither memory nor compute is the limit (Nsight Compute's own rule of thumb). */
const BOUND_AT = 60;

export const STALL_WORDS: Record<StallReason, string> = {
  long_sb: 'waiting for global or local memory (long scoreboard)',
  short_sb: 'waiting for shared memory or special math (short scoreboard)',
  lg: 'the global-memory queue is full (LG throttle)',
  mio: 'the shared-memory/special-math queue is full (MIO throttle)',
  barrier: 'waiting at __syncthreads() for the rest of the block',
  membar: 'waiting at a memory fence',
  drain: 'waiting at exit for its stores to drain',
  math: 'a math pipe is busy',
  wait: 'a fixed-latency dependency',
  branch_resolving: 'resolving a branch',
  dispatch: 'the dispatcher could not issue',
  imc: 'an instruction-cache miss',
  no_inst: 'no instruction fetched yet',
  sleep: 'sleeping (nanosleep or a yield)',
  tex: 'the texture queue is full',
  misc: 'something else',
};

function accessFinding(line: ProfileLine, kind: 'loads' | 'stores', t: ProfileThresholds, kernelRequests: number): ProfileFinding | null {
  const a = line[kind];
  if (!a || !a.requests || !a.idealSectors) return null;
  const got = ratio(a);
  const ideal = idealRatio(a);
  const over = got / ideal;
  // A line that makes a tiny share of the kernel's requests does not decide its speed.
  if (over < t.uncoalescedRatio || a.requests < kernelRequests * 0.01) return null;
  const what = kind === 'loads' ? 'load' : 'store';
  const width = a.accessBits ? `${a.accessBits / 8}-byte` : 'its';
  return {
    id: 'uncoalesced',
    severity: 'problem',
    line: line.line,
    headline: `Line ${line.line}: each ${what} request moves ${got.toFixed(1)} sectors where ${ideal.toFixed(1)} would do for ${width} accesses (${over.toFixed(1)}× the ideal)`,
    detail:
      `The threads of a warp ${kind === 'loads' ? 'read' : 'write'} addresses that are not next to each other, so one request touches ${Math.round(got)} separate 32-byte sectors` +
      ` and moves ${formatBytes((a.sectors - a.idealSectors) * 32)} more than the data needs. The usual fixes: let threadIdx.x index the fastest-moving (last) dimension;` +
      ` stage a transpose or a strided access through a tile in shared memory; turn an array of structures into a structure of arrays; use vector loads (float4) for wide per-thread data.`,
  };
}

function boundFinding(c: ProfileCounters): ProfileFinding {
  const units: [string, number][] = [
    ['DRAM', c.dramPct],
    ['L2', c.l2Pct],
    ['L1', c.l1Pct ?? 0],
  ];
  const [unit, unitPct] = units.reduce((a, b) => (b[1] > a[1] ? b : a));
  // ncu's memory figure and its busiest unit can disagree; the busier of the two is the memory system's speed of light.
  const memoryPct = Math.max(c.memoryPct, unitPct);
  const figures = `memory ${pct(memoryPct)} of peak (${unit} the busiest unit), compute ${pct(c.computePct)}`;
  if (Math.max(memoryPct, c.computePct) < BOUND_AT)
    return {
      id: 'bound',
      severity: 'note',
      line: null,
      headline: `Latency-bound: neither memory nor compute reaches ${BOUND_AT}% of peak (${figures})`,
      detail: 'The GPU is mostly waiting: see where the warps stall. More independent work per thread, more warps per SM, or a larger grid hides latency.',
    };
  const memory = memoryPct >= c.computePct;
  return {
    id: 'bound',
    severity: 'note',
    line: null,
    headline: `${memory ? 'Memory' : 'Compute'}-bound: ${figures}`,
    detail: memory
      ? `${unit} is the limit. Moving fewer bytes (coalesced accesses, reuse through shared memory, smaller types) is what makes this kernel faster.`
      : 'The SMs are the limit: fewer or cheaper instructions (fast-math intrinsics, less divergence, tensor cores) make it faster.',
  };
}

function occupancyFinding(c: ProfileCounters, t: ProfileThresholds, validatorPct: number | null): ProfileFinding {
  const o = c.occupancy;
  const limiters = Object.entries(o.limits).filter(([, blocks]) => blocks === Math.min(...Object.values(o.limits)));
  const limitedBy = o.theoreticalPct >= 99.95 ? 'the most an SM holds' : `limited by ${limiters.map(([n]) => n).join(' and ') || 'nothing ncu reported'}`;
  const theory = `theoretical ${pct(o.theoreticalPct)}${validatorPct === null ? '' : ` (the validator's: ${pct(validatorPct)})`}, ${limitedBy}`;
  const why: string[] = [];
  const fraction = o.wavesPerSm - Math.floor(o.wavesPerSm);
  if (o.wavesPerSm < 2 && fraction > 0) why.push(`the grid is ${o.wavesPerSm.toFixed(2)} waves: the last one leaves SMs idle (a tail)`);
  if (c.durationNs < 20_000) why.push(`the kernel lasts ${(c.durationNs / 1000).toFixed(1)} µs, so warps starting and ending are a large share of it`);
  if ((c.stalls.barrier ?? 0) > 0.2 * totalSamples(c)) why.push('warps wait at barriers for the rest of their block');
  const low = o.achievedPct < 0.8 * o.theoreticalPct;
  const failing = t.minAchievedOccupancyPct > 0 && o.achievedPct < t.minAchievedOccupancyPct;
  return {
    id: 'occupancy',
    severity: failing ? 'problem' : 'note',
    line: null,
    headline: `Achieved occupancy ${pct(o.achievedPct)} against ${theory}${failing ? `: below the ${pct(t.minAchievedOccupancyPct)} the check asks for` : ''}`,
    detail: low
      ? `Achieved is well below theoretical: ${why.length ? why.join('; ') : 'blocks or warps finish unevenly, so SMs run with fewer warps than they could hold'}.`
      : 'Achieved is close to theoretical: the SMs hold about as many warps as the launch allows.',
  };
}

const totalSamples = (c: ProfileCounters) => Object.values(c.stalls).reduce((a, b) => a + (b ?? 0), 0);

function stallFinding(c: ProfileCounters): ProfileFinding | null {
  const total = totalSamples(c);
  if (!total) return null;
  const top = (Object.entries(c.stalls) as [StallReason, number][]).sort((a, b) => b[1] - a[1]).slice(0, 3);
  const parts = top.map(([reason, n]) => {
    const lines = c.lines
      .filter((l) => (l.stalls[reason] ?? 0) > 0)
      .sort((a, b) => (b.stalls[reason] ?? 0) - (a.stalls[reason] ?? 0))
      .slice(0, 2)
      .map((l) => `line ${l.line}`);
    return `${pct((100 * n) / total)} ${STALL_WORDS[reason]}${lines.length ? ` (${lines.join(', ')})` : ''}`;
  });
  return { id: 'stalls', severity: 'note', line: null, headline: `Where the warps wait: ${parts[0]}`, detail: parts.join('; ') + '.' };
}

/** Effective bandwidth: the bytes the launch's buffers hold over its time, against the device's peak. */
export function effectiveBandwidth(profile: Profile): { bytesPerSecond: number; pctOfPeak: number | null } | null {
  const e = profile.effective;
  if (!e || e.kernelMs <= 0) return null;
  const bytesPerSecond = e.bytes / (e.kernelMs / 1000);
  const peak = profile.device.peakDramBytesPerSecond;
  return { bytesPerSecond, pctOfPeak: peak ? (100 * bytesPerSecond) / peak : null };
}

export const formatRate = (bytesPerSecond: number): string => `${(bytesPerSecond / 1e9).toFixed(1)} GB/s`;

function bandwidthFinding(profile: Profile): ProfileFinding | null {
  const bw = effectiveBandwidth(profile);
  if (!bw || !profile.effective) return null;
  return {
    id: 'bandwidth',
    severity: 'note',
    line: null,
    headline: `Effective bandwidth ${formatRate(bw.bytesPerSecond)}${bw.pctOfPeak === null ? '' : `, ${pct(bw.pctOfPeak)} of the device's ${formatRate(profile.device.peakDramBytesPerSecond!)}`}`,
    detail: `${formatBytes(profile.effective.bytes)} in the launch's buffers (${profile.effective.buffers.map((b) => b.name).join(', ')}), each counted once, over ${profile.effective.timedBy === 'ncu' ? 'the profiled launch’s time by ncu' : 'its median time by CUDA events'}, ${profile.effective.kernelMs.toFixed(3)} ms. A kernel that reads a buffer twice, or reads only part of it, moves more or less than this.`,
  };
}

export function profileFindings(
  profile: Profile,
  thresholds: ProfileThresholds = DEFAULT_PROFILE_THRESHOLDS,
  validatorOccupancyPct: number | null = null,
): ProfileFinding[] {
  const out: ProfileFinding[] = [];
  const c = profile.counters;
  if (c) {
    const requests = c.loads.requests + c.stores.requests;
    for (const line of c.lines)
      for (const kind of ['loads', 'stores'] as const) {
        const f = accessFinding(line, kind, thresholds, requests);
        if (f) out.push(f);
      }
    out.push(boundFinding(c), occupancyFinding(c, thresholds, validatorOccupancyPct));
    const stalls = stallFinding(c);
    if (stalls) out.push(stalls);
  }
  if (profile.noCounters) {
    const words = noCountersMessage(profile.noCounters.reason, profile.noCounters.detail, profile.kernel.entry);
    out.push({ id: 'no-counters', severity: 'note', line: null, headline: words.headline, detail: words.body });
  }
  const bandwidth = bandwidthFinding(profile);
  if (bandwidth) out.push(bandwidth);
  return out;
}
