import { spawn } from 'node:child_process';

import type { AbortLike } from '../../core/api/channels';
import { joinTyped, TypedWireError } from '../../core/api/typed-wire';
import { FRAME, FrameReader, READER_WAIT_ARG, type ReaderAnswer, type ReaderJob, type ReaderJobKind } from '../../core/readers/reader-protocol';
import { distEntry } from '../paths';
import { groupLeaderHandle } from '../process/launcher';
import { GROUP_REAPER } from '../process/sanitizer-launcher';

/** What one reader process may take: V8's heap, all its writable memory (ulimit -d), time, and its answer's size. */
export interface ReaderLimits {
  heapMb: number;
  memoryMb: number;
  timeoutMs: number;
  answerBytes: number;
}

const MiB = 2 ** 20;
/**
 * Limits by what is read: each fits the largest real file of its kind with room, and no more. A JSON answer is parsed by
 * the host, so it is kept to 256 MiB (the host stays well under 1.5 GiB whatever the file); a snapshot model's columns
 * are kept as they come.
 */
export const READER_LIMITS: Record<ReaderJobKind, ReaderLimits> = {
  diagnosis: { heapMb: 512, memoryMb: 1024, timeoutMs: 20_000, answerBytes: 64 * MiB },
  'snapshot-model': { heapMb: 4096, memoryMb: 6144, timeoutMs: 120_000, answerBytes: 512 * MiB },
  'memory-timelines': { heapMb: 4096, memoryMb: 6144, timeoutMs: 120_000, answerBytes: 256 * MiB },
  'bundle-view': { heapMb: 2048, memoryMb: 3072, timeoutMs: 60_000, answerBytes: 256 * MiB },
  'sanitizer-report': { heapMb: 2048, memoryMb: 3072, timeoutMs: 120_000, answerBytes: 256 * MiB },
  'sanitizer-reports': { heapMb: 2048, memoryMb: 3072, timeoutMs: 120_000, answerBytes: 256 * MiB },
  'run-outcome': { heapMb: 1024, memoryMb: 2048, timeoutMs: 30_000, answerBytes: 256 * MiB },
  'ncu-program-pages': { heapMb: 1024, memoryMb: 2048, timeoutMs: 120_000, answerBytes: 128 * MiB },
  'ncu-pages': { heapMb: 1024, memoryMb: 2048, timeoutMs: 60_000, answerBytes: 64 * MiB },
  profile: { heapMb: 512, memoryMb: 1024, timeoutMs: 20_000, answerBytes: 64 * MiB },
  // The snapshot and its copy, each at most a bundle's 256 MiB, outside the heap; the strings decoded one at a time.
  'redacted-snapshot': { heapMb: 512, memoryMb: 1536, timeoutMs: 60_000, answerBytes: 300 * MiB },
};

/** Readers at once: a fifth open waits for one of these to finish (each may take gigabytes). */
export const MAX_READERS = 2;

export class ReaderError extends Error {
  override readonly name = 'ReaderError';
  constructor(
    /** The reader's own kind of refusal ('refused', 'not-a-snapshot', …), or the host's: 'timed-out', 'out-of-memory', 'crashed', 'cancelled', 'too-large'. */
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ReaderOptions {
  signal?: AbortLike;
  onProgress?: (progress: unknown) => void;
  limits?: Partial<ReaderLimits>;
}

export interface ReaderResult<T> {
  value: T;
  /** The raw columns some answers carry beside their JSON (a snapshot model's); null when they were typed arrays, now in `value`. */
  body: Uint8Array | null;
}

/** A started reader: its output, a kill that ends it and all it started, and its end (once its output is read). */
export interface ReaderChild {
  stdout: NodeJS.ReadableStream;
  kill(): void;
  onClose(handler: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  onError(handler: (error: Error) => void): void;
  /** A reader started to wait (`waits`): it reads now. */
  go(): void;
}

/**
 * How a reader is started: a plain Node child here (serve, the CLI); a utility process in the desktop app. One that
 * `waits` is started before its file is complete (a tool still writing it) and reads when told to go.
 */
export type ReaderLauncher = (entry: string, job: string, limits: ReaderLimits, waits: boolean) => ReaderChild;

/**
 * A reader under /bin/sh: `ulimit -d` caps all its writable memory before Node starts, and it leads a process group
 * beside a reaper that reads the host's end of fd 3 (main/process/sanitizer-launcher.ts), so it dies with the host.
 */
export const defaultReaderLauncher: ReaderLauncher = (entry, job, limits, waits) => {
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      // `;`, not `&&`: the reaper's `&` would take `ulimit … && {reaper}` into the background, capping only the reaper.
      `ulimit -d ${limits.memoryMb * 1024} || exit 1; ${GROUP_REAPER}`,
      'gpu-workbench-reader',
      process.execPath,
      `--max-old-space-size=${limits.heapMb}`,
      '--stack-size=2048',
      entry,
      job,
      ...(waits ? [READER_WAIT_ARG] : []),
    ],
    // A waiting reader reads once its standard input closes.
    { stdio: [waits ? 'pipe' : 'ignore', 'pipe', 'ignore', 'pipe'], detached: true },
  );
  child.stdin?.on('error', () => undefined);
  const handle = groupLeaderHandle(child, child.stdio[3]);
  return {
    stdout: child.stdout!,
    kill: () => handle.kill('SIGKILL'),
    onClose: (handler) => child.once('close', handler),
    onError: (handler) => child.once('error', handler),
    go: () => child.stdin?.end(),
  };
};

let launcher: ReaderLauncher = defaultReaderLauncher;

/** The desktop app's entry sets its launcher once, before any file is opened. */
export function useReaderLauncher(next: ReaderLauncher): void {
  launcher = next;
}

let running = 0;
const waiting: (() => void)[] = [];

/** How long a reader killed after its answer may take to be gone before its slot is given to the next anyway. */
const GONE_WAIT_MS = 2000;

/** Frees a read slot once its reader is gone (it may hold gigabytes until then), or GONE_WAIT_MS after it was asked to end. */
function releaseWhenGone(gone: Promise<void> | null, release: () => void): void {
  if (!gone) return release();
  // Not unref'd: a read waiting for this slot is only a promise, which keeps no process alive.
  const late = setTimeout(release, GONE_WAIT_MS);
  void gone.then(() => {
    clearTimeout(late);
    release();
  });
}

async function slot(signal?: AbortLike): Promise<() => void> {
  while (running >= MAX_READERS) {
    if (signal?.aborted) throw new ReaderError('cancelled', 'The read was cancelled before it started.');
    await new Promise<void>((resolve) => {
      // A read cancelled while it waits leaves the line: a slot freed later goes to a read still waiting for one.
      const wake = () => {
        signal?.removeEventListener?.('abort', leave);
        resolve();
      };
      const leave = () => {
        const at = waiting.indexOf(wake);
        if (at >= 0) waiting.splice(at, 1);
        resolve();
      };
      waiting.push(wake);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }
  return taken();
}

/** A slot taken now (the caller saw one free). */
function taken(): () => void {
  running++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    running--;
    waiting.shift()?.();
  };
}

/** Why a reader ended without an answer, in words. */
function endedWithout(what: string, limits: ReaderLimits, code: number | null, signal: NodeJS.Signals | null): ReaderError {
  if (code === 133 || code === 134 || signal === 'SIGABRT' || signal === 'SIGTRAP')
    return new ReaderError(
      'out-of-memory',
      `${what} was not opened: reading it needed more than the reader's ${limits.heapMb} MB heap (or hit a limit of V8), so its reader stopped. The workbench is unaffected.`,
    );
  const how = signal ? `was killed (${signal})` : `exited with ${code}`;
  return new ReaderError('crashed', `${what} was not opened: its reader ${how} without an answer. The workbench is unaffected.`);
}

/**
 * A reader's answer, once it ends: its frames read within its limits. `begin` names what it reads, and starts its time
 * limit and its cancel; what it said before then (an early crash) is kept for when it is asked.
 */
function answerOf<T>(
  child: ReaderChild,
  what: string,
  limits: ReaderLimits,
): { answer: Promise<ReaderResult<T>>; begin(options: ReaderOptions): void; gone: Promise<void> } {
  let options: ReaderOptions = {};
  // The reader's end, however it came: the answer settles at its last frame, before the process (and its memory) is gone.
  let isGone: () => void = () => undefined;
  const gone = new Promise<void>((resolve) => (isGone = resolve));
  let begin: (asked: ReaderOptions) => void = () => undefined;
  const answer = new Promise<ReaderResult<T>>((resolve, reject) => {
    let failure: ReaderError | null = null;
    let said: ReaderAnswer | null = null;
    let body: Uint8Array | null = null;
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    const stop = (error: () => ReaderError) => {
      failure ??= error();
      child.kill();
    };
    const json = (payload: Uint8Array): unknown => {
      try {
        return JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'));
      } catch {
        stop(() => new ReaderError('crashed', `${what} was not opened: its reader's answer was not readable.`));
        return null;
      }
    };
    const frames = new FrameReader(limits.answerBytes, (type, payload) => {
      if (failure) return;
      if (type === FRAME.progress) options.onProgress?.(json(payload));
      else if (type === FRAME.body) body = payload;
      else if (type === FRAME.answer) {
        said = json(payload) as ReaderAnswer | null;
        // The answer is the reader's last frame: it is settled now, and the reader ended, not awaited. An Electron
        // utility process does not exit when its work is done (electron/electron#47228), and one that exits by
        // itself loses what its pipe still held (Electron drops its stdout's listeners at the exit).
        if (!failure) {
          settle(null, null);
          child.kill();
        }
      }
    });
    child.stdout.on('data', (chunk: Buffer) => {
      if (failure) return;
      try {
        frames.push(chunk);
      } catch (error) {
        stop(() => new ReaderError('too-large', `${what} was not opened: ${error instanceof Error ? error.message : String(error)}.`));
      }
    });
    begin = (asked) => {
      // A reader that already ended has said how; no time limit is left to keep.
      if (closed) return;
      options = asked;
      // The caller's limit where it has a shorter one (a diagnosis's budget): never longer than the job's own.
      const timeoutMs = Math.min(limits.timeoutMs, asked.limits?.timeoutMs ?? limits.timeoutMs);
      timer = setTimeout(
        () => stop(() => new ReaderError('timed-out', `${what} was not opened: reading it took longer than ${timeoutMs / 1000} s, so its reader was stopped.`)),
        timeoutMs,
      );
      const cancel = () => !closed && stop(() => new ReaderError('cancelled', `Reading ${what} was cancelled.`));
      if (asked.signal?.aborted) cancel();
      asked.signal?.addEventListener('abort', cancel, { once: true });
    };
    child.onError((error) => stop(() => new ReaderError('crashed', `${what} could not be read: its reader could not start (${error.message}).`)));
    const settle = (code: number | null, signal: NodeJS.Signals | null) => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      if (failure) return reject(failure);
      const a = said as ReaderAnswer | null;
      if (!a || frames.partial) return reject(endedWithout(what, limits, code, signal));
      if (!a.ok) return reject(new ReaderError(a.kind, a.message));
      if (a.typed === undefined) return resolve({ value: a.value as T, body });
      try {
        resolve({ value: joinTyped(a.value, a.typed, body ?? new Uint8Array()) as T, body: null });
      } catch (error) {
        if (!(error instanceof TypedWireError)) throw error;
        reject(new ReaderError('crashed', `${what} was not opened: its reader's answer is not valid (${error.message}).`));
      }
    };
    child.onClose((code, signal) => {
      isGone();
      settle(code, signal);
    });
  });
  return { answer, begin: (asked) => begin(asked), gone };
}

/**
 * Reads one file from outside in a reader process of its own (dist/main/file-reader.js): its heap limited by V8, all
 * its writable memory by RLIMIT_DATA, its time by a SIGKILL, its answer by a byte count. It dies with the host even
 * when the host is SIGKILLed, and a cancel kills it at once. A reader that aborts, is killed or answers too much is a ReaderError in words; the host goes on.
 */
export async function runReader<T>(job: ReaderJob, what: string, options: ReaderOptions = {}): Promise<ReaderResult<T>> {
  const limits = { ...READER_LIMITS[job.kind], ...options.limits };
  const release = await slot(options.signal);
  let gone: Promise<void> | null = null;
  try {
    if (options.signal?.aborted) throw new ReaderError('cancelled', `Reading ${what} was cancelled.`);
    const read = answerOf<T>(launcher(distEntry('file-reader.js'), JSON.stringify(job), limits, false), what, limits);
    gone = read.gone;
    read.begin(options);
    return await read.answer;
  } finally {
    releaseWhenGone(gone, release);
  }
}

/** A reader started before its files are whole: `read` lets it read them now; `dispose` ends it unread. */
export interface WaitingReader {
  read<T>(options?: ReaderOptions): Promise<ReaderResult<T>>;
  dispose(): void;
}

/** Readers started early at once, beside the read slots: each idles until its tool ends, and then reads a tool's report. */
export const MAX_WAITING_READERS = 2;
let waitingReaders = 0;

/**
 * A reader for files a tool is still writing (compute-sanitizer's XML, while the program runs): its process starts now
 * and waits, so its start-up (a Node process, its bundle) is spent beside the tool instead of after it. Waiting, it
 * takes no read slot (a long tool run would hold it from files a person opens meanwhile), but at most
 * MAX_WAITING_READERS wait at once: past that, `read` starts one as runReader does. Reading, it takes a slot.
 */
export function startWaitingReader(job: ReaderJob, what: string): WaitingReader {
  const onDemand: WaitingReader = { read: (options) => runReader(job, what, options), dispose: () => undefined };
  if (waitingReaders >= MAX_WAITING_READERS) return onDemand;
  const limits = READER_LIMITS[job.kind];
  let child: ReaderChild;
  try {
    child = launcher(distEntry('file-reader.js'), JSON.stringify(job), limits, true);
  } catch {
    return onDemand;
  }
  waitingReaders++;
  let released = false;
  const release = () => {
    if (!released) waitingReaders--;
    released = true;
  };
  let used = false;
  // Its end is awaited from the start, so an early exit (a reader that could not start) is not lost before `read`.
  const ending = answerOf<unknown>(child, what, limits);
  // Its place among the waiting readers is free at its answer; the memory it may still hold is bounded by the read slot
  // it took to read, which is freed only once it is gone.
  ending.answer.catch(() => undefined).finally(release);
  return {
    // Reading, it holds a read slot as any reader does: at most MAX_READERS read at once.
    read: async <T>(options: ReaderOptions = {}) => {
      if (used) throw new Error('a waiting reader reads once');
      used = true;
      let freeSlot: () => void;
      try {
        freeSlot = await slot(options.signal);
      } catch (error) {
        child.kill();
        throw error;
      }
      try {
        ending.begin(options);
        child.go();
        return (await ending.answer) as ReaderResult<T>;
      } finally {
        releaseWhenGone(ending.gone, freeSlot);
      }
    },
    dispose: () => {
      if (used) return;
      used = true;
      child.kill();
      release();
    },
  };
}
