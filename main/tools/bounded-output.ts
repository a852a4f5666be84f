import { thousands } from '../../core/format';

/**
 * A child's output, kept within a bound: the first `headBytes` and the last `tailBytes`, with a count of
 * what fell between. A program that prints 100 MB costs the host this much memory, not 100 MB.
 */
export class BoundedOutput {
  private readonly head: Buffer[] = [];
  private headSize = 0;
  private tail: Buffer[] = [];
  private tailSize = 0;
  private total = 0;

  constructor(
    private readonly headBytes = 2 * 2 ** 20,
    private readonly tailBytes = 2 * 2 ** 20,
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headSize < this.headBytes) {
      const take = chunk.subarray(0, this.headBytes - this.headSize);
      this.head.push(take);
      this.headSize += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (!chunk.length) return;
    this.tail.push(chunk);
    this.tailSize += chunk.length;
    while (this.tailSize - (this.tail[0]?.length ?? 0) >= this.tailBytes) this.tailSize -= this.tail.shift()!.length;
  }

  get droppedBytes(): number {
    return Math.max(0, this.total - this.headSize - Math.min(this.tailSize, this.tailBytes));
  }

  /** The kept text, with a line where bytes were dropped. */
  text(): string {
    const tail = Buffer.concat(this.tail);
    const kept = tail.subarray(Math.max(0, tail.length - this.tailBytes));
    const dropped = this.droppedBytes;
    const head = Buffer.concat(this.head).toString('utf8');
    if (!dropped) return head + kept.toString('utf8');
    // Cut the tail at a line start, so no half line is read as a whole one.
    const text = kept.toString('utf8');
    const from = text.indexOf('\n');
    return `${head}\n[… ${thousands(dropped)} bytes of output not kept …]\n${from >= 0 ? text.slice(from + 1) : text}`;
  }
}
