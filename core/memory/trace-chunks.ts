import { MinHeap } from './min-heap';

/**
 * Chrome Trace Event JSON written as a sequence of text chunks, so a caller can stream it to a file or a
 * Blob instead of holding one giant string: the header, the events comma-joined, the end. Counts the
 * events, and refuses past `maxChars` with the caller's error.
 */
export class TraceChunks {
  private buffer: string;
  private first = true;
  private written = 0;
  private readonly chunkChars: number;
  readonly stats: { events: number };

  constructor(
    otherData: Record<string, unknown>,
    private readonly options: { chunkChars?: number; stats?: { events: number }; maxChars?: number; tooLarge?: (maxChars: number) => Error } = {},
  ) {
    this.chunkChars = options.chunkChars ?? 1 << 16;
    this.stats = options.stats ?? { events: 0 };
    this.buffer = `{"displayTimeUnit":"ms","otherData":${JSON.stringify(otherData)},"traceEvents":[`;
  }

  /** Adds one event (its JSON text); yields a chunk when one is full. */
  *emit(event: string): Generator<string> {
    this.buffer += this.first ? event : `,${event}`;
    this.first = false;
    this.stats.events++;
    if (this.buffer.length >= this.chunkChars) yield this.take();
  }

  /** The last chunk, with the end of the JSON. */
  *end(): Generator<string> {
    this.buffer += ']}\n';
    yield this.take();
  }

  private take(): string {
    this.written += this.buffer.length;
    const { maxChars, tooLarge } = this.options;
    if (maxChars !== undefined && this.written > maxChars) throw tooLarge ? tooLarge(maxChars) : new RangeError(`the trace is over ${maxChars} characters`);
    const chunk = this.buffer;
    this.buffer = '';
    return chunk;
  }
}

/**
 * The lanes (trace threads) spans are laid out on, per track: a span goes on the track's lane that comes
 * free first if it is free by the span's start, else on a new lane, so overlapping spans never share one.
 */
export class TraceLanes<Track> {
  private readonly lanes = new Map<Track, MinHeap>();
  private nextTid = 1;

  /** The tid for a span from `start` to `stop` on `track`; `opened` is the new lane's 1-based number on its track, or null for a lane reused. */
  take(track: Track, start: number, stop: number): { tid: number; opened: number | null } {
    let heap = this.lanes.get(track);
    if (!heap) this.lanes.set(track, (heap = new MinHeap()));
    if (heap.size && heap.peekKey() <= start) {
      const tid = heap.pop();
      heap.push(stop, tid);
      return { tid, opened: null };
    }
    const tid = this.nextTid++;
    const opened = heap.size + 1;
    heap.push(stop, tid);
    return { tid, opened };
  }
}
