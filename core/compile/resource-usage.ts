/** What ptxas says one kernel costs (from `-Xptxas -v`), keyed by the lowered symbol. */
export interface ResourceUsage {
  symbol: string;
  arch: string | null;
  registers: number;
  barriers: number | null;
  sharedBytes: number;
  constantBytes: Record<string, number>;
  stackFrameBytes: number;
  spillStoreBytes: number;
  spillLoadBytes: number;
  cumulativeStackBytes: number | null;
}

export function parsePtxasInfo(log: string): ResourceUsage[] {
  const usage = new Map<string, ResourceUsage>();
  let current: ResourceUsage | null = null;
  const get = (symbol: string, arch: string | null) => {
    let u = usage.get(symbol);
    if (!u) {
      u = {
        symbol,
        arch,
        registers: 0,
        barriers: null,
        sharedBytes: 0,
        constantBytes: {},
        stackFrameBytes: 0,
        spillStoreBytes: 0,
        spillLoadBytes: 0,
        cumulativeStackBytes: null,
      };
      usage.set(symbol, u);
    }
    return u;
  };
  for (const raw of log.split('\n')) {
    const line = raw.trim();
    let m = /^ptxas info\s*: Compiling entry function '([^']+)' for '([^']+)'/.exec(line);
    if (m) {
      current = get(m[1]!, m[2]!);
      continue;
    }
    m = /^ptxas info\s*: Function properties for (\S+)/.exec(line);
    if (m) {
      current = usage.get(m[1]!) ?? (m[1]!.startsWith('_Z') || !m[1]!.includes('.') ? get(m[1]!, null) : current);
      continue;
    }
    if (!current) continue;
    m = /(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads/.exec(line);
    if (m) {
      current.stackFrameBytes = Number(m[1]);
      current.spillStoreBytes = Number(m[2]);
      current.spillLoadBytes = Number(m[3]);
      continue;
    }
    if (/^ptxas info\s*: Used /.test(line)) {
      const num = (re: RegExp) => {
        const x = re.exec(line);
        return x ? Number(x[1]) : null;
      };
      current.registers = num(/Used (\d+) registers/) ?? 0;
      current.barriers = num(/used (\d+) barriers/);
      current.sharedBytes = num(/(\d+) bytes smem/) ?? 0;
      current.cumulativeStackBytes = num(/(\d+) bytes cumulative stack size/);
      for (const c of line.matchAll(/(\d+) bytes cmem\[(\d+)\]/g)) current.constantBytes[c[2]!] = Number(c[1]);
    }
  }
  return [...usage.values()];
}
