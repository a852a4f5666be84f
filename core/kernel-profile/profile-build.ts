import { NcuCsvError, type RawKernel, type SourcePage } from './ncu-csv';
import { STALL_REASONS, type AccessFigures, type ProfileCounters, type ProfileLine, type StallReason } from './profile';

/** ncu's kernel-wide PC-sampling metrics, by the stall reason the source page names the same samples with. */
const PCSAMP_NAMES: Record<StallReason, string> = {
  barrier: 'barrier',
  branch_resolving: 'branch_resolving',
  dispatch: 'dispatch_stall',
  drain: 'drain',
  imc: 'imc_miss',
  lg: 'lg_throttle',
  long_sb: 'long_scoreboard',
  math: 'math_pipe_throttle',
  membar: 'membar',
  mio: 'mio_throttle',
  misc: 'misc',
  no_inst: 'no_instructions',
  short_sb: 'short_scoreboard',
  sleep: 'sleeping',
  tex: 'tex_throttle',
  wait: 'wait',
};

const OCCUPANCY_LIMITS = {
  registers: 'launch__occupancy_limit_registers',
  'shared memory': 'launch__occupancy_limit_shared_mem',
  warps: 'launch__occupancy_limit_warps',
  blocks: 'launch__occupancy_limit_blocks',
  barriers: 'launch__occupancy_limit_barriers',
} as const;

/** The metrics a profile needs from the raw page, asked for by name (a section's set differs between GPUs and ncu versions). */
export const REQUIRED_METRICS = [
  'gpu__time_duration.sum',
  'sm__throughput.avg.pct_of_peak_sustained_elapsed',
  'gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed',
  'dram__throughput.avg.pct_of_peak_sustained_elapsed',
  'lts__throughput.avg.pct_of_peak_sustained_elapsed',
  'l1tex__throughput.avg.pct_of_peak_sustained_active',
  'dram__bytes_read.sum',
  'dram__bytes_write.sum',
  'sm__warps_active.avg.pct_of_peak_sustained_active',
  'sm__maximum_warps_per_active_cycle_pct',
  'launch__waves_per_multiprocessor',
  'launch__registers_per_thread',
  ...Object.values(OCCUPANCY_LIMITS),
];

const sumAccess = (lines: ProfileLine[], kind: 'loads' | 'stores'): AccessFigures => {
  const out: AccessFigures = { sectors: 0, requests: 0, idealSectors: 0, accessBits: null };
  for (const line of lines) {
    const a = line[kind];
    if (!a) continue;
    out.sectors += a.sectors;
    out.requests += a.requests;
    out.idealSectors += a.idealSectors;
    if (a.accessBits !== null) out.accessBits = Math.max(out.accessBits ?? 0, a.accessBits);
  }
  return out;
};

/** Global traffic from the hardware counters, for a report without source counters (no ideal is known then). */
const counterAccess = (metrics: Map<string, number>, op: 'ld' | 'st'): AccessFigures => {
  const sectors = metrics.get(`l1tex__t_sectors_pipe_lsu_mem_global_op_${op}.sum`) ?? 0;
  return { sectors, requests: metrics.get(`l1tex__t_requests_pipe_lsu_mem_global_op_${op}.sum`) ?? 0, idealSectors: 0, accessBits: null };
};

/** Whether a source page belongs to the kernel's own file (ncu names it as the compiler did: a path, or the bare name). */
export const sameSourceFile = (ncuPath: string | null, sourceFile: string): boolean => {
  if (!ncuPath) return false;
  const base = (p: string) => p.split(/[\\/]/).pop() ?? p;
  return ncuPath === sourceFile || base(ncuPath) === base(sourceFile);
};

/**
 * One kernel's counters from the raw page's row and the source pages: throughput against peak, occupancy, stalls,
 * and the global traffic per line of the kernel's own file. Kernel-wide sectors per request are summed from the
 * source counters (exact, with the ideal beside them) when there are any, else taken from the hardware counters.
 */
export function buildCounters(kernel: RawKernel, pages: SourcePage[], sourceFile: string): ProfileCounters {
  const m = kernel.metrics;
  const need = (name: string): number => {
    const v = m.get(name);
    if (v === undefined) throw new NcuCsvError(`the report has no ${name}: the profile's sections were not collected`);
    return v;
  };
  const own = pages.filter((p) => sameSourceFile(p.file, sourceFile));
  const allLines = pages.flatMap((p) => p.lines);
  const withAccess = allLines.some((l) => l.loads || l.stores);
  const stalls: ProfileCounters['stalls'] = {};
  for (const reason of STALL_REASONS) {
    const n = m.get(`smsp__pcsamp_warps_issue_stalled_${PCSAMP_NAMES[reason]}`);
    if (n) stalls[reason] = n;
  }
  const limits: ProfileCounters['occupancy']['limits'] = {};
  for (const [name, metric] of Object.entries(OCCUPANCY_LIMITS) as [keyof typeof OCCUPANCY_LIMITS, string][]) {
    const v = m.get(metric);
    if (v !== undefined) limits[name] = v;
  }
  const lines = own.flatMap((p) => p.lines).sort((a, b) => a.line - b.line);
  return {
    durationNs: need('gpu__time_duration.sum'),
    computePct: need('sm__throughput.avg.pct_of_peak_sustained_elapsed'),
    memoryPct: need('gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed'),
    dramPct: need('dram__throughput.avg.pct_of_peak_sustained_elapsed'),
    l2Pct: need('lts__throughput.avg.pct_of_peak_sustained_elapsed'),
    l1Pct: m.get('l1tex__throughput.avg.pct_of_peak_sustained_active') ?? null,
    dramBytesRead: need('dram__bytes_read.sum'),
    dramBytesWritten: need('dram__bytes_write.sum'),
    loads: withAccess ? sumAccess(allLines, 'loads') : counterAccess(m, 'ld'),
    stores: withAccess ? sumAccess(allLines, 'stores') : counterAccess(m, 'st'),
    occupancy: {
      achievedPct: need('sm__warps_active.avg.pct_of_peak_sustained_active'),
      theoreticalPct: need('sm__maximum_warps_per_active_cycle_pct'),
      limits,
      wavesPerSm: m.get('launch__waves_per_multiprocessor') ?? 0,
      registersPerThread: m.get('launch__registers_per_thread') ?? 0,
    },
    stalls,
    lines,
    sourceFile: own[0]?.file ?? null,
  };
}

/** The file a kernel's own code is in: the source page with the most of its samples (a header's inlined code is less). */
export function mainSourceFile(pages: SourcePage[]): string | null {
  let best: { file: string | null; samples: number } = { file: null, samples: -1 };
  for (const page of pages) {
    const samples = page.lines.reduce((a, l) => a + l.samples, 0);
    if (samples > best.samples) best = { file: page.file, samples };
  }
  return best.file;
}

/** ncu's "(64, 256, 1)" as three numbers; null when it is not that. */
export function parseDims(text: string): [number, number, number] | null {
  const m = /^\((\d+),\s*(\d+),\s*(\d+)\)$/.exec(text.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}
