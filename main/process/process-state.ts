import { readdirSync, readFileSync } from 'node:fs';

/**
 * Whether a process still runs. A zombie does not: a child whose host was killed is reparented, and
 * where nothing reaps it (a container's PID 1), kill(pid, 0) still succeeds for it.
 */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

export interface ProcessEntry {
  pid: number;
  ppid: number;
  /** Its process group. */
  pgrp: number;
  cmdline: string;
}

/** Every live process on this machine (zombies left out), from /proc; empty where there is no /proc. */
export function listProcesses(): ProcessEntry[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  return names
    .filter((p) => /^\d+$/.test(p))
    .flatMap((pid) => {
      try {
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ');
        if (fields[0] === 'Z') return [];
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
        return [{ pid: Number(pid), ppid: Number(fields[1]), pgrp: Number(fields[2]), cmdline }];
      } catch {
        return [];
      }
    });
}
