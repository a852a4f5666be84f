import { ancestorsOf, flagProcess, isGone, NORMAL_TEARDOWN_US, relationOf, type ProcessRelation, type RelationContext } from '../../core/memory/process-flags';
import type { DescendantRecord } from '../../core/memory/descendant-log';
import type { MemorySample, SampledProcess } from '../../core/memory/samples';
import type { DescendantSource } from './descendant-watcher';
import type { ProcReader } from './proc-reader';

/** PIDs followed at most; past this, new ones are counted but not read about. */
export const MAX_TRACKED_PROCESSES = 4096;
/** How long the names still being read (command lines, NVML's names) are waited for when a session ends. */
export const NAMING_WAIT_MS = 1_000;

interface Tracked {
  record: SampledProcess;
  /** /proc's start time when first seen: a later process given the same pid has another. */
  startTime: number | null;
  ancestors: number[];
  /** What the descendant watcher recorded of it while it ran, when it is one the monitored process started. */
  descendant: DescendantRecord | null;
  relation: ProcessRelation | null;
  uid: number | null;
  device: number;
  usedBytes: number | null;
  /** Wall-clock µs of the last sample that listed it. */
  lastListedUs: number;
  /** Wall-clock µs when /proc first showed it gone (absent, a zombie, or its pid reused), or null. */
  goneSinceUs: number | null;
  zombieParent: { pid: number; command: string | null } | null;
  liveness: 'alive' | 'zombie' | 'absent';
  changed: boolean;
}

/**
 * Every process NVML lists, named once (its command line from /proc, else what the descendant watcher read
 * while it ran, else NVML's name, else the kernel's short name) and flagged as facts change: who started it is
 * read when it is first seen (its ancestry, bounded), and whether it still runs is checked at every refresh while
 * NVML lists it. NVML's listings arrive up to a second late, so a child of the monitored program may be gone from
 * /proc by then: what the watcher recorded (main/memory/descendant-watcher.ts) still names it, and as a child of
 * the program. The monitored process itself carries the command line the monitor started it with.
 */
export class ProcessTracker {
  private readonly tracked = new Map<number, Tracked>();
  private readonly ownUid = typeof process.getuid === 'function' ? process.getuid() : null;
  private untracked = 0;
  private descendants: DescendantSource | null = null;
  private targetCommand: string | null = null;
  /** Names being read (off the JS thread). */
  private readonly naming = new Set<Promise<void>>();

  constructor(
    private readonly proc: ProcReader,
    private readonly context: RelationContext,
    private readonly nvmlName: (pid: number) => Promise<string | null>,
  ) {}

  /**
   * The monitored process, once known (a command's pid is known only once it has started), and its command line
   * (the argv the monitor started it with): it is named so even when it is gone before NVML's first listing of it
   * is read.
   */
  setTarget(pid: number | null, command: string | null = null): void {
    this.context.targetPid = pid;
    this.targetCommand = pid === null ? null : command;
    for (const t of this.tracked.values()) {
      if (pid !== null && t.record.pid === pid && this.targetCommand) {
        t.record.command = this.targetCommand;
        t.changed = true;
      }
      if (t.liveness !== 'alive' && t.record.pid !== pid && !t.descendant) continue;
      this.relate(t);
      if (t.liveness === 'alive') this.reflag(t);
    }
  }

  /** What the monitored process's descendants were seen as while they ran; consulted when NVML first names a pid. */
  followDescendants(source: DescendantSource | null): void {
    this.descendants = source;
  }

  get untrackedCount(): number {
    return this.untracked;
  }

  observe(sample: MemorySample): void {
    for (const p of sample.processes ?? []) {
      let t = this.tracked.get(p.pid);
      if (!t) {
        if (this.tracked.size >= MAX_TRACKED_PROCESSES) {
          this.untracked++;
          continue;
        }
        t = this.firstSight(p.pid, p.device, sample.timeUs);
      }
      t.device = p.device;
      t.usedBytes = p.usedBytes;
      t.lastListedUs = sample.timeUs;
      t.record.lastSeenUs = sample.timeUs;
      t.changed = true;
    }
  }

  /** Re-checks whether the processes NVML still lists are alive, and their flags. `nowUs`: wall clock. */
  refresh(nowUs: number, latestSampleUs: number): void {
    for (const t of this.tracked.values()) {
      const listed = t.lastListedUs === latestSampleUs;
      if (listed && t.goneSinceUs === null) {
        const stat = this.proc.stat(t.record.pid);
        const reused = stat !== null && t.startTime !== null && stat.startTime !== t.startTime;
        if (isGone(stat) || reused) {
          t.goneSinceUs = nowUs;
          t.liveness = stat !== null && !reused ? 'zombie' : 'absent';
          if (t.liveness === 'zombie' && stat) t.zombieParent = { pid: stat.ppid, command: this.commandNow(stat.ppid) };
        }
      }
      if (!listed && t.record.flag?.kind === 'exited' && t.goneSinceUs !== null) {
        // NVML let go of it: a teardown that took a while, or one that lingered. Said once.
        const after = t.lastListedUs - t.goneSinceUs;
        if (after < NORMAL_TEARDOWN_US) t.record.flag = null;
        else if (!t.record.flag.text.includes('released')) {
          t.record.flag = { ...t.record.flag, text: `${t.record.flag.text} The driver released it ${(after / 1e6).toFixed(1)} s after the exit.` };
        }
        t.changed = true;
        continue;
      }
      if (listed) this.reflag(t);
    }
  }

  /** The pids the listing at `timeUs` named. */
  listedAt(timeUs: number): number[] {
    return [...this.tracked.values()].filter((t) => t.lastListedUs === timeUs).map((t) => t.record.pid);
  }

  /** Processes whose record changed since the last call (new, seen again, flagged, named). */
  takeChanged(): SampledProcess[] {
    const out: SampledProcess[] = [];
    for (const t of this.tracked.values()) {
      if (!t.changed) continue;
      t.changed = false;
      out.push({ ...t.record });
    }
    return out;
  }

  all(): SampledProcess[] {
    return [...this.tracked.values()].map((t) => ({ ...t.record }));
  }

  relations(): Map<number, ProcessRelation | null> {
    return new Map([...this.tracked.values()].map((t) => [t.record.pid, t.relation]));
  }

  /**
   * For each process the monitored one started: its parent, that one's parent, … up to the monitored process
   * (nearest first), as /proc shows them, or as the watcher recorded them when /proc no longer can.
   */
  parents(): Map<number, number[]> {
    const target = this.context.targetPid;
    const out = new Map<number, number[]>();
    if (target === null) return out;
    for (const t of this.tracked.values()) {
      if (t.relation !== 'target-descendant') continue;
      const chain = t.ancestors.includes(target) ? t.ancestors : (t.descendant?.ancestors ?? []);
      const at = chain.indexOf(target);
      if (at >= 0) out.set(t.record.pid, chain.slice(0, at + 1));
    }
    return out;
  }

  /** Ends once the names being read have been, or after `timeoutMs` (an NVML call may never return). */
  async named(timeoutMs = NAMING_WAIT_MS): Promise<void> {
    if (!this.naming.size) return;
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    try {
      await Promise.race([Promise.all([...this.naming]), limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The monitored process's descendants (as seen when first listed) that still run, with what NVML last said they held. */
  liveDescendants(): { pid: number; command: string | null; heldBytes: number | null }[] {
    return [...this.tracked.values()]
      .filter((t) => t.relation === 'target-descendant' && !isGone(this.proc.stat(t.record.pid)))
      .map((t) => ({ pid: t.record.pid, command: t.record.command, heldBytes: t.usedBytes }));
  }

  private firstSight(pid: number, device: number, timeUs: number): Tracked {
    const stat = this.proc.stat(pid);
    const alive = !isGone(stat);
    // Gone from /proc (no start time to match): the latest process the watcher saw with this pid.
    const descendant = this.descendants?.recordOf(pid, stat?.startTime ?? null) ?? null;
    const shortName = stat?.comm ?? descendant?.comm;
    const command = pid === this.context.targetPid && this.targetCommand ? this.targetCommand : (descendant?.command ?? (shortName ? `[${shortName}]` : null));
    const t: Tracked = {
      record: { pid, command, flag: null, firstSeenUs: timeUs, lastSeenUs: timeUs },
      startTime: stat?.startTime ?? null,
      ancestors: alive ? ancestorsOf(pid, this.proc.parentOf) : [],
      descendant,
      relation: null,
      uid: alive ? this.proc.uid(pid) : null,
      device,
      usedBytes: null,
      lastListedUs: timeUs,
      goneSinceUs: null,
      zombieParent: null,
      liveness: alive ? 'alive' : stat ? 'zombie' : 'absent',
      changed: true,
    };
    if (!alive) {
      // Seen gone at its first sample: how long it lingers is counted from now.
      t.goneSinceUs = Date.now() * 1000;
      if (stat) t.zombieParent = { pid: stat.ppid, command: this.commandNow(stat.ppid) };
    }
    this.relate(t);
    this.tracked.set(pid, t);
    const naming: Promise<void> = this.name(t)
      .catch(() => undefined)
      .finally(() => this.naming.delete(naming));
    this.naming.add(naming);
    return t;
  }

  /**
   * Its command line, read once (off the JS thread); else what the watcher read while it ran; else NVML's name; the
   * kernel's short name stays otherwise. The monitored process keeps the command line it was started with.
   */
  private async name(t: Tracked): Promise<void> {
    const pid = t.record.pid;
    if (pid === this.context.targetPid && this.targetCommand) return;
    const recorded = t.descendant && this.descendants ? this.descendants.commandOf(t.descendant) : Promise.resolve(null);
    const command = (await this.proc.cmdline(pid)) ?? (await recorded) ?? (await this.nvmlName(pid));
    if (!command) return;
    t.record.command = command;
    this.relate(t);
    this.reflag(t);
    t.changed = true;
  }

  /**
   * How it relates to the monitored process: the target by its pid; one the watcher saw below the target is that
   * one's descendant even once gone, or re-parented away when its parent ended; any other is judged from /proc
   * while it runs (a gone one keeps what it was judged as).
   */
  private relate(t: Tracked): void {
    const { targetPid } = this.context;
    const pid = t.record.pid;
    if (targetPid !== null && pid === targetPid) t.relation = 'target';
    else if (targetPid !== null && t.descendant?.ancestors.includes(targetPid)) t.relation = 'target-descendant';
    else if (t.liveness === 'alive') t.relation = relationOf(pid, t.ancestors, t.record.command, this.context);
  }

  private commandNow(pid: number): string | null {
    const t = this.tracked.get(pid);
    if (t?.record.command) return t.record.command;
    const stat = this.proc.stat(pid);
    return stat ? `[${stat.comm}]` : null;
  }

  private reflag(t: Tracked): void {
    const owner = t.uid === null ? null : { name: this.proc.userName(t.uid) ?? `uid ${t.uid}`, mine: this.ownUid !== null && t.uid === this.ownUid };
    const flag = flagProcess({
      pid: t.record.pid,
      device: t.device,
      usedBytes: t.usedBytes,
      namespace: this.proc.namespace,
      liveness: t.liveness,
      relation: t.relation,
      listedAfterGoneUs: t.goneSinceUs === null ? 0 : Math.max(0, t.lastListedUs - t.goneSinceUs),
      parent: t.zombieParent,
      owner,
    });
    if (JSON.stringify(flag) !== JSON.stringify(t.record.flag)) {
      t.record.flag = flag;
      t.changed = true;
    }
  }
}
