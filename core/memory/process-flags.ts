/**
 * Why a process that NVML lists deserves a look, decided over facts the host read from /proc (text given
 * here, so the rules are tested on recorded facts):
 *
 * - exited: our /proc has no such live process (absent, or a zombie), our PID namespace is the machine's
 *   own (so /proc shows every process there is), and NVML kept listing it for EXITED_GRACE_US after we
 *   saw it gone (a context being torn down is listed for a moment; one that stays is held by something).
 *   A zombie is exited in any namespace: it is in ours, so the PID is ours.
 * - not-visible: absent from our /proc while we are in a nested PID namespace (a container). Drivers
 *   without PID-namespace support report host PIDs; newer ones translate PIDs into ours and leave out
 *   processes outside it — either way the PID names nothing we can see, and from here an exited process
 *   and one in another container look alike. Where our namespace cannot be read, the same.
 * - foreign: alive, and neither the monitored process, nor one of its descendants, nor the workbench (this
 *   host or a descendant of it, or a workbench runner or compile worker by its command line).
 *
 * Whether we are in the machine's own PID namespace: /proc/self/ns/pid links to `pid:[4026531836]` there —
 * the kernel gives the initial namespaces fixed inode numbers (PROC_PID_INIT_INO, include/linux/proc_ns.h).
 *
 * Caveat, stated where the flag is shown: in a nested namespace with a driver that reports host PIDs, a
 * host PID can equal an unrelated PID of ours, and the process is then named after the wrong one.
 */
import { formatBytes } from '../format';
import type { ProcessFlagKind, SampledProcess } from './samples';

export type PidNamespace = 'initial' | 'nested' | 'unknown';
/** PROC_PID_INIT_INO: the inode of the initial PID namespace, fixed by the kernel since Linux 3.8. */
export const INITIAL_PID_NAMESPACE_INODE = 0xeffffffc;
/** How long NVML may keep listing a process after it is gone before that is flagged. */
export const EXITED_GRACE_US = 1_000_000;
/** An exited process whose memory came back within this was a normal teardown: its flag is dropped. */
export const NORMAL_TEARDOWN_US = 5_000_000;

/** The namespace a /proc/self/ns/pid link names (null: unreadable). */
export function pidNamespaceOf(link: string | null): PidNamespace {
  const m = link === null ? null : /^pid:\[(\d+)\]$/.exec(link.trim());
  if (!m) return 'unknown';
  return Number(m[1]) === INITIAL_PID_NAMESPACE_INODE ? 'initial' : 'nested';
}

export interface ProcStat {
  pid: number;
  /** The executable's name as the kernel keeps it (15 characters at most). */
  comm: string;
  /** R, S, D, Z, X, T, … */
  state: string;
  ppid: number;
  pgrp: number;
  /** Clock ticks after boot: with the pid, what tells a process from a later one given the same pid. */
  startTime: number;
}

/** /proc/PID/stat. The name sits in parentheses and may itself hold spaces and parentheses: the last ')' ends it. */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 1 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const fields = text
    .slice(close + 2)
    .trim()
    .split(' ');
  // After the name: state(3) ppid(4) pgrp(5) … starttime(22), so index 19 here.
  if (!Number.isInteger(pid) || fields.length < 20) return null;
  const [state, ppid, pgrp] = [fields[0]!, Number(fields[1]), Number(fields[2])];
  const startTime = Number(fields[19]);
  if (!/^[A-Za-z]$/.test(state) || !Number.isInteger(ppid) || !Number.isInteger(pgrp) || !Number.isFinite(startTime)) return null;
  return { pid, comm: text.slice(open + 1, close), state, ppid, pgrp, startTime };
}

export const isGone = (stat: ProcStat | null): boolean => stat === null || stat.state === 'Z' || stat.state === 'X';

/** Longest command line shown; the rest is cut with an ellipsis. */
export const MAX_COMMAND_CHARS = 512;

/**
 * /proc/PID/cmdline (arguments separated by NUL) as one line: NULs become spaces, control characters are
 * shown as '?', and it is cut at MAX_COMMAND_CHARS. Null when empty (a kernel thread, or a zombie).
 */
export function commandLineOf(raw: string, maxChars = MAX_COMMAND_CHARS): string | null {
  const text = raw
    .replace(/\0+$/, '')
    .replace(/\0/g, ' ')
    // eslint-disable-next-line no-control-regex -- control characters are what this shows as '?'
    .replace(/[\u0000-\u001f\u007f]/g, '?')
    .trim();
  if (!text) return null;
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}

/** The real user id from /proc/PID/status ("Uid:\treal\teffective\tsaved\tfs"). */
export function realUidOf(status: string): number | null {
  const m = /^Uid:\s+(\d+)/m.exec(status);
  return m ? Number(m[1]) : null;
}

/** A user's name from /etc/passwd text (name:x:uid:…), or null. */
export function userNameOf(passwd: string, uid: number): string | null {
  for (const line of passwd.split('\n')) {
    const fields = line.split(':');
    if (fields.length >= 3 && Number(fields[2]) === uid && /^\d+$/.test(fields[2]!)) return fields[0] || null;
  }
  return null;
}

/**
 * A process's ancestors, nearest first, by following each parent's pid from `parentOf` (which reads
 * /proc/PID/stat), at most `maxHops`, stopping at pid 1 or 0, or at a loop.
 */
export function ancestorsOf(pid: number, parentOf: (pid: number) => number | null, maxHops = 64): number[] {
  const out: number[] = [];
  const seen = new Set([pid]);
  let at = pid;
  for (let hop = 0; hop < maxHops; hop++) {
    const parent = parentOf(at);
    if (parent === null || parent <= 0 || seen.has(parent)) break;
    out.push(parent);
    seen.add(parent);
    if (parent === 1) break;
    at = parent;
  }
  return out;
}

/** The command lines of the workbench's own children, whoever started them: runners and compile workers. */
const WORKBENCH_CHILD = /(?:^|[\s/])(?:dist\/main\/)?(?:runner|compile-worker)(?:\.impl)?\.js(?:\s|$)|gpu-workbench-(?:reaper|nvcc-|runner|sanitize)/;

export type ProcessRelation = 'target' | 'target-descendant' | 'workbench' | 'other';

export interface RelationContext {
  /** The process being monitored (given with --pid, or the command started); null for the whole device. */
  targetPid: number | null;
  /** This host. */
  hostPid: number;
}

/** How a live process relates to what the user runs, from its pid, its ancestors (nearest first) and its command line. */
export function relationOf(pid: number, ancestors: readonly number[], command: string | null, context: RelationContext): ProcessRelation {
  const { targetPid, hostPid } = context;
  if (targetPid !== null && pid === targetPid) return 'target';
  if (targetPid !== null && ancestors.includes(targetPid)) return 'target-descendant';
  if (pid === hostPid || ancestors.includes(hostPid)) return 'workbench';
  if (command !== null && WORKBENCH_CHILD.test(command)) return 'workbench';
  return 'other';
}

export interface ProcessFacts {
  pid: number;
  device: number;
  /** What NVML last said it holds (null: it cannot tell). */
  usedBytes: number | null;
  namespace: PidNamespace;
  /** 'zombie' covers the kernel's Z and X states. */
  liveness: 'alive' | 'zombie' | 'absent';
  /** For a live process. */
  relation: ProcessRelation | null;
  /** How long NVML has kept listing it since we first saw it gone; 0 while it runs. */
  listedAfterGoneUs: number;
  /** Its parent, while it is a zombie (the one that has not reaped it). */
  parent: { pid: number; command: string | null } | null;
  /** Its owner, for a live one: a user name, or "uid N"; `mine` when that is this host's user. */
  owner: { name: string; mine: boolean } | null;
}

const bytesText = (b: number | null) => (b === null ? 'memory NVML cannot size' : formatBytes(b));
const flag = (kind: ProcessFlagKind, text: string, fix: string): NonNullable<SampledProcess['flag']> => ({ kind, text, fix });

const RESET_NOTE = '`nvidia-smi --gpu-reset` needs no process on the GPU, so it frees nothing while one holds memory.';

/** The flag a process deserves, or null. Pure: everything it decides on is in `facts`. */
export function flagProcess(facts: ProcessFacts): SampledProcess['flag'] {
  const held = `${bytesText(facts.usedBytes)} on GPU ${facts.device}`;
  if (facts.liveness !== 'alive') {
    if (facts.listedAfterGoneUs < EXITED_GRACE_US) return null;
    const lingered = `${(facts.listedAfterGoneUs / 1e6).toFixed(1)} s`;
    if (facts.liveness === 'zombie') {
      const parent = facts.parent ? `its parent, PID ${facts.parent.pid}${facts.parent.command ? ` (${facts.parent.command})` : ''}` : 'its parent';
      return flag(
        'exited',
        `PID ${facts.pid} has exited but is still a zombie, and the driver still counts ${held} for it ${lingered} later.`,
        `A zombie stays until ${parent} reaps it: end or restart that parent. If the memory stays after the zombie is gone, something it forked still holds the GPU: \`fuser -v /dev/nvidia*\` (or \`lsof /dev/nvidia*\`) lists what does; stop those. ${RESET_NOTE}`,
      );
    }
    if (facts.namespace === 'initial')
      return flag(
        'exited',
        `PID ${facts.pid} has exited, yet the driver still counts ${held} for it ${lingered} later: its GPU context was not torn down.`,
        `A context is freed when the last handle to the GPU closes. Tearing down a large one takes a few seconds, so wait a little; if the memory stays, a process it forked (a DataLoader worker, a multiprocessing pool) probably still holds the device: \`fuser -v /dev/nvidia*\` (or \`lsof /dev/nvidia*\`) lists what does; stop those. ${RESET_NOTE}`,
      );
    if (facts.namespace === 'nested')
      return flag(
        'not-visible',
        `NVML lists PID ${facts.pid} with ${held}, but this container cannot see it: the driver reports the host's PID (older drivers), or it runs in another container. From here an exited process and one elsewhere look the same.`,
        `Look on the host: \`nvidia-smi\` there names it and its owner. To see every process from here, run the workbench in the host's PID namespace (\`docker run --pid=host\`).`,
      );
    return flag(
      'not-visible',
      `NVML lists PID ${facts.pid} with ${held}, but no such process is visible here, and this process cannot read its own PID namespace (/proc/self/ns/pid) to tell whether it exited or runs in another container.`,
      `Run \`nvidia-smi\` on the host to see who it is. If it is gone there too, its memory is a context left behind: \`fuser -v /dev/nvidia*\` lists what still holds the GPU.`,
    );
  }
  if (facts.relation !== 'other') return null;
  const owner = facts.owner ? (facts.owner.mine ? 'you (this user)' : facts.owner.name) : 'another user';
  return flag(
    'foreign',
    `PID ${facts.pid} holds ${held}, and neither the monitored program nor the workbench started it (it belongs to ${owner}).`,
    facts.owner?.mine
      ? `If you need that memory, stop it (\`kill ${facts.pid}\`) once you are sure it is done. ${RESET_NOTE}`
      : `If you need that memory, ask its owner (${owner}) to stop it, or pick another GPU (CUDA_VISIBLE_DEVICES). ${RESET_NOTE}`,
  );
}
