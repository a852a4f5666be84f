import type { RunnerPoolStatus } from '../../core/api/channels';
import type { LaunchPlan } from '../../core/plan/plan-schema';
import {
  type BufferPage,
  type CompiledModule,
  type ExitClassification,
  type RunnerProtocol,
  type RunnerResults,
  type RunnerStatus,
} from '../../core/runner/protocol';
import type { RunResult } from '../../core/runner/run-result';
import { distEntry } from '../paths';
import type { AbortLike } from '../../core/api/channels';
import type { ProcessLauncher } from '../process/launcher';
import { SupervisedProcess } from '../process/supervised-process';
import { NO_WARM_UP } from './warm-up';

export type Runner = SupervisedProcess<RunnerStatus, RunnerProtocol>;

export interface RunnerPoolOptions {
  launcher: ProcessLauncher;
  /** Keep a warm spare per device in use, so a discarded runner is replaced without a cold start. */
  warmSpare?: boolean;
  readyTimeoutMs?: number;
  entry?: string;
  /** How long after a fault the extra spares are kept (FAULT_WINDOW_MS by default). */
  faultWindowMs?: number;
  /** Spares kept within the fault window (SPARES_AFTER_FAULT by default); one outside it. */
  sparesAfterFault?: number;
  /**
   * Whether each runner makes its warm-up run before it says it is ready (main/runner/warm-up.ts; default yes). Off for
   * a runner under compute-sanitizer: the tool would check that run too, and the sanitized run costs what the tool does.
   */
  warmUp?: boolean;
  /**
   * How spares start: `together` (the default) starts every missing spare at once; `one-at-a-time` starts the next only
   * when no runner of the device is still starting (the active one included), so no two open a CUDA context at once.
   * Opening one takes a median of 224-340 ms but a p90 of 533-730 ms while others open theirs beside it: one at a time,
   * the first spare after a fault is ready sooner, the last later. `node dist/bench/soak.js 1000 4 one-at-a-time`
   * measures it.
   */
  spareStarts?: 'together' | 'one-at-a-time';
  /** How long dispose lets a runner exit by itself before it is killed (STOP_GRACE_MS by default; a runner under compute-sanitizer needs time to write its report). */
  stopGraceMs?: number;
}

/** How long the host keeps polling for a run's reply before it lets the event loop sleep. */
const SPIN_MS = 5;

/**
 * Spin, then block, as CUDA's own synchronisation does by default: for the first few milliseconds of a
 * run the event loop keeps polling (each turn still serves all other I/O) instead of sleeping, so a short
 * run's reply is read as it arrives rather than after the OS has woken this process — on the H200
 * machines, 0.15-0.4 ms of a ~1.8 ms re-run. Past the limit the loop sleeps as usual.
 */
function spinWhilePending(pending: Promise<unknown>, ms: number): void {
  const until = performance.now() + ms;
  let settled = false;
  const stop = () => (settled = true);
  pending.then(stop, stop);
  const turn = () => {
    if (!settled && performance.now() < until) setImmediate(turn);
  };
  setImmediate(turn);
}

/** Spares started one at a time: after this many failed starts in a row, the next starts only when a run asks. */
const MAX_FAILED_STARTS_IN_A_ROW = 3;

/** Within this long of a runner lost to a fault, the pool keeps more spares: faults come in strings. */
export const FAULT_WINDOW_MS = 60_000;
/** Spares within the fault window. Each holds a CUDA context (518 MiB of device memory on an H100) for that minute. */
export const SPARES_AFTER_FAULT = 4;

/**
 * One runner per device plus a warm spare (ARCHITECTURE.md §1). A runner that exits for any reason —
 * sticky CUDA error, crash, watchdog — is dropped, a spare takes its place, and a new spare starts.
 * After a fault the pool keeps more spares for a while: with one, the run after a second fault in a row
 * waited for a cold start (a median of 163 ms and a p95 of 491 ms on an H100, against 29 ms warm). A runner
 * takes a median of 224-340 ms, p90 533-730 ms, to open its context while others start and a faulted one tears
 * down, and in the 1,000-run soak 115 of 164 faults came within a second of the one before. Runs after a sticky
 * fault that found their runner still starting, and their p95: two spares 24 of 164 (223 ms), three 7 (60 ms),
 * four 3 (49 ms; the target is 50).
 */
export class RunnerPool {
  private readonly active = new Map<number, Runner>();
  private readonly spares = new Map<number, Runner[]>();
  private readonly lastFault = new Map<number, number>();
  private readonly windowTimers = new Map<number, NodeJS.Timeout>();
  private readonly exits: RunnerPoolStatus['recentExits'] = [];
  /** Every runner started and not yet exited, whatever its role: a retired one may still be leaving (see dispose). */
  private readonly living = new Set<Runner>();
  private disposed = false;

  constructor(private readonly options: RunnerPoolOptions) {}

  private get faultWindowMs(): number {
    return this.options.faultWindowMs ?? FAULT_WINDOW_MS;
  }

  /**
   * The device's runner, ready: the live one, else a spare, else a new one. While the device's runner is still
   * starting, a spare whose context is open, or opens first, takes its place, and it joins the spares: after a
   * fault, spares started together open their contexts side by side, and which finishes first varies by hundreds of
   * milliseconds. A runner that fails to start is replaced once; a second failure is the caller's.
   */
  async acquire(ordinal: number): Promise<{ runner: Runner; status: RunnerStatus }> {
    let failedStarts = 0;
    for (;;) {
      let runner = this.active.get(ordinal);
      if (!runner || !runner.alive) {
        if (this.disposed) throw new Error('the runner pool was shut down');
        runner = this.takeSpare(ordinal) ?? this.spawn(ordinal);
        this.active.set(ordinal, runner);
      }
      this.ensureSpare(ordinal);
      const status = this.readyStatus.get(runner);
      if (status) return { runner, status };
      const open = this.openSpare(ordinal);
      if (open) return this.promote(ordinal, runner, open);
      const never = new Promise<never>(() => undefined);
      const first = await Promise.race([
        runner.ready.then(
          () => runner,
          () => runner,
        ),
        // A spare wins only with its context open: one that failed to start, or to open it, wins nothing.
        ...this.startingSpares(ordinal).map((spare) =>
          spare.ready.then(
            (s) => (s.contextReady ? spare : never),
            () => never,
          ),
        ),
      ]);
      if (first === runner && !this.readyStatus.has(runner)) {
        // It died while starting (its exit may already have put a spare in its place): the loop goes on, once.
        const error: unknown = await runner.ready.catch((e: unknown) => e);
        if (this.active.get(ordinal) === runner) this.active.delete(ordinal);
        if (this.disposed) throw new Error('the runner pool was shut down');
        // One another caller had already moved to the spares was not this device's runner when it died.
        if (!this.demoted.has(runner) && ++failedStarts > 1) throw error;
        continue;
      }
      // Meanwhile another caller may have changed the device's runner: the loop takes whichever it is now.
      if (this.active.get(ordinal) !== runner || this.disposed) continue;
      if (first === runner) return { runner, status: this.readyStatus.get(runner)! };
      // Still a spare: not one the fault window's end is stopping.
      if (first.alive && this.spares.get(ordinal)?.includes(first)) return this.promote(ordinal, runner, first);
    }
  }

  /** A spare of the device whose context is open, if any. */
  private openSpare(ordinal: number): Runner | undefined {
    return (this.spares.get(ordinal) ?? []).find((r) => r.alive && this.readyStatus.get(r)?.contextReady === true);
  }

  /** The device's spares still starting. */
  private startingSpares(ordinal: number): Runner[] {
    return (this.spares.get(ordinal) ?? []).filter((r) => r.alive && !this.readyStatus.has(r));
  }

  /** `spare` (ready) becomes the device's runner in place of `runner` (still starting), which joins the spares. */
  private promote(ordinal: number, runner: Runner, spare: Runner): { runner: Runner; status: RunnerStatus } {
    const spares = (this.spares.get(ordinal) ?? []).filter((r) => r !== spare);
    if (runner.alive) spares.push(runner);
    this.demoted.add(runner);
    this.spares.set(ordinal, spares);
    this.active.set(ordinal, spare);
    return { runner: spare, status: this.readyStatus.get(spare)! };
  }

  /**
   * Starts the device's runner now, without waiting for it to be ready (the run that follows does): a pool that has
   * one already does nothing. A runner that fails to start is met, and replaced once, by that run's acquire.
   */
  prestart(ordinal: number): void {
    if (this.disposed) return;
    const runner = this.active.get(ordinal);
    if (!runner || !runner.alive) this.active.set(ordinal, this.takeSpare(ordinal) ?? this.spawn(ordinal));
  }

  /**
   * Runs a plan on its device's runner. Cancelling a run under way kills that runner (a hung kernel cannot
   * be stopped otherwise; a spare takes over); cancelling one still waiting behind another drops it only.
   */
  async run(plan: LaunchPlan, modules: CompiledModule[], timeoutMs: number, signal?: AbortLike): Promise<RunResult> {
    const { runner } = await this.acquire(plan.device);
    const reply = runner.request('run', { plan, modules, timeLimitMs: timeoutMs }, timeoutMs, signal);
    spinWhilePending(reply, SPIN_MS);
    const result = await reply;
    // The runner exits by itself after a sticky error, but its exit may arrive after the next run is
    // sent: retire it now so that run goes to the spare.
    if (result.failure?.sticky) this.retire(plan.device, runner);
    return result;
  }

  /** A page of a run's read-back data, from the runner that ran it (gone once that runner ran again or exited). */
  async page(request: { runnerPid: number; runId: string; buffer: string; offset: number; count: number }, timeoutMs = 10_000): Promise<BufferPage | null> {
    const runner = [...this.active.values()].find((r) => r.alive && r.pid === request.runnerPid);
    if (!runner) return null;
    return runner.request('page', { runId: request.runId, buffer: request.buffer, offset: request.offset, count: request.count }, timeoutMs);
  }

  /** The driver's view of compiled functions (registers, shared, local, max threads), on a device. */
  async inspect(ordinal: number, modules: CompiledModule[], timeoutMs = 30_000): Promise<RunnerResults['inspect']> {
    const { runner } = await this.acquire(ordinal);
    return runner.request('inspect', { modules }, timeoutMs);
  }

  /** Launches a kernel with many configurations (GPU suite): the driver's verdict and occupancy for each. */
  async probe(
    ordinal: number,
    request: { module: CompiledModule; args: Uint8Array[]; configs: Float64Array; maxDynamicSharedBytes: number | null; raiseDynamicShared?: boolean },
    timeoutMs = 300_000,
  ): Promise<RunnerResults['probe']> {
    const { runner } = await this.acquire(ordinal);
    return runner.request('probe', request, timeoutMs);
  }

  private retire(ordinal: number, runner: Runner): void {
    if (this.active.get(ordinal) !== runner) return;
    this.active.delete(ordinal);
    // A cancel is the user's, not a fault: it needs no second spare.
    if (runner.exitClassification?.kind !== 'cancelled') this.noteFault(ordinal);
    const spare = this.takeSpare(ordinal);
    if (spare) this.active.set(ordinal, spare);
    this.ensureSpare(ordinal);
  }

  /** A live spare whose context is open if there is one, else the oldest (the nearest to ready), taken out of the spares. */
  private takeSpare(ordinal: number): Runner | undefined {
    const list = (this.spares.get(ordinal) ?? []).filter((r) => r.alive);
    const ready = list.findIndex((r) => this.readyStatus.get(r)?.contextReady === true);
    const [spare] = list.splice(ready >= 0 ? ready : 0, 1);
    this.spares.set(ordinal, list);
    return spare;
  }

  /** More spares from now until the fault window closes; then the extra ones are stopped (each holds a CUDA context). */
  private noteFault(ordinal: number): void {
    this.lastFault.set(ordinal, performance.now());
    clearTimeout(this.windowTimers.get(ordinal));
    const timer = setTimeout(() => this.trimSpares(ordinal), this.faultWindowMs + 10);
    timer.unref();
    this.windowTimers.set(ordinal, timer);
  }

  private trimSpares(ordinal: number): void {
    if (this.disposed) return;
    const list = (this.spares.get(ordinal) ?? []).filter((r) => r.alive);
    const extra = list.splice(this.spareTarget(ordinal));
    this.spares.set(ordinal, list);
    for (const r of extra) void r.stop();
  }

  /** Spares to keep for a device: more within a while of a fault, else one. */
  private spareTarget(ordinal: number): number {
    const fault = this.lastFault.get(ordinal);
    const inWindow = fault !== undefined && performance.now() - fault < this.faultWindowMs;
    return inWindow ? Math.max(1, this.options.sparesAfterFault ?? SPARES_AFTER_FAULT) : 1;
  }

  status(): RunnerPoolStatus {
    const runners: RunnerPoolStatus['runners'] = [];
    const add = (role: 'active' | 'spare') => (runner: Runner, ordinal: number) => {
      if (runner.alive && runner.pid) {
        const status = this.readyStatus.get(runner);
        runners.push({
          pid: runner.pid,
          ordinal,
          role,
          contextReady: status?.contextReady ?? false,
          busy: runner.busy,
          startupMs: status?.startupMs ?? null,
          startupPhases: status?.startupPhases ?? null,
        });
      }
    };
    this.active.forEach(add('active'));
    this.spares.forEach((list, ordinal) => list.forEach((r) => add('spare')(r, ordinal)));
    return { runners, recentExits: [...this.exits] };
  }

  lastExit(): ExitClassification | null {
    const last = this.exits[this.exits.length - 1];
    return last ? { kind: last.kind as ExitClassification['kind'], summary: last.summary } : null;
  }

  /**
   * Stops every runner still alive and waits for each to exit (within the grace), the retired ones too: a runner
   * retired after a sticky error exits by itself, and under compute-sanitizer the tool holding it writes its report
   * only then — a caller that went on at once would read a report not yet written.
   */
  async dispose(): Promise<void> {
    this.disposed = true;
    for (const timer of this.windowTimers.values()) clearTimeout(timer);
    const all = [...this.living];
    this.active.clear();
    this.spares.clear();
    await Promise.all(all.map((r) => r.stop(this.options.stopGraceMs)));
  }

  private readonly readyStatus = new WeakMap<Runner, RunnerStatus>();
  /** Runners a spare replaced while they were still starting (they joined the spares). */
  private readonly demoted = new WeakSet<Runner>();
  /** Runners of a device that failed to start since the last that did (spares started one at a time). */
  private readonly failedStarts = new Map<number, number>();

  private spawn(ordinal: number): Runner {
    const runner: Runner = new SupervisedProcess<RunnerStatus, RunnerProtocol>({
      launcher: this.options.launcher,
      entry: this.options.entry ?? distEntry('runner.js'),
      args: [String(ordinal), ...(this.options.warmUp === false ? [NO_WARM_UP] : [])],
      name: `runner for device ${ordinal}`,
      role: 'runner',
      readyTimeoutMs: this.options.readyTimeoutMs ?? 30_000,
    });
    this.living.add(runner);
    runner.ready.then((s) => this.readyStatus.set(runner, s)).catch(() => undefined);
    // One at a time, the next spare starts when this runner is ready, or when it failed to start: a few failures in a
    // row, then no more until the next run asks (a runner that cannot start is not started again forever).
    if (this.options.spareStarts === 'one-at-a-time') {
      runner.ready.then(
        () => {
          this.failedStarts.delete(ordinal);
          this.ensureSpare(ordinal);
        },
        () => {
          const failed = (this.failedStarts.get(ordinal) ?? 0) + 1;
          this.failedStarts.set(ordinal, failed);
          if (failed < MAX_FAILED_STARTS_IN_A_ROW) this.ensureSpare(ordinal);
        },
      );
    }
    runner.on('exit', (exit: ExitClassification) => {
      this.living.delete(runner);
      if (runner.pid) this.exits.push({ pid: runner.pid, kind: exit.kind, summary: exit.summary, at: new Date().toISOString() });
      if (this.exits.length > 20) this.exits.shift();
      if (this.disposed) return;
      if (this.active.get(ordinal) === runner) {
        this.retire(ordinal, runner);
      } else {
        this.spares.set(
          ordinal,
          (this.spares.get(ordinal) ?? []).filter((r) => r !== runner),
        );
      }
    });
    return runner;
  }

  private ensureSpare(ordinal: number): void {
    if (this.disposed || this.options.warmSpare === false) return;
    const list = (this.spares.get(ordinal) ?? []).filter((r) => r.alive);
    const oneAtATime = this.options.spareStarts === 'one-at-a-time';
    while (list.length < this.spareTarget(ordinal) && !(oneAtATime && this.starting(ordinal, list))) {
      list.push(this.spawn(ordinal));
    }
    this.spares.set(ordinal, list);
  }

  /** Whether a runner of the device, active or spare, has not yet said it is ready. */
  private starting(ordinal: number, spares: Runner[]): boolean {
    const active = this.active.get(ordinal);
    return [...(active?.alive ? [active] : []), ...spares].some((r) => r.alive && !this.readyStatus.has(r));
  }
}
