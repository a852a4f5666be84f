import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';

import type { GpuProcessFact, ProcessFacts } from '../../core/doctor/facts';
import type { NvmlSnapshotRaw } from '../native/addon';

/**
 * What this system's process table says about each process NVML lists: whether it exists here, its state, its
 * parent, its command line, and whether the workbench started it. Reads /proc only (Linux), each file bounded.
 */

const PROC_FILE_BYTES = 16 * 1024;
const COMMAND_CHARS = 512;
const MAX_ANCESTORS = 64;

/** A /proc file's text (its size reads as 0, so it is read to the bound), or null when it cannot be read. */
async function readProc(path: string, maxBytes = PROC_FILE_BYTES): Promise<string | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(maxBytes);
    let length = 0;
    while (length < maxBytes) {
      const { bytesRead } = await handle.read(buffer, length, maxBytes - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return buffer.subarray(0, length).toString('utf8');
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

/** "1234 (my (odd) name) S 1 …": the state letter and the parent's PID, after the last ')'. */
export function parseProcStat(text: string): { state: string; ppid: number } | null {
  const end = text.lastIndexOf(')');
  const m = /^ (\S) (\d+)/.exec(text.slice(end + 1));
  return end >= 0 && m ? { state: m[1]!, ppid: Number(m[2]) } : null;
}

/** Whether this process runs in a nested PID namespace: NSpid lists one PID per namespace level. */
export function parseNestedNamespace(status: string | null): boolean | null {
  const line = status?.split('\n').find((l) => l.startsWith('NSpid:'));
  return line ? line.slice(6).trim().split(/\s+/).length > 1 : null;
}

/** Whether /proc is mounted with hidepid (other users' processes hidden or unreadable). */
export function parseHidePid(mounts: string | null): boolean | null {
  if (mounts === null) return null;
  const proc = mounts.split('\n').find((l) => {
    const [, mountPoint, type] = l.split(' ');
    return mountPoint === '/proc' && type === 'proc';
  });
  if (!proc) return null;
  const option = /(?:^|,)hidepid=([^,\s]+)/.exec(proc.split(' ')[3] ?? '')?.[1];
  return option !== undefined && !['0', 'off'].includes(option);
}

async function existsHere(pid: number): Promise<boolean | null> {
  try {
    await stat(`/proc/${pid}`);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? false : null;
  }
}

async function startedBy(pid: number, ancestor: number): Promise<boolean> {
  let current = pid;
  for (let i = 0; i < MAX_ANCESTORS && current > 1; i++) {
    if (current === ancestor) return true;
    const parsed = parseProcStat((await readProc(`/proc/${current}/stat`)) ?? '');
    if (!parsed) return false;
    current = parsed.ppid;
  }
  return current === ancestor;
}

/** One NVML process, looked up here; in a nested PID namespace NVML's PID means nothing here, so nothing is read. */
export async function lookUpProcess(
  entry: { device: number; pid: number; usedBytes: number | null; name: string },
  nested: boolean | null,
  self = process.pid,
): Promise<GpuProcessFact> {
  const base = { device: entry.device, pid: entry.pid, usedBytes: entry.usedBytes, nvmlName: entry.name.slice(0, 256) };
  if (nested !== false) return { ...base, inProcTable: null, state: null, ppid: null, command: null, startedByWorkbench: false };
  const inProcTable = await existsHere(entry.pid);
  const stat = inProcTable ? parseProcStat((await readProc(`/proc/${entry.pid}/stat`)) ?? '') : null;
  const cmdline = inProcTable ? await readProc(`/proc/${entry.pid}/cmdline`, 4096) : null;
  const command = cmdline ? cmdline.split('\0').filter(Boolean).join(' ').slice(0, COMMAND_CHARS) || null : null;
  return {
    ...base,
    inProcTable,
    state: stat?.state ?? null,
    ppid: stat?.ppid ?? null,
    command,
    startedByWorkbench: inProcTable ? await startedBy(entry.pid, self) : false,
  };
}

/** The process facts of one NVML snapshot. */
export async function processFacts(snapshot: NvmlSnapshotRaw): Promise<ProcessFacts> {
  const [status, mounts] = await Promise.all([readProc('/proc/self/status'), readProc('/proc/self/mounts', 256 * 1024)]);
  const nested = parseNestedNamespace(status);
  const listed = snapshot.devices.flatMap((d) => (d.processes ?? []).map((p) => ({ ...p, device: d.index })));
  return {
    pidNamespaceNested: nested,
    procHidesOthers: parseHidePid(mounts),
    devices: snapshot.devices.map((d) => ({
      index: d.index,
      totalBytes: d.memory.totalBytes,
      usedBytes: d.memory.usedBytes,
      processesListed: d.processes !== null,
    })),
    processes: await Promise.all(listed.slice(0, 4096).map((p) => lookUpProcess(p, nested))),
  };
}
