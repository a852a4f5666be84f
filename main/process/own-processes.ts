import { readdirSync } from 'node:fs';

import { parseProcStat } from '../../core/memory/process-flags';
import { descendantsOf, type ProcessLink } from '../../core/process/process-tree';
import { readSmallFileSync } from '../memory/proc-reader';

/** Most /proc entries read for one snapshot: a machine with more processes is cut there (its newest are left out). */
export const MAX_PROC_ENTRIES = 65_536;
const STAT_BYTES = 4096;

/**
 * Each process's parent, from /proc: every stat read bounded, at most `maxEntries` of them, an unreadable one (gone
 * meanwhile, another user's in a hardened /proc) skipped. Empty where there is no /proc.
 */
export function readProcessTable(procRoot = '/proc', maxEntries = MAX_PROC_ENTRIES): ProcessLink[] {
  let names: string[];
  try {
    names = readdirSync(procRoot).filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  const table: ProcessLink[] = [];
  for (const name of names.slice(0, maxEntries)) {
    const text = readSmallFileSync(`${procRoot}/${name}/stat`, STAT_BYTES);
    const stat = text === null ? null : parseProcStat(text);
    if (stat && stat.state !== 'Z' && stat.state !== 'X') table.push({ pid: stat.pid, ppid: stat.ppid });
  }
  return table;
}

/**
 * The workbench's own processes: the pids its pools know (`started`) and every live descendant of this host and of
 * them. Under compute-sanitizer a pool holds the tool's pid, and the runner holding the CUDA context is the tool's
 * child: it is found here. Reads all of /proc, so it is asked only where it is shown (who holds a device's memory).
 */
export function workbenchPids(started: readonly number[], table: () => ProcessLink[] = readProcessTable, host = process.pid): number[] {
  const roots = [host, ...started];
  const own = new Set([...started, ...descendantsOf(roots, table())]);
  own.delete(host);
  return [...own];
}
