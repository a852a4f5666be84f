/**
 * The file reader's protocol, declared once: what the host asks a reader process to read, and how the answer travels.
 * A reader process reads one file from outside (a bundle, a snapshot, a sanitizer report, a result, a diagnosis) under
 * its own heap, memory and time limits, so a file that makes V8 abort costs that process, never the host.
 *
 * On its standard output a reader writes frames: a 4-byte little-endian length, a 1-byte type, the payload.
 * Progress frames (JSON) may come first; a body frame (raw columns) may precede the answer; the answer frame (JSON)
 * is last. An answer whose value holds typed arrays (a timeline's columns) carries them as bytes: the value's JSON with
 * null in their places, `typed` naming each place, and their bytes in the body frame (core/api/typed-wire.ts).
 */
import type { TypedRef } from '../api/typed-wire';
import type { RedactionFacts } from '../bundle/redact';
import type { SanitizerTool } from '../sanitizer/findings';

export type ReaderJob =
  | { kind: 'diagnosis'; path: string; maxBytes: number }
  | { kind: 'snapshot-model'; path: string; maxBytes: number }
  | { kind: 'memory-timelines'; path: string; maxBytes: number }
  | { kind: 'bundle-view'; path: string }
  /** A saved report: its XML, the text the tool printed with it, or that text alone (xmlPath null). */
  | { kind: 'sanitizer-report'; xmlPath: string | null; textPath: string | null; tool: SanitizerTool | null }
  /** The XML reports compute-sanitizer saved in a run's folder (report-<pid>.xml). */
  | { kind: 'sanitizer-reports'; dir: string; tool: SanitizerTool }
  | { kind: 'run-outcome'; path: string }
  /** The raw and source pages ncu exported from a profile's report: the kernel's counters, its lines in `sourceFile`. */
  | { kind: 'ncu-pages'; rawPath: string; sourcePath: string; sourceFile: string; entry: string }
  /** The pages of a program's report: the raw page (a row per profiled launch) and one source page per launch. */
  | { kind: 'ncu-program-pages'; rawPath: string; sourcePaths: string[] }
  /** A profile saved by `gpu-workbench profile --save` (or exported from the app). */
  | { kind: 'profile'; path: string; maxBytes: number }
  /** A PyTorch snapshot copied with its strings redacted (its stack frames' paths), for a redacted bundle. */
  | { kind: 'redacted-snapshot'; path: string; maxBytes: number; facts: RedactionFacts };

export type ReaderJobKind = ReaderJob['kind'];

/** Set for a reader started without `ulimit` (a utility process): it caps its own writable memory before it reads. */
export const READER_MEMORY_ENV = 'GPU_WORKBENCH_READER_MEMORY_MB';
/** After the job: the reader waits to be told to go (its standard input closing, or a message in the desktop app). */
export const READER_WAIT_ARG = '--wait';

/** A refusal's kind: the file's fault (refused, not-*), or the reader's limits (too-large, out-of-memory, timed-out). */
export type ReaderRefusal = { ok: false; kind: string; message: string };
export type ReaderAnswer = { ok: true; value: unknown; typed?: TypedRef[] } | ReaderRefusal;

export const FRAME = { progress: 1, body: 2, answer: 3 } as const;
export type FrameType = (typeof FRAME)[keyof typeof FRAME];
export const FRAME_HEADER_BYTES = 5;

/** One frame's bytes: the length counts the type byte and the payload. */
export function frameBytes(type: FrameType, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER_BYTES + payload.byteLength);
  new DataView(out.buffer).setUint32(0, payload.byteLength + 1, true);
  out[4] = type;
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

export class FrameError extends Error {
  override readonly name = 'FrameError';
}

/**
 * Splits a reader's output into frames as chunks arrive, never holding more than `maxBytes` in all: a reader that
 * writes more (or a frame that claims more) is refused before its bytes are kept.
 */
export class FrameReader {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onFrame: (type: number, payload: Uint8Array) => void,
  ) {}

  push(chunk: Uint8Array): void {
    this.total += chunk.byteLength;
    if (this.total > this.maxBytes) throw new FrameError(`its answer is larger than ${Math.round(this.maxBytes / 2 ** 20)} MiB`);
    this.chunks.push(chunk);
    this.buffered += chunk.byteLength;
    for (;;) {
      if (this.buffered < FRAME_HEADER_BYTES) return;
      const head = this.take(FRAME_HEADER_BYTES, false);
      const length = new DataView(head.buffer, head.byteOffset, 4).getUint32(0, true);
      if (length < 1) throw new FrameError('a frame is empty');
      if (this.buffered < 4 + length) return;
      const frame = this.take(4 + length, true);
      this.onFrame(frame[4]!, frame.subarray(FRAME_HEADER_BYTES));
    }
  }

  /** Whether bytes of an unfinished frame are left: the reader stopped in the middle of one. */
  get partial(): boolean {
    return this.buffered > 0;
  }

  private take(n: number, consume: boolean): Uint8Array {
    const out = new Uint8Array(n);
    let at = 0;
    let i = 0;
    while (at < n) {
      const c = this.chunks[i++]!;
      const part = c.subarray(0, Math.min(c.byteLength, n - at));
      out.set(part, at);
      at += part.byteLength;
    }
    if (consume) {
      let left = n;
      while (left > 0) {
        const c = this.chunks[0]!;
        if (c.byteLength <= left) {
          left -= c.byteLength;
          this.chunks.shift();
        } else {
          this.chunks[0] = c.subarray(left);
          left = 0;
        }
      }
      this.buffered -= n;
    }
    return out;
  }
}
