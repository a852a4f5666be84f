import { EventEmitter } from 'node:events';

import { classifyExit, type ChildRole, type ExitClassification } from '../../core/runner/protocol';
import type { CudaErrorInfo } from '../../core/runner/run-result';
import type { ChildHandle, ProcessLauncher } from './launcher';
import { childReplySchema, type ChildProtocol } from '../../core/process/child-reply';
import type { AbortLike } from '../../core/api/channels';

/** A request failed because the process behind it ended; `exit` says why, in words. */
export class ProcessExitError extends Error {
  constructor(readonly exit: ExitClassification) {
    super(exit.summary);
    this.name = 'ProcessExitError';
  }
}

/** The child answered with a structured failure (CUDA, NVRTC, bad input). */
export class ChildRequestError extends Error {
  constructor(
    readonly error: CudaErrorInfo,
    readonly sticky: boolean,
  ) {
    super(error.message);
    this.name = 'ChildRequestError';
  }
}

/** The code a child's refusal carries (WORKBENCH_NO_COMPILER, CUDA_ERROR_…), or the error's own name. */
export function errorCode(error: unknown): string | undefined {
  if (error instanceof ChildRequestError) return error.error.name;
  return error instanceof Error ? error.name : undefined;
}

/** How long a stopped child has between SIGTERM and SIGKILL. */
export const STOP_GRACE_MS = 300;

/** A request its caller cancelled while it still waited in the child's queue: the child goes on. */
export class RequestCancelledError extends Error {
  constructor() {
    super('The request was cancelled before the child started it.');
    this.name = 'RequestCancelledError';
  }
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | null;
}

export interface SupervisedOptions {
  launcher: ProcessLauncher;
  entry: string;
  args: string[];
  name: string;
  readyTimeoutMs: number;
  /** Which child this is, for the words its exit is told in. */
  role: ChildRole;
}

/**
 * Supervises one crash-prone child: typed request/reply with a watchdog per request, and a classified
 * exit (clean, crashed, watchdog, sticky CUDA error) that rejects whatever was pending.
 * Events: 'exit' (ExitClassification).
 */
export class SupervisedProcess<Status = unknown, Protocol extends ChildProtocol = ChildProtocol> extends EventEmitter {
  readonly ready: Promise<Status>;
  protected readonly child: ChildHandle;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private isReady = false;
  private exited: ExitClassification | null = null;
  private watchdogMs: number | null = null;
  private stickyError: CudaErrorInfo | null = null;
  private requested = false;
  private cancelled = false;
  private protocolError: string | null = null;

  constructor(private readonly options: SupervisedOptions) {
    super();
    this.child = options.launcher.launch(options.entry, options.args, options.name);
    let readyResolve!: (status: Status) => void;
    let readyReject!: (error: Error) => void;
    this.ready = new Promise<Status>((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    this.ready.catch(() => undefined);
    const readyTimer = setTimeout(() => this.killForWatchdog(options.readyTimeoutMs), options.readyTimeoutMs);
    this.child.onMessage((message) => {
      // What the child sends is checked against the one envelope; anything else kills it.
      const parsed = childReplySchema.safeParse(message);
      const reply = parsed.success ? parsed.data : null;
      if (!reply) {
        this.protocolError = 'it sent a message the host does not understand';
        this.child.kill('SIGKILL');
        return;
      }
      if (reply.type === 'ready') {
        clearTimeout(readyTimer);
        this.isReady = true;
        readyResolve(reply.status as Status);
        return;
      }
      if (reply.type === 'error' && reply.sticky) this.stickyError = reply.error;
      const id = reply.id ?? -1;
      const pending = this.pending.get(id);
      if (pending) {
        this.pending.delete(id);
        if (pending.timer) clearTimeout(pending.timer);
        if (reply.type === 'ok') pending.resolve(reply.result);
        else pending.reject(new ChildRequestError(reply.error, reply.sticky));
      }
      // A sticky error is the child's last word: it leaves. It is ended now that it has been read (SIGTERM: under a
      // tool, the channel is closed and the child leaves so that the tool writes its report), as a utility process
      // cannot tell when its last message was delivered (child-port.ts postAndExit).
      if (reply.type === 'error' && reply.sticky) this.child.kill('SIGTERM');
    });
    this.child.onExit((code, signal) => {
      clearTimeout(readyTimer);
      let exit = classifyExit({
        code,
        signal,
        watchdogMs: this.watchdogMs,
        stickyError: this.stickyError,
        requested: this.requested,
        cancelled: this.cancelled,
        beforeReady: !this.isReady,
        role: options.role,
      });
      if (this.protocolError) exit = { kind: 'crashed', summary: `The ${options.name} was stopped because ${this.protocolError}.` };
      this.exited = exit;
      const error = new ProcessExitError(exit);
      readyReject(error);
      for (const [, p] of this.pending) {
        if (p.timer) clearTimeout(p.timer);
        p.reject(error);
      }
      this.pending.clear();
      this.emit('exit', exit);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
  get alive(): boolean {
    return this.exited === null;
  }
  get busy(): boolean {
    return this.pending.size > 0;
  }
  get exitClassification(): ExitClassification | null {
    return this.exited;
  }

  /**
   * Sends a request of the child's protocol and resolves with its typed result; rejects with
   * ProcessExitError if the child dies or overruns `timeoutMs` (0: no limit), ChildRequestError if it refuses.
   */
  request<K extends keyof Protocol & string>(type: K, body: Protocol[K]['request'], timeoutMs: number, signal?: AbortLike): Promise<Protocol[K]['result']> {
    const id = this.nextId;
    const reply = this.post({ ...body, type }, timeoutMs) as Promise<Protocol[K]['result']>;
    signal?.addEventListener('abort', () => this.cancelRequest(id), { once: true });
    if (signal?.aborted) this.cancelRequest(id);
    return reply;
  }

  /**
   * Cancels one request. The one the child is working on (the oldest) can only be stopped with the child
   * (a hung kernel answers nothing else); one still waiting behind it is dropped from the child's queue,
   * and the others go on.
   */
  cancelRequest(id: number): void {
    const pending = this.pending.get(id);
    if (!pending || this.exited) return;
    if (this.pending.keys().next().value === id) {
      this.cancel();
      return;
    }
    if (pending.timer) clearTimeout(pending.timer);
    this.pending.delete(id);
    pending.reject(new RequestCancelledError());
    this.child.send({ type: 'drop', target: id, id: this.nextId++ });
  }

  /**
   * Sends a request body under a fresh id and waits for its reply (or the watchdog). Protected: callers use the typed
   * request(); the tests' subclass (test/helpers/test-runner.ts) sends what no protocol has through it.
   */
  protected post(body: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    if (this.exited) return Promise.reject(new ProcessExitError(this.exited));
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      const timer = timeoutMs > 0 ? setTimeout(() => this.killForWatchdog(timeoutMs), timeoutMs) : null;
      this.pending.set(id, { resolve, reject, timer });
      this.child.send({ ...body, id });
    });
  }

  /**
   * Stops the child and its process group: SIGTERM, a short grace, then SIGKILL. Resolves once it exited.
   * Children handle no SIGTERM in JavaScript, so a child blocked in a native call ends at once too.
   */
  stop(graceMs = STOP_GRACE_MS): Promise<void> {
    if (this.exited) return Promise.resolve();
    this.requested = true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      this.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.child.kill('SIGTERM');
    });
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.child.kill(signal);
  }

  /** Kills the child (and its group) because its caller cancelled what it was doing. */
  cancel(): void {
    if (this.exited) return;
    this.cancelled = true;
    this.child.kill('SIGKILL');
  }

  private killForWatchdog(ms: number): void {
    if (this.exited) return;
    this.watchdogMs = ms;
    this.child.kill('SIGKILL');
  }
}
