import { z } from 'zod';

import { distEntry } from '../paths';
import type { ProcessLauncher } from '../process/launcher';
import { SupervisedProcess, type ReplyShape } from '../process/supervised-process';
import type { CompileOutput, CompileRequest, CompileWorkerStatus } from './compile-protocol';

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

/** Runs compiles in a worker process; a worker that crashes or hangs is replaced on the next compile. */
export class CompileService {
  private worker: SupervisedProcess<CompileWorkerStatus> | null = null;

  constructor(private readonly launcher: ProcessLauncher) {}

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

  async status(): Promise<CompileWorkerStatus> {
    return this.current().ready;
  }

  async compile(request: Omit<CompileRequest, 'id'>, timeoutMs = 120_000): Promise<CompileOutput> {
    const worker = this.current();
    await worker.ready;
    return worker.request<CompileOutput>({ ...request }, timeoutMs);
  }

  async dispose(): Promise<void> {
    await this.worker?.stop();
  }
}
