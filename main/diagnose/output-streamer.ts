/** Streamed at most this often: a program that floods its output costs the host and a browser one message per tick. */
export const OUTPUT_TICK_MS = 50;
/** A step streams at most this much; the rest is kept (bounded) in the report, not sent as it comes. */
export const MAX_STREAMED_BYTES = 16 * 2 ** 20;

type Emit = (text: string, stream: 'stdout' | 'stderr') => void;

/**
 * A program's output on its way to the screen: the first chunk after a quiet spell at once (a line appears as soon
 * as it is written), then what comes within a tick batched into one message, in order, stdout and stderr apart;
 * past MAX_STREAMED_BYTES it says so once and stops sending.
 */
export class OutputStreamer {
  private pending = '';
  private pendingStream: 'stdout' | 'stderr' = 'stdout';
  private lastFlush = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private sent = 0;
  private capped = false;

  constructor(private readonly emit: Emit) {}

  push(text: string, stream: 'stdout' | 'stderr'): void {
    if (this.capped) return;
    if (this.sent + this.pending.length + text.length > MAX_STREAMED_BYTES) {
      this.flush();
      this.capped = true;
      this.emit(
        `\n[gpu-workbench: the output passed ${MAX_STREAMED_BYTES / 2 ** 20} MiB; the rest is not shown as it comes. The report keeps its start and its end.]\n`,
        'stderr',
      );
      return;
    }
    if (this.pending && stream !== this.pendingStream) this.flush();
    this.pending += text;
    this.pendingStream = stream;
    if (performance.now() - this.lastFlush >= OUTPUT_TICK_MS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), OUTPUT_TICK_MS - (performance.now() - this.lastFlush));
  }

  /** Sends what is pending (at the end of a step, before it is said to have finished). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.lastFlush = performance.now();
    if (!this.pending) return;
    const text = this.pending;
    this.pending = '';
    this.sent += text.length;
    this.emit(text, this.pendingStream);
  }
}
