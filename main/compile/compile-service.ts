import { z } from 'zod';

import type { CompileResult } from '../../core/compile/compile-result';
import { distEntry } from '../paths';
import type { ProcessLauncher } from '../process/launcher';
import { ProcessExitError, SupervisedProcess, type ReplyShape } from '../process/supervised-process';
import { CompileCache } from './compile-cache';
import type { CompileOutput, CompileRequestInput, CompileWorkerStatus } from './compile-protocol';

const replySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), status: z.unknown() }),
  z.object({ type: z.literal('ok'), id: z.number(), result: z.unknown() }),
  z.object({
    type: z.literal('error'),
    id: z.number().nullable(),
    sticky: z.boolean(),
    error: z.object({ library: z.string(), api: z.string(), code: z.number(), name: z.string(), message: z.string() }),
  }),
]);

export type CompiledResult = CompileResult & { image: Uint8Array | null };

/** The compile was stopped (cancelled, or its worker killed); `reason` says why in words. */
export class CompileStoppedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'CompileStoppedError';
  }
}

/**
 * Compiles in a worker process, through an on-disk cache. A worker that crashes, hangs past the time
 * limit or is cancelled is killed and replaced by the next compile.
 */
export class CompileService {
  private worker: SupervisedProcess<CompileWorkerStatus> | null = null;
  /** Compiles under way, at any stage (waiting for a worker, in the cache, in the compiler). */
  private readonly inflight = new Set<{ cancelled: boolean }>();

  constructor(
    private readonly launcher: ProcessLauncher,
    readonly cache: CompileCache | null = new CompileCache(),
  ) {}

  private current(): SupervisedProcess<CompileWorkerStatus> {
    if (!this.worker || !this.worker.alive) {
      this.worker = new SupervisedProcess<CompileWorkerStatus>({
        launcher: this.launcher,
        entry: distEntry('compile-worker.js'),
        args: [],
        name: 'compile worker',
        parseReply: (m) => {
          const parsed = replySchema.safeParse(m);
          return parsed.success ? (parsed.data as ReplyShape) : null;
        },
        readyTimeoutMs: 30_000,
      });
    }
    return this.worker;
  }

  /** The worker's process id, while one runs (for the supervisor's tests). */
  get workerPid(): number | undefined {
    return this.worker?.alive ? this.worker.pid : undefined;
  }

  status(): Promise<CompileWorkerStatus> {
    return this.current().ready;
  }

  async compile(request: CompileRequestInput, timeoutMs = 120_000): Promise<CompiledResult> {
    const token = { cancelled: false };
    this.inflight.add(token);
    try {
      return await this.compileOnce(request, timeoutMs, token);
    } finally {
      this.inflight.delete(token);
    }
  }

  private async compileOnce(request: CompileRequestInput, timeoutMs: number, token: { cancelled: boolean }): Promise<CompiledResult> {
    const started = performance.now();
    const stopIfCancelled = () => {
      if (token.cancelled) throw new CompileStoppedError('The compile was cancelled.');
    };
    const worker = this.current();
    const status = await worker.ready;
    stopIfCancelled();
    const backend = request.backend === 'nvcc' || (request.backend !== 'nvrtc' && !status.backends.includes('nvrtc')) ? 'nvcc' : 'nvrtc';
    const key = CompileCache.key({
      source: request.source,
      sourceName: request.sourceName,
      options: request.options,
      backend,
      compilerVersion: backend === 'nvrtc' ? `nvrtc ${status.nvrtcVersion}` : `nvcc ${status.nvccVersion}`,
    });
    const hit = await this.cache?.get(key);
    stopIfCancelled();
    if (hit) return { ...hit.result, image: hit.image, cached: true, key, ms: performance.now() - started };
    let output: CompileOutput;
    try {
      output = await worker.request<CompileOutput>({ type: 'compile', ...request }, timeoutMs);
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
    const { image, ...rest } = output;
    // Failed compiles are cached too: the same source gives the same errors, instantly. The write is
    // off the edit-to-markers path; a hit that races it just compiles once more.
    void this.cache?.put(key, { result: rest, image }).catch(() => undefined);
    return { ...rest, image, cached: false, key };
  }

  /** SASS for a compiled image (from its cache key), or null where no disassembler is installed. */
  async disassemble(key: string): Promise<string | null> {
    const entry = await this.cache?.get(key);
    return entry?.image ? this.disassembleImage(entry.image) : null;
  }

  async disassembleImage(image: Uint8Array): Promise<string | null> {
    const worker = this.current();
    await worker.ready;
    return worker.request<string | null>({ type: 'disassemble', image }, 60_000);
  }

  /** Stops every compile under way; the next compile starts a fresh worker. */
  cancel(): boolean {
    if (this.inflight.size === 0) return false;
    for (const token of this.inflight) token.cancelled = true;
    if (this.worker?.alive && this.worker.busy) this.worker.kill('SIGKILL');
    return true;
  }

  async dispose(): Promise<void> {
    await this.worker?.stop();
  }
}
