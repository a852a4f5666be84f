import { parse } from 'csv-parse/sync';

import { thousands } from '../format';
import { STALL_REASONS, type AccessFigures, type ProfileLine, type StallReason } from './profile';

/**
 * Nsight Compute's CSV pages, read: `--page raw` (one row of every metric per profiled kernel) and `--page source
 * --print-source cuda,sass` (each CUDA line, then its SASS instructions, with the source counters). The text is
 * ncu's output, read in a reader process; every number is checked, a row or a column that is not there is a
 * message, never a guess.
 */
export class NcuCsvError extends Error {
  override readonly name = 'NcuCsvError';
}

const MAX_ROWS = 200_000;
const MAX_COLUMNS = 5_000;

function rowsOf(csv: string): string[][] {
  const rows = parse(csv, { relax_column_count: true, skip_empty_lines: true, relax_quotes: true, to: MAX_ROWS + 1 }) as string[][];
  if (rows.length > MAX_ROWS) throw new NcuCsvError(`more than ${thousands(MAX_ROWS)} rows`);
  if (rows.some((r) => r.length > MAX_COLUMNS)) throw new NcuCsvError(`a row has more than ${MAX_COLUMNS} columns`);
  return rows;
}

/** ncu's numbers: "131,072", "524288.000000", "n/a". */
export function ncuNumber(text: string | undefined): number | null {
  if (text === undefined) return null;
  const clean = text.replace(/,/g, '').trim();
  if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(clean)) return null;
  const n = Number(clean);
  return Number.isFinite(n) ? n : null;
}

const SI: Record<string, number> = { '': 1, K: 1e3, M: 1e6, G: 1e9, T: 1e12 };
const TIME: Record<string, number> = { ns: 1, us: 1e3, usecond: 1e3, ms: 1e6, msecond: 1e6, s: 1e9, second: 1e9, nsecond: 1 };

/** A value in its base unit: bytes for "Mbyte", nanoseconds for "us", bytes per second for "Gbyte/s"; counts as they are. */
export function inBaseUnit(value: number, unit: string): number {
  const bytes = /^([KMGT]?)byte(\/s(econd)?)?$/.exec(unit);
  if (bytes) return value * SI[bytes[1]!]!;
  if (unit in TIME) return value * TIME[unit]!;
  return value;
}

/** One profiled kernel's metrics from the raw page, in base units, by metric name. */
export interface RawKernel {
  kernelName: string;
  blockSize: string;
  gridSize: string;
  metrics: Map<string, number>;
}

export function parseRawPage(csv: string): RawKernel[] {
  const rows = rowsOf(csv).filter((r) => r.length > 1);
  const header = rows.findIndex((r) => r[0] === 'ID' && r.includes('Kernel Name'));
  if (header < 0) throw new NcuCsvError('no header row (ID, …, Kernel Name, …): not the raw page of an ncu report');
  const names = rows[header]!;
  const units = rows[header + 1] ?? [];
  const at = (name: string) => names.indexOf(name);
  const kernels: RawKernel[] = [];
  for (const row of rows.slice(header + 2)) {
    const metrics = new Map<string, number>();
    names.forEach((name, i) => {
      if (!name.includes('__')) return;
      const n = ncuNumber(row[i]);
      if (n !== null) metrics.set(name, inBaseUnit(n, units[i] ?? ''));
    });
    kernels.push({ kernelName: row[at('Kernel Name')] ?? '', blockSize: row[at('Block Size')] ?? '', gridSize: row[at('Grid Size')] ?? '', metrics });
  }
  return kernels;
}

export interface SourcePage {
  file: string | null;
  functionName: string | null;
  lines: ProfileLine[];
}

const emptyAccess = (): AccessFigures => ({ sectors: 0, requests: 0, idealSectors: 0, accessBits: null });

function addAccess(into: AccessFigures | null, cell: (name: string) => number, bits: number | null): AccessFigures {
  const out = into ?? emptyAccess();
  out.sectors += cell('L2 Theoretical Sectors Global');
  out.requests += cell('Instructions Executed');
  out.idealSectors += cell('L2 Theoretical Sectors Global Ideal');
  if (bits !== null) out.accessBits = out.accessBits === null ? bits : Math.max(out.accessBits, bits);
  return out;
}

/**
 * The source page with CUDA lines and their SASS: each CUDA line's samples and stalls (its own row), and its global
 * loads and stores summed over its SASS instructions, so a line with a load and a store says each apart.
 */
export function parseSourcePage(csv: string): SourcePage[] {
  const pages: SourcePage[] = [];
  let page: SourcePage | null = null;
  let names: string[] | null = null;
  let current: ProfileLine | null = null;
  const startPage = () => {
    page = { file: null, functionName: null, lines: [] };
    pages.push(page);
    names = null;
    current = null;
  };
  for (const row of rowsOf(csv)) {
    // ncu's own messages share a log file with the page (==PROF== Connected…, ==WARNING==…).
    if (/^==[A-Z]+==/.test(row[0] ?? '')) continue;
    if (row[0] === 'File Path' || row[0] === 'File Name') {
      startPage();
      page!.file = row[1] ?? null;
      continue;
    }
    if (!page) startPage();
    if (row[0] === 'Function Name') {
      page!.functionName = row[1] ?? null;
      continue;
    }
    if (row[0] === 'Line No' || row[0] === '# Address') {
      names = row;
      continue;
    }
    if (!names) continue;
    const header: string[] = names;
    const cell = (name: string) => ncuNumber(row[header.indexOf(name)]) ?? 0;
    const text = (name: string) => row[header.indexOf(name)] ?? '';
    if (row[0] !== '') {
      const line = ncuNumber(row[0]);
      if (line === null || line < 1 || !Number.isInteger(line)) throw new NcuCsvError(`a source row's line number is ${JSON.stringify(row[0]).slice(0, 40)}`);
      const stalls: Partial<Record<StallReason, number>> = {};
      for (const reason of STALL_REASONS) {
        const n = cell(`stall_${reason}`);
        if (n > 0) stalls[reason] = n;
      }
      current = { line, samples: cell('Warp Stall Sampling (All Samples)'), stalls, instructions: cell('Instructions Executed'), loads: null, stores: null };
      page!.lines.push(current);
      continue;
    }
    const line: ProfileLine | null = current;
    if (!line || text('Address Space') !== 'Global') continue;
    const bits = ncuNumber(text('Access Size'));
    if (text('Access Operation') === 'Load') line.loads = addAccess(line.loads, cell, bits);
    else if (text('Access Operation') === 'Store') line.stores = addAccess(line.stores, cell, bits);
  }
  return pages;
}

/**
 * The rows `ncu --metrics … --csv` prints while it profiles (one row per kernel and metric: ID, …, Kernel Name, …,
 * Metric Name, Metric Unit, Metric Value): each kernel's metrics in base units, in launch order.
 */
export function parseMetricRows(csv: string): RawKernel[] {
  const rows = rowsOf(csv).filter((r) => r.length > 1);
  const header = rows.findIndex((r) => r[0] === 'ID' && r.includes('Metric Name'));
  if (header < 0) throw new NcuCsvError('no header row (ID, …, Metric Name, Metric Unit, Metric Value): not ncu --csv metric rows');
  const names = rows[header]!;
  const col = (name: string) => names.indexOf(name);
  const byId = new Map<string, RawKernel>();
  for (const row of rows.slice(header + 1)) {
    const id = row[col('ID')] ?? '';
    let kernel = byId.get(id);
    if (!kernel) {
      kernel = {
        kernelName: row[col('Kernel Name')] ?? '',
        blockSize: row[col('Block Size')] ?? '',
        gridSize: row[col('Grid Size')] ?? '',
        metrics: new Map(),
      };
      byId.set(id, kernel);
    }
    const value = ncuNumber(row[col('Metric Value')]);
    if (value !== null) kernel.metrics.set(row[col('Metric Name')] ?? '', inBaseUnit(value, row[col('Metric Unit')] ?? ''));
  }
  return [...byId.values()];
}
