import { ancestorsOf, flagProcess, isGone, NORMAL_TEARDOWN_US, relationOf, type ProcessRelation, type RelationContext } from '../../core/memory/process-flags';
import type { MemorySample, SampledProcess } from '../../core/memory/samples';
import type { ProcReader } from './proc-reader';

/** PIDs followed at most; past this, new ones are counted but not read about. */
export const MAX_TRACKED_PROCESSES = 4096;

interface Tracked {
  record: SampledProcess;
  /** /proc's start time when first seen: a later process given the same pid has another. */
  startTime: number | null;
  ancestors: number[];
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
 * Every process NVML lists, named once (its command line from /proc, else NVML's name, else the kernel's
 * short name) and flagged as facts change: who started it is read when it is first seen (its ancestry,
 * bounded), and whether it still runs is checked at every refresh while NVML lists it.
 */
export class ProcessTracker {
  private readonly tracked = new Map<number, Tracked>();
  private readonly ownUid = typeof process.getuid === 'function' ? process.getuid() : null;
  private untracked = 0;

  constructor(
    private readonly proc: ProcReader,
    private readonly context: RelationContext,
    private readonly nvmlName: (pid: number) => Promise<string | null>,
  ) {}

  /** The monitored process, once known (a command's pid is known only once it has started). */
  setTarget(pid: number | null): void {
    this.context.targetPid = pid;
    for (const t of this.tracked.values()) {
      if (t.liveness !== 'alive') continue;
      t.relation = relationOf(t.record.pid, t.ancestors, t.record.command, this.context);
      this.reflag(t);
    }
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

  /** The monitored process's descendants (as seen when first listed) that still run, with what NVML last said they held. */
  liveDescendants(): { pid: number; command: string | null; heldBytes: number | null }[] {
    return [...this.tracked.values()]
      .filter((t) => t.relation === 'target-descendant' && !isGone(this.proc.stat(t.record.pid)))
      .map((t) => ({ pid: t.record.pid, command: t.record.command, heldBytes: t.usedBytes }));
  }

  private firstSight(pid: number, device: number, timeUs: number): Tracked {
    const stat = this.proc.stat(pid);
    const alive = !isGone(stat);
    const t: Tracked = {
      record: { pid, command: stat ? `[${stat.comm}]` : null, flag: null, firstSeenUs: timeUs, lastSeenUs: timeUs },
      startTime: stat?.startTime ?? null,
      ancestors: alive ? ancestorsOf(pid, this.proc.parentOf) : [],
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
    t.relation = alive ? relationOf(pid, t.ancestors, null, this.context) : null;
    this.tracked.set(pid, t);
    void this.name(t);
    return t;
  }

  /** Its command line, read once (off the JS thread); else NVML's name; the kernel's short name stays otherwise. */
  private async name(t: Tracked): Promise<void> {
    const command = (await this.proc.cmdline(t.record.pid)) ?? (await this.nvmlName(t.record.pid));
    if (!command) return;
    t.record.command = command;
    if (t.liveness === 'alive') t.relation = relationOf(t.record.pid, t.ancestors, command, this.context);
    this.reflag(t);
    t.changed = true;
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
