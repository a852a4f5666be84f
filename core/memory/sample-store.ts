/**
 * Where a monitoring session keeps its samples: typed columns in two rings (samples, and the processes
 * listed in them), so a million samples at 100 Hz (about 2.8 hours) cost tens of megabytes, not an object
 * per device and process. Past its bounds the oldest samples go, and `dropped` counts them.
 */
import { listingsByRow, type RowListing } from './row-listings';
import type { MemorySample, ProcessMemorySample } from './samples';

export interface SampleStoreLimits {
  /** Samples kept at most. */
  maxSamples: number;
  /** Process entries (one per process listed in a sample) kept at most. */
  maxProcessEntries: number;
}

export const DEFAULT_SAMPLE_LIMITS: SampleStoreLimits = { maxSamples: 1_000_000, maxProcessEntries: 4_000_000 };
const INITIAL_CAPACITY = 1024;
/** No processes: shared, so a sample that listed none costs no allocation. */
const NONE: ProcessMemorySample[] = [];

/** A ring of columns that grows by doubling up to its bound. Slot of logical position i: (head + i) % capacity. */
class Columns<T extends Float64Array | Uint32Array | Int32Array | Uint16Array> {
  capacity: number;
  head = 0;
  length = 0;
  columns: T[];

  constructor(
    private readonly make: (n: number) => T,
    count: number,
    private readonly width: number,
    readonly bound: number,
  ) {
    this.capacity = Math.min(INITIAL_CAPACITY, bound);
    this.columns = Array.from({ length: count }, () => make(this.capacity * width));
  }

  get full(): boolean {
    return this.length === this.bound;
  }

  slot(i: number): number {
    return (this.head + i) % this.capacity;
  }

  /** Room for one more at the end (growing if below the bound); false when at the bound and full. */
  reserve(): boolean {
    if (this.length < this.capacity) return true;
    if (this.capacity >= this.bound) return false;
    this.growTo(this.length + 1);
    return true;
  }

  /** Capacity for `n` entries (up to the bound), by doubling. */
  growTo(n: number): void {
    let next = this.capacity;
    while (next < n && next < this.bound) next = Math.min(next * 2, this.bound);
    if (next === this.capacity) return;
    // The ring unrolled: from the head to the end, then what wrapped to the start.
    const fromHead = Math.min(this.length, this.capacity - this.head);
    this.columns = this.columns.map((old) => {
      const grown = this.make(next * this.width);
      grown.set(old.subarray(this.head * this.width, (this.head + fromHead) * this.width), 0);
      if (this.length > fromHead) grown.set(old.subarray(0, (this.length - fromHead) * this.width), fromHead * this.width);
      return grown;
    });
    this.head = 0;
    this.capacity = next;
  }

  /** Appends `n` entries copied from `values` (n × width, in order) with at most two copies; room must be there. */
  appendFrom(values: T, n: number): void {
    const first = this.slot(this.length);
    const before = Math.min(n, this.capacity - first);
    const column = this.columns[0]!;
    column.set(values.subarray(0, before * this.width), first * this.width);
    if (n > before) column.set(values.subarray(before * this.width, n * this.width), 0);
    this.length += n;
  }

  /** The slot for a new entry at the end (after reserve() said yes). */
  append(): number {
    const s = this.slot(this.length);
    this.length++;
    return s;
  }

  dropFirst(n: number): void {
    this.head = (this.head + n) % this.capacity;
    this.length -= n;
  }

  bytes(): number {
    return this.columns.reduce((sum, c) => sum + c.byteLength, 0);
  }
}

export class SampleStore {
  /** time, and per device used, free, total. */
  private readonly samples: Columns<Float64Array>;
  /** Per sample: where its processes start (an absolute entry number) and how many (-1: none listed). */
  private readonly processStart: Columns<Float64Array>;
  private readonly processCount: Columns<Int32Array>;
  private readonly pids: Columns<Uint32Array>;
  private readonly processDevice: Columns<Uint16Array>;
  private readonly processUsed: Columns<Float64Array>;
  /** The absolute number of the oldest process entry kept. */
  private firstEntry = 0;
  private droppedSamples = 0;

  constructor(
    readonly deviceCount: number,
    limits: SampleStoreLimits = DEFAULT_SAMPLE_LIMITS,
  ) {
    if (!Number.isInteger(deviceCount) || deviceCount < 0 || deviceCount > 1024) throw new RangeError(`deviceCount ${deviceCount}`);
    if (!(Number.isInteger(limits.maxSamples) && limits.maxSamples >= 1 && Number.isInteger(limits.maxProcessEntries) && limits.maxProcessEntries >= 1))
      throw new RangeError('the store needs room for a sample and a process');
    this.samples = new Columns((n) => new Float64Array(n), 1, 1 + 3 * deviceCount, limits.maxSamples);
    this.processStart = new Columns((n) => new Float64Array(n), 1, 1, limits.maxSamples);
    this.processCount = new Columns((n) => new Int32Array(n), 1, 1, limits.maxSamples);
    this.pids = new Columns((n) => new Uint32Array(n), 1, 1, limits.maxProcessEntries);
    this.processDevice = new Columns((n) => new Uint16Array(n), 1, 1, limits.maxProcessEntries);
    this.processUsed = new Columns((n) => new Float64Array(n), 1, 1, limits.maxProcessEntries);
  }

  /** Samples kept. */
  get length(): number {
    return this.samples.length;
  }

  /** Samples left out because the store reached its bounds (the oldest first). */
  get dropped(): number {
    return this.droppedSamples;
  }

  /** What the columns hold now, in bytes. */
  bytes(): number {
    return [this.samples, this.processStart, this.processCount, this.pids, this.processDevice, this.processUsed].reduce((s, c) => s + c.bytes(), 0);
  }

  push(sample: MemorySample): void {
    if (sample.devices.length !== this.deviceCount) throw new RangeError(`a sample of ${sample.devices.length} devices in a store of ${this.deviceCount}`);
    const kept = this.makeRoomFor(sample.processes);
    while (!this.samples.reserve()) this.dropOldest();
    const s = this.samples.append();
    const width = 1 + 3 * this.deviceCount;
    const row = this.samples.columns[0]!;
    row[s * width] = sample.timeUs;
    sample.devices.forEach((d, j) => {
      row[s * width + 1 + 3 * j] = d.usedBytes;
      row[s * width + 2 + 3 * j] = d.freeBytes;
      row[s * width + 3 + 3 * j] = d.totalBytes;
    });
    this.appendProcesses(sample.processes, kept);
  }

  /**
   * `count` samples as rows in this store's layout (time, then per device used, free, total), with the
   * processes of those that listed them (in row order): copied in, with no object per sample.
   */
  appendRows(rows: Float64Array, count: number, listed: readonly RowListing[]): void {
    const width = 1 + 3 * this.deviceCount;
    if (rows.length !== count * width) throw new RangeError(`${rows.length} values for ${count} rows of ${width}`);
    // More rows than the bound: the newest are kept.
    const first = Math.max(0, count - this.samples.bound);
    const n = count - first;
    this.droppedSamples += first;
    while (this.samples.length + n > this.samples.bound) this.dropOldest();
    this.samples.growTo(this.samples.length + n);
    this.samples.appendFrom(first ? rows.subarray(first * width) : rows, n);
    const processesAt = listingsByRow(listed);
    for (let i = first; i < count; i++) {
      const processes = processesAt(i);
      const kept = this.makeRoomFor(processes);
      this.appendProcesses(processes, kept);
    }
  }

  /**
   * The processes of a new sample that fit, after dropping the oldest samples to make room for them. Only
   * samples whose process columns are written go (appendRows adds its rows first, their columns one by one).
   */
  private makeRoomFor(processes: ProcessMemorySample[] | null): ProcessMemorySample[] {
    if (processes === null || processes.length === 0) return NONE;
    // More processes in one sample than the whole bound: keep what fits (never seen: NVML lists a few thousand at most).
    const kept = processes.length > this.pids.bound ? processes.slice(0, this.pids.bound) : processes;
    while (this.pids.length + kept.length > this.pids.bound && this.processCount.length > 0) this.dropOldest();
    return kept;
  }

  private appendProcesses(processes: ProcessMemorySample[] | null, kept: ProcessMemorySample[]): void {
    this.processStart.reserve();
    this.processCount.reserve();
    this.processStart.columns[0]![this.processStart.append()] = this.firstEntry + this.pids.length;
    this.processCount.columns[0]![this.processCount.append()] = processes ? kept.length : -1;
    for (let k = 0; k < kept.length; k++) {
      const p = kept[k]!;
      this.pids.reserve();
      this.processDevice.reserve();
      this.processUsed.reserve();
      this.pids.columns[0]![this.pids.append()] = p.pid;
      this.processDevice.columns[0]![this.processDevice.append()] = p.device;
      this.processUsed.columns[0]![this.processUsed.append()] = p.usedBytes ?? NaN;
    }
  }

  /** The i-th sample kept (0: the oldest). */
  at(i: number): MemorySample {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) throw new RangeError(`sample ${i} of ${this.length}`);
    const s = this.samples.slot(i);
    const width = 1 + 3 * this.deviceCount;
    const row = this.samples.columns[0]!;
    const devices = Array.from({ length: this.deviceCount }, (_, j) => ({
      index: j,
      usedBytes: row[s * width + 1 + 3 * j]!,
      freeBytes: row[s * width + 2 + 3 * j]!,
      totalBytes: row[s * width + 3 + 3 * j]!,
    }));
    const n = this.processCount.columns[0]![this.processCount.slot(i)]!;
    let processes: ProcessMemorySample[] | null = null;
    if (n >= 0) {
      const start = this.processStart.columns[0]![this.processStart.slot(i)]! - this.firstEntry;
      processes = [];
      for (let k = 0; k < n; k++) {
        const e = this.pids.slot(start + k);
        const used = this.processUsed.columns[0]![e]!;
        processes.push({ device: this.processDevice.columns[0]![e]!, pid: this.pids.columns[0]![e]!, usedBytes: Number.isNaN(used) ? null : used });
      }
    }
    return { timeUs: row[s * width]!, devices, processes };
  }

  /** The samples kept from the i-th on, oldest first, made one at a time. */
  *iterate(from = 0): Generator<MemorySample> {
    for (let i = Math.max(0, from); i < this.length; i++) yield this.at(i);
  }

  /** The newest `count` samples kept (all when count is larger). */
  newest(count: number): MemorySample[] {
    return [...this.iterate(Math.max(0, this.length - count))];
  }

  private dropOldest(): void {
    if (this.samples.length === 0) return;
    const n = Math.max(0, this.processCount.columns[0]![this.processCount.slot(0)]!);
    this.samples.dropFirst(1);
    this.processStart.dropFirst(1);
    this.processCount.dropFirst(1);
    for (const c of [this.pids, this.processDevice, this.processUsed]) c.dropFirst(n);
    this.firstEntry += n;
    this.droppedSamples++;
  }
}
