import { availableParallelism } from 'node:os';

import type { AbortLike } from '../../core/api/channels';
import type { CompileResult } from '../../core/compile/compile-result';
import { distEntry } from '../paths';
import type { ProcessLauncher } from '../process/launcher';
import { ProcessExitError, SupervisedProcess } from '../process/supervised-process';
import { CompileCache } from './compile-cache';
import type { CompileOutput, CompileRequestInput, CompileWorkerProtocol, CompileWorkerStatus } from '../../core/compile/worker-protocol';

export type CompiledResult = CompileResult & { image: Uint8Array | null };

/** The compile was stopped (cancelled, or its worker killed); `reason` says why in words. */
export class CompileStoppedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'CompileStoppedError';
  }
}

type Worker = SupervisedProcess<CompileWorkerStatus, CompileWorkerProtocol>;

/** The cache key of a request, with the compiler the worker would use for it. */
function cacheKey(request: CompileRequestInput, status: CompileWorkerStatus): string {
  const backend = request.backend === 'nvcc' || (request.backend !== 'nvrtc' && !status.backends.includes('nvrtc')) ? 'nvcc' : 'nvrtc';
  return CompileCache.key({
    source: request.source,
    sourceName: request.sourceName,
    options: request.options,
    backend,
    compilerVersion: backend === 'nvrtc' ? `nvrtc ${status.nvrtcVersion}` : `nvcc ${status.nvccVersion}`,
  });
}

/** A compile under way, from its call to its result. */
interface CompileTicket {
  cancelled: boolean;
  /** Why it stopped early, in words. */
  reason: string;
  document: string | null;
  worker: Worker | null;
}

/** Workers compiling at once, at most: each runs one compiler, and compilers use a core each. */
// Two at least: a compile of one document that hangs must not hold up another's.
export const MAX_CONCURRENT_COMPILES = Math.max(2, Math.min(4, availableParallelism() - 1));
/** How long a superseded compile may finish before its worker is killed. */
export const SUPERSEDE_GRACE_MS = 150;

/**
 * Compiles in worker processes, through an on-disk cache. A bounded number compile at once and a warm
 * spare stands ready, so a compile that hangs never delays the next edit: a newer compile of the same
 * document supersedes the older (its worker killed after a short grace), and the spare takes its place.
 * A worker that crashes, hangs past the time limit or is cancelled is killed and replaced.
 */
export class CompileService {
  private readonly idle: Worker[] = [];
  private readonly busy = new Set<Worker>();
  private readonly waiting: { ticket: CompileTicket; take: (w: Worker | null) => void }[] = [];
  /** Compiles under way, at any stage (waiting for a worker, in the cache, in the compiler). */
  private readonly inflight = new Set<CompileTicket>();
  private readonly latestByDocument = new Map<string, CompileTicket>();
  private disposed = false;

  constructor(
    private readonly launcher: ProcessLauncher,
    readonly cache: CompileCache | null = new CompileCache(),
    private readonly maxConcurrent = MAX_CONCURRENT_COMPILES,
  ) {}

  private startWorker(): Worker {
    const worker: Worker = new SupervisedProcess<CompileWorkerStatus, CompileWorkerProtocol>({
      launcher: this.launcher,
      entry: distEntry('compile-worker.js'),
      args: [],
      name: 'compile worker',
      role: 'compile worker',
      readyTimeoutMs: 30_000,
    });
    worker.on('exit', () => {
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      this.busy.delete(worker);
      this.keepSpare();
      this.serveWaiting();
    });
    return worker;
  }

  /** One idle worker always ready, so the next compile does not wait for a process to start. */
  private keepSpare(): void {
    if (!this.disposed && !this.idle.some((w) => w.alive)) this.idle.push(this.startWorker());
  }

  /** A worker for one compile while fewer than the bound compile: an idle one, or a new one; else wait in line. */
  private acquire(ticket: CompileTicket): Promise<Worker | null> {
    if (this.busy.size < this.maxConcurrent) return Promise.resolve(this.lend());
    return new Promise((take) => this.waiting.push({ ticket, take }));
  }

  /**
   * Marks a worker busy (the idle one used last, else a new one) and keeps a spare beside it. The last used
   * is the warm one: it remembers the ptxas facts of the PTX it compiled, which a comment-only edit needs.
   */
  private lend(): Worker {
    const ready = [...this.idle].reverse().find((w) => w.alive);
    if (ready) this.idle.splice(this.idle.indexOf(ready), 1);
    const worker = ready ?? this.startWorker();
    this.busy.add(worker);
    this.keepSpare();
    return worker;
  }

  /** Gives freed capacity to the compiles waiting in line. */
  private serveWaiting(): void {
    while (this.waiting.length && this.busy.size < this.maxConcurrent && !this.disposed) this.waiting.shift()!.take(this.lend());
  }

  private release(worker: Worker): void {
    this.busy.delete(worker);
    if (worker.alive) this.idle.push(worker);
    this.serveWaiting();
  }

  /** The worker's process id of a compile under way, or of the spare (for the supervisor's tests). */
  get workerPid(): number | undefined {
    return [...this.busy].find((w) => w.alive)?.pid ?? this.idle.find((w) => w.alive)?.pid;
  }

  /** Processes: compiling, and idle (the spare included). */
  get workers(): { busy: number; idle: number } {
    return { busy: this.busy.size, idle: this.idle.filter((w) => w.alive).length };
  }

  status(): Promise<CompileWorkerStatus> {
    const worker = this.idle.find((w) => w.alive) ?? [...this.busy].find((w) => w.alive);
    if (worker) return worker.ready;
    this.keepSpare();
    return this.idle[this.idle.length - 1]!.ready;
  }

  /**
   * Compiles a source. With a `document`, a newer compile of the same document supersedes this one: it
   * rejects with CompileStoppedError, at once if it was still waiting, after a short grace if running.
   */
  async compile(request: CompileRequestInput, timeoutMs = 120_000, document: string | null = null, signal?: AbortLike): Promise<CompiledResult> {
    const ticket: CompileTicket = { cancelled: false, reason: 'The compile was cancelled.', document, worker: null };
    signal?.addEventListener('abort', () => this.stop(ticket, 'The compile was cancelled.', 0), { once: true });
    if (signal?.aborted) throw new CompileStoppedError(ticket.reason);
    if (document !== null) {
      const older = this.latestByDocument.get(document);
      if (older) this.supersede(older);
      this.latestByDocument.set(document, ticket);
    }
    this.inflight.add(ticket);
    try {
      return await this.compileOnce(request, timeoutMs, ticket);
    } finally {
      this.inflight.delete(ticket);
      if (document !== null && this.latestByDocument.get(document) === ticket) this.latestByDocument.delete(document);
    }
  }

  private supersede(ticket: CompileTicket): void {
    this.stop(ticket, 'A newer edit of this document is being compiled instead.', SUPERSEDE_GRACE_MS);
  }

  /** Stops one compile: dropped from the line if it waits, its worker killed (after `graceMs`) if it runs. */
  private stop(ticket: CompileTicket, reason: string, graceMs: number): void {
    if (ticket.cancelled) return;
    ticket.cancelled = true;
    ticket.reason = reason;
    const queued = this.waiting.findIndex((w) => w.ticket === ticket);
    if (queued >= 0) {
      this.waiting.splice(queued, 1)[0]!.take(null);
      return;
    }
    const worker = ticket.worker;
    if (!worker) return;
    const kill = () => {
      if (ticket.worker === worker && worker.alive && worker.busy) worker.cancel();
    };
    if (graceMs > 0) setTimeout(kill, graceMs).unref();
    else kill();
  }

  private async compileOnce(request: CompileRequestInput, timeoutMs: number, ticket: CompileTicket): Promise<CompiledResult> {
    const started = performance.now();
    const stopIfCancelled = () => {
      if (ticket.cancelled) throw new CompileStoppedError(ticket.reason);
    };
    const worker = await this.acquire(ticket);
    stopIfCancelled();
    if (!worker) throw new CompileStoppedError(ticket.reason);
    ticket.worker = worker;
    try {
      const status = await worker.ready;
      stopIfCancelled();
      const key = cacheKey(request, status);
      const hit = await this.cache?.get(key);
      stopIfCancelled();
      if (hit) return { ...hit.result, image: hit.image, cached: true, key, ms: performance.now() - started };
      let output: CompileOutput;
      try {
        output = await worker.request('compile', request, timeoutMs);
      } catch (error) {
        if (error instanceof ProcessExitError) {
          stopIfCancelled();
          if (error.exit.kind === 'watchdog')
            throw new CompileStoppedError(
              `The compiler ran for more than ${Math.round(timeoutMs / 1000)} s and was stopped. Deep template recursion, huge unrolled loops or very large arrays of constants are the usual causes.`,
            );
          throw new CompileStoppedError(`The compiler crashed (${error.exit.summary}) The compile worker has been replaced; try again.`);
        }
        throw error;
      }
      stopIfCancelled();
      const { image, ...rest } = output;
      // Failed compiles are cached too: the same source gives the same errors, instantly. The write is
      // off the edit-to-markers path; a hit that races it just compiles once more.
      void this.cache?.put(key, { result: rest, image }).catch(() => undefined);
      return { ...rest, image, cached: false, key };
    } finally {
      ticket.worker = null;
      this.release(worker);
    }
  }

  /**
   * What the cache holds for a request, without compiling or waiting in line: a keystroke that makes a
   * source compiled before gets its markers at once. Null on a miss.
   */
  async cached(request: CompileRequestInput): Promise<CompiledResult | null> {
    const started = performance.now();
    const key = cacheKey(request, await this.status());
    const hit = await this.cache?.get(key);
    return hit ? { ...hit.result, image: hit.image, cached: true, key, ms: performance.now() - started } : null;
  }

  /** SASS for a compiled image (from its cache key), or null where no disassembler is installed. */
  async disassemble(key: string): Promise<string | null> {
    const entry = await this.cache?.get(key);
    return entry?.image ? this.disassembleImage(entry.image) : null;
  }

  async disassembleImage(image: Uint8Array): Promise<string | null> {
    const ticket: CompileTicket = { cancelled: false, reason: 'The disassembly was cancelled.', document: null, worker: null };
    const worker = await this.acquire(ticket);
    if (!worker) return null;
    try {
      await worker.ready;
      return await worker.request('disassemble', { image }, 60_000);
    } finally {
      this.release(worker);
    }
  }

  /** Stops every compile under way; their workers are killed, and the spare takes over. */
  cancel(): boolean {
    if (this.inflight.size === 0) return false;
    for (const ticket of this.inflight) this.stop(ticket, 'The compile was cancelled.', 0);
    return true;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const w of this.waiting.splice(0)) w.take(null);
    await Promise.all([...this.idle, ...this.busy].map((w) => w.stop()));
  }
}
