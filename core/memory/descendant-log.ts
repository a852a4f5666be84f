/**
 * What the descendant watcher (main/memory/descendant-watcher.ts) learned about each process the monitored
 * program started, while it ran: NVML's process listings reach the monitor up to a second late, and a child
 * that held memory for a quarter of a second is gone from /proc by then, with its command line and its parent.
 * The watcher follows the program's tree through /proc/PID/task/TID/children every few tens of milliseconds and
 * writes here; the process tracker reads it back when NVML first names a PID.
 *
 * A process is named by its pid *and* its start time (/proc/PID/stat's field 22): a pid is reused once its
 * process is gone, and the later process is another one.
 */

/** Records kept at most; past it, the oldest of those no longer running make room, else a new one is not kept. */
export const MAX_DESCENDANT_RECORDS = 1024;
/** How deep below the monitored process the tree is followed (as ancestorsOf's hops). */
export const MAX_DESCENDANT_DEPTH = 64;
/** Reads of a command line per process while it runs: the first one may come between fork and exec. */
export const COMMAND_READS = 2;

export interface DescendantRecord {
  pid: number;
  /** /proc/PID/stat's start time (clock ticks after boot). */
  startTime: number;
  /** Its parent when first seen (the process whose children file named it). */
  ppid: number;
  /** Its ancestors up to the monitored process, nearest first: the last one is the monitored process. */
  ancestors: number[];
  /** The kernel's short name, as last seen (it changes at exec). */
  comm: string;
  /** Its command line as last read while it ran; null until one was read (or when none could be). */
  command: string | null;
  /** How many reads of its command line were started. */
  commandReads: number;
  /** Wall-clock µs of the first and the latest walk that found it. */
  firstSeenUs: number;
  lastSeenUs: number;
}

/**
 * The pids in a /proc/PID/task/TID/children file: decimal pids separated by spaces. `complete` false when the read
 * stopped at its bound: the last number may then be cut short, and is left out. Anything not a pid is skipped.
 */
export function parseChildren(text: string, complete = true): number[] {
  const words = text.split(/\s+/).filter(Boolean);
  if (!complete && !/\s$/.test(text)) words.pop();
  const out: number[] = [];
  for (const w of words) {
    if (!/^\d{1,10}$/.test(w)) continue;
    const pid = Number(w);
    if (pid > 0 && pid <= 0x7fffffff) out.push(pid);
  }
  return out;
}

/**
 * The record that names the process NVML calls `pid`: with a start time (the process is still in /proc, alive or a
 * zombie), only the record of that very process; without one (it is gone), the latest record of that pid — NVML
 * lists a process at most a few seconds after it ran, so the latest one there is the one it means.
 */
export function pickRecord(records: readonly DescendantRecord[], pid: number, startTime: number | null): DescendantRecord | null {
  let best: DescendantRecord | null = null;
  for (const r of records) {
    if (r.pid !== pid) continue;
    if (startTime !== null) {
      if (r.startTime === startTime) return r;
      continue;
    }
    if (!best || r.startTime > best.startTime || (r.startTime === best.startTime && r.firstSeenUs > best.firstSeenUs)) best = r;
  }
  return best;
}

/**
 * Whether to (re)read a record's command line now that a walk found it, with the short name /proc gives now: at
 * first sight, once more to confirm (a first read between fork and exec gives the parent's command line), and
 * again whenever the short name changed (it exec'd another program). Not for a zombie: its command line is empty.
 */
export function wantsCommandRead(record: DescendantRecord, commNow: string, gone: boolean): boolean {
  if (gone) return false;
  return record.commandReads < COMMAND_READS || commNow !== record.comm;
}

/** The records, bounded; pure bookkeeping (the watcher does the reading). */
export class DescendantLog {
  private readonly records: DescendantRecord[] = [];
  private readonly byProcess = new Map<string, DescendantRecord>();
  /** Processes not kept (each once, up to 4 × max of them) because every record was of one still running. */
  private readonly left = new Set<string>();

  constructor(readonly max = MAX_DESCENDANT_RECORDS) {}

  get size(): number {
    return this.records.length;
  }

  /** Processes not kept (yet) because every record was of one still running. */
  get dropped(): number {
    return this.left.size;
  }

  /** The record of exactly this process, if kept. */
  get(pid: number, startTime: number): DescendantRecord | null {
    return this.byProcess.get(`${pid}:${startTime}`) ?? null;
  }

  /** See pickRecord. */
  find(pid: number, startTime: number | null): DescendantRecord | null {
    return pickRecord(this.records, pid, startTime);
  }

  /**
   * Keeps a new record. When full, the oldest record of a process no walk found since `liveSinceUs` (the previous
   * walk: the current one may not have reached it yet) makes room; when every one still runs, the new one is counted
   * in `dropped` (until a later walk keeps it) and not kept.
   */
  add(record: DescendantRecord, liveSinceUs: number): boolean {
    const key = `${record.pid}:${record.startTime}`;
    if (this.records.length >= this.max) {
      const old = this.records.findIndex((r) => r.lastSeenUs < liveSinceUs);
      if (old < 0 || this.max <= 0) {
        if (this.left.size < 4 * this.max) this.left.add(key);
        return false;
      }
      const [gone] = this.records.splice(old, 1);
      this.byProcess.delete(`${gone!.pid}:${gone!.startTime}`);
    }
    this.records.push(record);
    this.byProcess.set(key, record);
    this.left.delete(key);
    return true;
  }

  all(): readonly DescendantRecord[] {
    return this.records;
  }
}
