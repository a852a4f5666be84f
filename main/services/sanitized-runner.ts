import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { sanitizerArguments, type SanitizerOptions } from '../../core/sanitizer/sanitizer-args';
import { sanitizerLauncher } from '../process/sanitizer-launcher';
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

  /** Makes its private folder and pool; `ahead` starts the runner now (a spare), else the run starts it. */
  static async start(spec: SanitizedRunnerSpec, ahead: boolean): Promise<SanitizedRunner> {
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
    if (ahead) {
      pool.prestart(spec.ordinal);
      self.reportsReader(spec.options.tool);
    }
    return self;
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
    if (this.earlyBytes + chunk.length > EARLY_OUTPUT_BYTES) return;
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
 * after SANITIZED_SPARE_IDLE_MS unused, when the host stops, before Check everything or a program runs under a tool,
 * and when a run under another tool, options or device comes.
 */
export class SanitizerSpares {
  private spare: { runner: SanitizedRunner; timer: NodeJS.Timeout } | null = null;
  private starting = false;
  private closed = false;
  /** How many runs took a spare (the bench and the tests read it). */
  taken = 0;

  constructor(private readonly idleMs = SANITIZED_SPARE_IDLE_MS) {}

  /** The spare, if it was started with `spec` and still lives; any other spare is stopped. */
  take(spec: SanitizedRunnerSpec): SanitizedRunner | null {
    const held = this.spare;
    if (!held) return null;
    this.spare = null;
    clearTimeout(held.timer);
    if (held.runner.key === sanitizedRunnerKey(spec) && held.runner.alive) {
      this.taken++;
      return held.runner;
    }
    void held.runner.dispose();
    return null;
  }

  /** Starts a spare for `spec` in the background, unless one is held or starting. */
  refill(spec: SanitizedRunnerSpec): void {
    if (this.closed || this.spare || this.starting) return;
    this.starting = true;
    void SanitizedRunner.start(spec, true).then(
      (runner) => {
        this.starting = false;
        if (this.closed || this.spare) return void runner.dispose();
        const timer = setTimeout(() => void this.clear(), this.idleMs);
        timer.unref();
        this.spare = { runner, timer };
      },
      () => (this.starting = false),
    );
  }

  /** Stops the spare, if any, and waits for it to be gone. */
  async clear(): Promise<void> {
    const held = this.spare;
    this.spare = null;
    if (!held) return;
    clearTimeout(held.timer);
    await held.runner.dispose();
  }

  /** No more spares: the host is stopping. */
  async dispose(): Promise<void> {
    this.closed = true;
    await this.clear();
  }

  /** For the tests: the pid of the spare's process (the tool's, which runs the runner), when one is held. */
  sparePid(): number | null {
    return this.spare?.runner.pool.status().runners[0]?.pid ?? null;
  }

  /** For the bench: a spare is held and its context is open. */
  spareReady(): boolean {
    return this.spare?.runner.pool.status().runners[0]?.contextReady === true;
  }
}
