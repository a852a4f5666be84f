import { readdirSync } from 'node:fs';

import {
  DescendantLog,
  MAX_DESCENDANT_DEPTH,
  MAX_DESCENDANT_RECORDS,
  parseChildren,
  wantsCommandRead,
  type DescendantRecord,
} from '../../core/memory/descendant-log';
import { isGone } from '../../core/memory/process-flags';
import { ProcReader, readSmallFileSync } from './proc-reader';

/** How often the monitored program's tree is walked: a child that holds the GPU lives far longer (CUDA's start alone takes ~100 ms). */
export const DESCENDANT_WATCH_MS = 25;
/** Bytes read of one thread's children file (a pid is at most 8 characters and a space: ~1,800 children). */
const CHILDREN_BYTES = 16_384;
/** Threads of one process whose children are read, at most. */
const MAX_THREADS = 4096;
/** A walk's share of the JS thread at most: a large tree is walked less often (the next walk waits this many times the last one's length). */
const WALK_SPACING = 5;

export interface DescendantWatcherOptions {
  periodMs?: number;
  maxRecords?: number;
  root?: string;
}

/** What the process tracker asks of the watcher (tests give their own). */
export interface DescendantSource {
  /** The record of the process NVML names `pid`: that very process while /proc still has it (`startTime`), else the latest of that pid. */
  recordOf(pid: number, startTime: number | null): DescendantRecord | null;
  /** The record's command line once a read of it in flight has ended. */
  commandOf(record: DescendantRecord): Promise<string | null>;
}

/**
 * Follows the monitored process's descendants while it runs, on its own short period: each walk reads
 * /proc/PID/task/TID/children from the monitored process down (no scan of all of /proc), and each process it has not
 * seen before is recorded at once — its pid, start time, parent, ancestry and short name from /proc/PID/stat, its
 * command line read right after (off the JS thread, bounded, as ProcReader reads it). A process that is gone by then
 * keeps what was read. Bounded (MAX_DESCENDANT_RECORDS, MAX_DESCENDANT_DEPTH); it stops by itself once the monitored
 * process is gone, and with stop().
 *
 * What it cannot see: a process that started and ended between two walks, and one whose parent ended before a walk
 * found it (it is then re-parented out of the tree).
 */
export class DescendantWatcher implements DescendantSource {
  readonly log: DescendantLog;
  /** Why the tree cannot be followed here (a kernel without /proc/PID/task/TID/children), once found. */
  unavailable: string | null = null;
  private readonly periodMs: number;
  private readonly root: string;
  private readonly reads = new Map<DescendantRecord, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private rootStart: number | null = null;
  /** When the previous walk was made (µs): what it did not find has ended. */
  private previousWalkUs: number | null = null;
  /** Walks made, and the µs they took in all (on the JS thread). */
  readonly cost = { walks: 0, totalUs: 0 };

  constructor(
    readonly rootPid: number,
    private readonly proc: ProcReader,
    options: DescendantWatcherOptions = {},
  ) {
    this.periodMs = Math.max(5, options.periodMs ?? DESCENDANT_WATCH_MS);
    this.root = options.root ?? '/proc';
    this.log = new DescendantLog(options.maxRecords ?? MAX_DESCENDANT_RECORDS);
  }

  get running(): boolean {
    return this.timer !== null;
  }

  /** Walks once now, then every period (longer for a large tree) until stop() or the monitored process is gone. */
  start(): this {
    if (this.timer || this.stopped) return this;
    const stat = this.proc.stat(this.rootPid);
    if (isGone(stat)) return this;
    this.rootStart = stat!.startTime;
    this.next(this.walk());
    return this;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Not unref'd: the session that owns it stops it, and one left running would show (a CLI that does not exit). */
  private next(lastWalkMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.next(this.walk()), Math.max(this.periodMs, WALK_SPACING * lastWalkMs));
  }

  /** Ends once every command-line read started has ended (each is bounded by ProcReader's time limit). */
  async settled(): Promise<void> {
    while (this.reads.size) await Promise.all([...this.reads.values()]);
  }

  recordOf(pid: number, startTime: number | null): DescendantRecord | null {
    return this.log.find(pid, startTime);
  }

  async commandOf(record: DescendantRecord): Promise<string | null> {
    await this.reads.get(record);
    return record.command;
  }

  /** One walk of the tree (public so a caller can take one at a moment of its choosing); answers the ms it took. */
  walk(): number {
    const started = performance.now();
    const rootStat = this.proc.stat(this.rootPid);
    if (isGone(rootStat) || (this.rootStart !== null && rootStat!.startTime !== this.rootStart)) {
      this.stop();
      return 0;
    }
    const nowUs = Date.now() * 1000;
    const seen = new Set<number>([this.rootPid]);
    const stack: number[][] = [[this.rootPid]]; // each entry: a process and its ancestors up to the root, nearest first
    while (stack.length) {
      const chain = stack.pop()!;
      const parent = chain[0]!;
      const children = this.childrenOf(parent);
      if (children === null && parent === this.rootPid) this.noticeUnavailable();
      for (const pid of children ?? []) {
        // Bounded work: past twice the records kept, the rest would only be counted as not kept.
        if (seen.has(pid) || seen.size > 2 * this.log.max) continue;
        seen.add(pid);
        const record = this.see(pid, parent, chain, nowUs);
        if (record && chain.length < MAX_DESCENDANT_DEPTH) stack.push([pid, ...chain]);
      }
    }
    this.previousWalkUs = nowUs;
    const ms = performance.now() - started;
    this.cost.walks++;
    this.cost.totalUs += ms * 1000;
    return ms;
  }

  /** A process its parent's children file named: recorded when new, its command line (re)read when wanted; null: not followed further. */
  private see(pid: number, parent: number, chain: number[], nowUs: number): DescendantRecord | null {
    const stat = this.proc.stat(pid);
    // Gone between the two reads, or its pid already given to another process: the next walk sees what is there.
    if (!stat || stat.ppid !== parent) return null;
    let record = this.log.get(pid, stat.startTime);
    if (!record) {
      record = {
        pid,
        startTime: stat.startTime,
        ppid: parent,
        ancestors: chain,
        comm: stat.comm,
        command: null,
        commandReads: 0,
        firstSeenUs: nowUs,
        lastSeenUs: nowUs,
      };
      if (!this.log.add(record, this.previousWalkUs ?? nowUs)) return null;
    }
    record.lastSeenUs = nowUs;
    const gone = isGone(stat);
    if (wantsCommandRead(record, stat.comm, gone)) {
      record.comm = stat.comm;
      this.readCommand(record);
    }
    return gone ? null : record;
  }

  /** One read at a time per record; a read that finds nothing (the process left meanwhile) keeps what an earlier one found. */
  private readCommand(record: DescendantRecord): void {
    if (this.reads.has(record)) return;
    record.commandReads++;
    const read = this.proc
      .cmdline(record.pid)
      .then((command) => {
        // Gone by now is fine (the read found it); a later process given its pid meanwhile is not this one.
        const now = this.proc.stat(record.pid);
        if (command !== null && (now === null || now.startTime === record.startTime)) record.command = command;
      })
      .catch(() => undefined)
      .finally(() => this.reads.delete(record));
    this.reads.set(record, read);
  }

  /** The pids a process's threads started (each thread keeps its own children file), or null when there is none to read. */
  private childrenOf(pid: number): number[] | null {
    let tids: string[];
    try {
      tids = readdirSync(`${this.root}/${pid}/task`);
    } catch {
      return null;
    }
    const out: number[] = [];
    let any = false;
    for (const tid of tids.slice(0, MAX_THREADS)) {
      const text = readSmallFileSync(`${this.root}/${pid}/task/${tid}/children`, CHILDREN_BYTES);
      if (text === null) continue;
      any = true;
      out.push(...parseChildren(text, text.length < CHILDREN_BYTES));
    }
    return any ? out : null;
  }

  private noticeUnavailable(): void {
    if (this.unavailable !== null || isGone(this.proc.stat(this.rootPid))) return;
    this.unavailable = `The program's child processes could not be followed: ${this.root}/${this.rootPid}/task/*/children cannot be read (a kernel built without CONFIG_PROC_CHILDREN?), so a child that exits before its first listing is not named.`;
    this.stop();
  }
}
