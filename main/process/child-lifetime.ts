import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

import type { NativeAddon } from '../native/addon';

/** The environment variable naming the fd of the host's lifeline pipe (the fork launcher passes one). */
export const LIFELINE_FD_ENV = 'GPU_WORKBENCH_LIFELINE_FD';
/**
 * Set by a launcher whose child runs under another program that leads the group (compute-sanitizer): the
 * child stays in that group, so a stop reaches both, and dies when that program does.
 */
export const STAY_IN_GROUP_ENV = 'GPU_WORKBENCH_STAY_IN_GROUP';

/** Waits for EOF on the lifeline (the host holds the other end: EOF means it is gone), then kills the group. */
const PIPE_REAPER = 'cat >/dev/null; kill -KILL 0';
/** Where no lifeline can be passed (Electron's utilityProcess): polls for the host and the child once a second. */
const POLL_REAPER = `alive() { [ -d /proc/$1 ] && [ "$(sed 's/.*) //' /proc/$1/stat 2>/dev/null | cut -c1)" != Z ]; }
while alive "$1" && alive "$2"; do sleep 1; done
kill -KILL 0`;

const leadsGroup = (): boolean => {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return Number(fields[2]) === process.pid; // state, ppid, pgrp
  } catch {
    return false;
  }
};

/**
 * Ties a child's lifetime — and that of everything it starts (nvcc, cicc, ptxas) — to the host's: the
 * child leads a process group of its own, dies by the kernel's hand when the host does (whatever its
 * JavaScript thread is doing), and a reaper in its group kills the whole group once the host is gone.
 * Never starts a reaper in a group the child does not lead: it would kill the host's own.
 */
export function tieLifetimeToHost(addon: Pick<NativeAddon, 'leadProcessGroup' | 'dieWithParent'> | null): { leader: boolean; reaper: 'pipe' | 'poll' | null } {
  addon?.dieWithParent();
  if (process.env[STAY_IN_GROUP_ENV] === '1') return { leader: false, reaper: null };
  const leader = addon ? addon.leadProcessGroup() : leadsGroup();
  if (!leader || process.platform !== 'linux') return { leader, reaper: null };
  const lifeline = Number(process.env[LIFELINE_FD_ENV]);
  const piped = Number.isInteger(lifeline) && lifeline > 2;
  const reaper = spawn('/bin/sh', ['-c', piped ? PIPE_REAPER : POLL_REAPER, 'gpu-workbench-reaper', String(process.ppid), String(process.pid)], {
    stdio: [piped ? lifeline : 'ignore', 'ignore', 'ignore'],
  });
  reaper.on('error', () => undefined);
  reaper.unref();
  return { leader, reaper: piped ? 'pipe' : 'poll' };
}
