/**
 * Builders for a Timeline's typed columns: rows are pushed one at a time (the builders do not know the count
 * up front) into arrays that grow by doubling, and are cut to length once at the end. Labels are interned: a
 * buffer or kernel name is stored once however many rows name it.
 */
import type { CounterGroup, SpanLane, TimelineAllocations, TimelineCounter, TimelineSpans } from './timeline';
import { SPAN_LANES } from './timeline';

type Typed = Float64Array | Int32Array | Uint8Array;

class Column<T extends Typed> {
  data: T;
  length = 0;
  constructor(private readonly make: (n: number) => T) {
    this.data = make(64);
  }
  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = this.make(this.data.length * 2);
      bigger.set(this.data as never);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }
  finish(): T {
    return this.data.slice(0, this.length) as T;
  }
}

const f64 = () => new Column((n) => new Float64Array(n));
const i32 = () => new Column((n) => new Int32Array(n));

export class LabelTable {
  readonly labels: string[] = [];
  private readonly ids = new Map<string, number>();
  id(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.labels.length;
      this.labels.push(text);
      this.ids.set(text, id);
    }
    return id;
  }
}

export interface AllocationRow {
  start: number;
  end: number;
  address: number;
  size: number;
  stack?: number;
  step?: number;
  label?: number;
}

export class AllocationsBuilder {
  private readonly start = f64();
  private readonly end = f64();
  private readonly address = f64();
  private readonly size = f64();
  private readonly stack = i32();
  private readonly step = i32();
  private readonly label = i32();
  get count(): number {
    return this.start.length;
  }
  push(row: AllocationRow): number {
    this.start.push(row.start);
    this.end.push(row.end);
    this.address.push(row.address);
    this.size.push(row.size);
    this.stack.push(row.stack ?? -1);
    this.step.push(row.step ?? -1);
    this.label.push(row.label ?? -1);
    return this.start.length - 1;
  }
  setEnd(index: number, end: number): void {
    this.end.data[index] = end;
  }
  sizeOf(index: number): number {
    return this.size.data[index]!;
  }
  finish(): TimelineAllocations {
    return {
      count: this.start.length,
      start: this.start.finish(),
      end: this.end.finish(),
      address: this.address.finish(),
      size: this.size.finish(),
      stack: this.stack.finish(),
      step: this.step.finish(),
      label: this.label.finish(),
    };
  }
}

export class SpansBuilder {
  private readonly start = f64();
  private readonly end = f64();
  private readonly lane = new Column((n) => new Uint8Array(n));
  private readonly label = i32();
  private readonly step = i32();
  push(lane: SpanLane, start: number, end: number, label: number, step: number | null): void {
    this.start.push(start);
    this.end.push(Math.max(start, end));
    this.lane.push(SPAN_LANES.indexOf(lane));
    this.label.push(label);
    this.step.push(step ?? -1);
  }
  finish(): TimelineSpans {
    return {
      count: this.start.length,
      start: this.start.finish(),
      end: this.end.finish(),
      lane: this.lane.finish(),
      label: this.label.finish(),
      step: this.step.finish(),
    };
  }
}

/** A step function's points; a point that repeats the value before it is left out (it changes nothing drawn). */
export class CounterBuilder {
  private readonly time = f64();
  private readonly value = f64();
  constructor(private readonly head: Omit<TimelineCounter, 'time' | 'value' | 'unit'>) {}
  get last(): number {
    return this.value.length ? this.value.data[this.value.length - 1]! : NaN;
  }
  push(time: number, value: number): void {
    if (this.value.length && this.value.data[this.value.length - 1] === value) return;
    this.time.push(time);
    this.value.push(value);
  }
  finish(): TimelineCounter {
    return { ...this.head, unit: 'bytes', time: this.time.finish(), value: this.value.finish() };
  }
}

export const emptyAllocations = (): TimelineAllocations => new AllocationsBuilder().finish();
export const emptySpans = (): TimelineSpans => new SpansBuilder().finish();

export const counterHead = (id: string, label: string, group: CounterGroup, extra: Partial<TimelineCounter> = {}) => ({ id, label, group, ...extra });

/** A device address as the runner writes it ("0x7f3a0c800100"); NaN for anything else. */
export function parseAddress(text: string): number {
  if (!/^0x[0-9a-f]{1,16}$/i.test(text)) return NaN;
  const value = parseInt(text.slice(2), 16);
  return Number.isSafeInteger(value) ? value : NaN;
}
