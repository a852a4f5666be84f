import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { sanitizerArguments, type SanitizerOptions } from '../../core/sanitizer/sanitizer-args';
import { sanitizerLauncher } from '../process/sanitizer-launcher';
import type { RunnerPoolStatus } from '../../core/api/channels';
import { RunnerPool } from '../runner/runner-pool';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import type { WaitingReader } from '../readers/reader-process';
import { BoundedOutput } from '../tools/bounded-output';
import { startReportsReader } from '../tools/sanitize-program';
import { makePrivateFolder } from './private-folder';

/** How long a runner under the tool may take to start (the tool attaches first) and to leave (it writes its report). */
const SANITIZED_READY_MS = 120_000;
const SANITIZED_STOP_GRACE_MS = 30_000;
/** What the tool prints before a run takes its runner (its banner) is kept up to this much for the run's counter. */
const EARLY_OUTPUT_BYTES = 64 * 1024;

/** What a runner under compute-sanitizer is started with: two equal specs make interchangeable runners. */
export interface SanitizedRunnerSpec {
  sanitizerPath: string;
  options: SanitizerOptions;
  /** The Node.js the tool starts the runner with (tool-node.ts). */
  nodePath: string;
  /** The device the runner opens its context on. */
  ordinal: number;
}

/** One string per spec: a spare is taken only by a run that would have started the same runner. */
export const sanitizedRunnerKey = (spec: SanitizedRunnerSpec): string =>
  JSON.stringify([spec.sanitizerPath, sanitizerArguments(spec.options, 'report-%p.xml'), spec.nodePath, spec.ordinal]);

/**
 * One runner under compute-sanitizer, for one plan run: the tool writes one report per process, when the runner
 * leaves, so a runner runs one plan and goes. Its folder holds that report; its output is kept (bounded), and handed
 * as it comes to whoever attaches, with what came before (the tool's banner) first.
 */
export class SanitizedRunner {
  readonly output = new BoundedOutput();
  /** The tool's own exit (86 when it found something), as distinct from how the runner under it ended. */
  toolExit: { code: number | null; signal: string | null } = { code: null, signal: null };
  private listener: ((chunk: Buffer) => void) | null = null;
  private early: Buffer[] = [];
  private earlyBytes = 0;
  private disposed: Promise<void> | null = null;
  private reader: WaitingReader | null = null;

  private constructor(
    readonly key: string,
    readonly dir: string,
    readonly pool: RunnerPool,
  ) {}

  /** Makes its private folder and pool; the run starts its runner (startAhead starts a spare's now). */
  static async start(spec: SanitizedRunnerSpec): Promise<SanitizedRunner> {
    const dir = await makePrivateFolder('sanitize');
    let self: SanitizedRunner | null = null;
    const pool = new RunnerPool({
      launcher: sanitizerLauncher(
        spec.sanitizerPath,
        sanitizerArguments(spec.options, join(dir, 'report-%p.xml')),
        (chunk) => self?.take(chunk),
        (code, signal) => self && (self.toolExit = { code, signal }),
        spec.nodePath,
      ),
      warmSpare: false,
      warmUp: false,
      readyTimeoutMs: SANITIZED_READY_MS,
      stopGraceMs: SANITIZED_STOP_GRACE_MS,
    });
    self = new SanitizedRunner(sanitizedRunnerKey(spec), dir, pool);
    return self;
  }

  /** A spare: its runner starts now, and the reader of its report with it. */
  startAhead(spec: SanitizedRunnerSpec): void {
    this.pool.prestart(spec.ordinal);
    this.reportsReader(spec.options.tool);
  }

  /**
   * The reader of its report (a process that waits for the tool to end): a spare's starts with it, so its start-up is
   * spent while the spare waits, not after the tool (a re-run on a spare ends sooner than a reader starts).
   */
  reportsReader(tool: SanitizerTool): WaitingReader {
    return (this.reader ??= startReportsReader(this.dir, tool));
  }

  private take(chunk: Buffer): void {
    this.output.push(chunk);
    if (this.listener) return this.listener(chunk);
    // Past the bound nothing more is kept: a later chunk after a gap would join lines that were not together.
    if (this.earlyBytes + chunk.length > EARLY_OUTPUT_BYTES) this.earlyBytes = Infinity;
    if (this.earlyBytes === Infinity) return;
    this.early.push(chunk);
    this.earlyBytes += chunk.length;
  }

  /** The tool's output from now on, after what it printed before. */
  attach(listener: (chunk: Buffer) => void): void {
    this.listener = listener;
    for (const chunk of this.early.splice(0)) listener(chunk);
    this.earlyBytes = 0;
  }

  /** Its runner is alive (starting or ready): a spare that died while it waited is not taken. */
  get alive(): boolean {
    return this.disposed === null && this.pool.status().runners.length > 0;
  }

  /** Lets the runner leave (the tool writes its report) and waits for the tool to end. */
  leave(): Promise<void> {
    return this.pool.dispose();
  }

  /** Leaves, then removes its folder: its report is read by then, or never will be. */
  dispose(): Promise<void> {
    this.reader?.dispose();
    this.disposed ??= this.pool
      .dispose()
      .catch(() => undefined)
      .then(() => rm(this.dir, { recursive: true, force: true }))
      .catch(() => undefined);
    return this.disposed;
  }
}

/** An unused spare is stopped after this long: it holds a CUDA context, and the tool's memory, on the device. */
export const SANITIZED_SPARE_IDLE_MS = 120_000;

/**
 * One runner under compute-sanitizer started ahead, for the next run with the same tool, options and device: runs
 * under the tool come in strings (fix, check again), and a runner's start under the tool (the tool attaching, Node's
 * start, the context) is most of a short run's time. Kept by the app's host only (a one-shot CLI makes none); stopped
 * after SANITIZED_SPARE_IDLE_MS unused, when the host stops, before Check everything, a program under a tool or a
 * program's diagnosis, and when a run under another tool, options or device comes. A plain run whose diagnosis offers a
 * re-run under a tool starts one too (prepareSanitizedRerun).
 */
export class SanitizerSpares {
  private spare: { runner: SanitizedRunner; timer: NodeJS.Timeout } | null = null;
  /** A spare being made (its folder, then its runner), and for which spec. */
  private pending: { key: string; made: Promise<SanitizedRunner | null> } | null = null;
  /** Bumped by take, clear and dispose: a spare made for an older generation is not kept. */
  private generation = 0;
  private closed = false;
  /** Runs under a tool, and other work that needs the device, going on now: no spare starts meanwhile. */
  private busy = 0;
  /** How many runs took a spare (the bench and the tests read it). */
  taken = 0;

  constructor(private readonly idleMs = SANITIZED_SPARE_IDLE_MS) {}

  /**
   * The spare, if it was started with `spec`, still lives and opened its context (one still being made is waited
   * for); any other spare is stopped, and gone, before this answers: two tools are never on the device at once.
   */
  private async take(spec: SanitizedRunnerSpec): Promise<SanitizedRunner | null> {
    const key = sanitizedRunnerKey(spec);
    const pending = this.pending;
    if (!this.spare && pending?.key === key) await pending.made;
    const held = this.detach();
    if (!held) return null;
    const status = held.pool.status().runners[0];
    // A runner that is ready but could not open its context (the device was full then) would only repeat that error.
    const failed = status !== undefined && status.startupMs !== null && !status.contextReady;
    if (held.key === key && held.alive && !failed) {
      this.taken++;
      return held;
    }
    await held.dispose();
    return null;
  }

  /**
   * A run under the tool: `work` gets the spare for `spec` (or null, and starts its own runner); no spare starts while
   * it runs; once it is over, a spare for `spec` starts if `refillAfter` says so of its answer.
   */
  async during<T>(spec: SanitizedRunnerSpec, work: (spare: SanitizedRunner | null) => Promise<T>, refillAfter: (value: T) => boolean): Promise<T> {
    this.busy++;
    let value: { is: T } | null = null;
    try {
      value = { is: await work(await this.take(spec)) };
      return value.is;
    } finally {
      this.busy--;
      if (value && refillAfter(value.is)) this.refill(spec);
    }
  }

  /** Other work that needs the device (Check everything, a program under a tool or diagnosed): no spare beside it. */
  async without<T>(work: () => Promise<T>): Promise<T> {
    this.busy++;
    try {
      await this.clear();
      return await work();
    } finally {
      this.busy--;
    }
  }

  /** Starts a spare for `spec` in the background, unless one is held or being made, or a run under a tool is on. */
  refill(spec: SanitizedRunnerSpec): void {
    if (this.closed || this.spare || this.pending || this.busy > 0) return;
    const generation = this.generation;
    const wanted = () => !this.closed && !this.spare && generation === this.generation;
    const made = SanitizedRunner.start(spec).then(
      async (runner) => {
        // Its folder is made, no process yet: one no longer wanted is not started at all.
        if (!wanted()) {
          await runner.dispose();
          return null;
        }
        runner.startAhead(spec);
        const timer = setTimeout(() => void this.clear(), this.idleMs);
        timer.unref();
        this.spare = { runner, timer };
        return runner;
      },
      () => null,
    );
    const entry = { key: sanitizedRunnerKey(spec), made };
    this.pending = entry;
    void made.finally(() => {
      if (this.pending === entry) this.pending = null;
    });
  }

  /** Takes the spare out (its idle timer stopped); a spare still being made is not kept when it comes. */
  private detach(): SanitizedRunner | null {
    this.generation++;
    const held = this.spare;
    this.spare = null;
    if (held) clearTimeout(held.timer);
    return held?.runner ?? null;
  }

  /** Stops the spare, and one being made, and waits for both to be gone. */
  async clear(): Promise<void> {
    const pending = this.pending?.made;
    const held = this.detach();
    await held?.dispose();
    const late = await pending;
    // Made before the generation changed and so kept: stopped too.
    if (late && this.spare?.runner === late) await this.detach()?.dispose();
  }

  /** No more spares: the host is stopping. */
  async dispose(): Promise<void> {
    this.closed = true;
    await this.clear();
  }

  /** For the tests and the bench: the held spare's runner as its pool sees it (pid: the tool's), or null. */
  spareStatus(): RunnerPoolStatus['runners'][number] | null {
    return this.spare?.runner.pool.status().runners[0] ?? null;
  }
}

/** `work`, with no spare under a tool beside it (and none starting while it runs); as it is where a host keeps none. */
export const withoutSpare = <T>(spares: SanitizerSpares | null, work: () => Promise<T>): Promise<T> => (spares ? spares.without(work) : work());
