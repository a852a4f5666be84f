/**
 * The GPU's slots for `check`: a plain run or a run under one tool takes one, a profile takes them all (Nsight
 * Compute's counters must see the profiled kernel alone on the device). First come, first served: a profile waiting
 * for every slot holds back the runs that asked after it, so it is never starved.
 */
export class Slots {
  private free: number;
  private readonly queue: { weight: number; grant: () => void }[] = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`slots: ${size} is not a whole number of at least 1`);
    this.free = size;
  }

  /** Slots taken now (for tests and progress). */
  get inUse(): number {
    return this.size - this.free;
  }

  /** Runs `work` once `weight` slots are free (all of them: `size`), and gives them back however it ends. */
  async with<T>(weight: number, work: () => Promise<T>): Promise<T> {
    const w = Math.min(Math.max(1, weight), this.size);
    await new Promise<void>((grant) => {
      this.queue.push({ weight: w, grant });
      this.pump();
    });
    try {
      return await work();
    } finally {
      this.free += w;
      this.pump();
    }
  }

  /** Every slot: the GPU to itself. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.with(this.size, work);
  }

  private pump(): void {
    while (this.queue.length && this.queue[0]!.weight <= this.free) {
      const next = this.queue.shift()!;
      this.free -= next.weight;
      next.grant();
    }
  }
}
