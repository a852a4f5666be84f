import { SPAN_LANES, type Timeline } from './timeline';

/** What happened in a stretch of a timeline: what the details panel says of a range selected by keys or by mouse. */
export interface RangeFigures {
  startUs: number;
  endUs: number;
  /** Allocations made in the range (start within it). */
  allocated: { count: number; bytes: number };
  /** Allocations freed in the range (end within it). */
  freed: { count: number; bytes: number };
  /** Bytes of the timeline's allocations alive at the range's start and at its end. */
  liveAtStartBytes: number;
  liveAtEndBytes: number;
  /** Kernels that ran in the range (any overlap) and their GPU time inside it. */
  kernels: { count: number; busyUs: number };
  /** Copies and memsets that overlap the range. */
  copies: number;
}

const KERNEL = SPAN_LANES.indexOf('kernel');
const COPY = SPAN_LANES.indexOf('copy');
const MEMSET = SPAN_LANES.indexOf('memset');

/** The figures for [startUs, endUs] (ordered whichever way they are given, clamped to the timeline). */
export function rangeFigures(t: Timeline, fromUs: number, toUs: number): RangeFigures {
  const startUs = Math.max(0, Math.min(fromUs, toUs));
  const endUs = Math.min(t.durationUs, Math.max(fromUs, toUs));
  const out: RangeFigures = {
    startUs,
    endUs,
    allocated: { count: 0, bytes: 0 },
    freed: { count: 0, bytes: 0 },
    liveAtStartBytes: 0,
    liveAtEndBytes: 0,
    kernels: { count: 0, busyUs: 0 },
    copies: 0,
  };
  const a = t.allocations;
  for (let i = 0; i < a.count; i++) {
    const s = a.start[i]!;
    const e = a.end[i]!;
    const size = a.size[i]!;
    if (s >= startUs && s <= endUs) {
      out.allocated.count++;
      out.allocated.bytes += size;
    }
    if (e >= startUs && e <= endUs) {
      out.freed.count++;
      out.freed.bytes += size;
    }
    if (s <= startUs && e > startUs) out.liveAtStartBytes += size;
    if (s <= endUs && e > endUs) out.liveAtEndBytes += size;
  }
  const sp = t.spans;
  for (let i = 0; i < sp.count; i++) {
    const s = sp.start[i]!;
    const e = sp.end[i]!;
    if (e < startUs || s > endUs) continue;
    const lane = sp.lane[i]!;
    if (lane === KERNEL) {
      out.kernels.count++;
      out.kernels.busyUs += Math.max(0, Math.min(e, endUs) - Math.max(s, startUs));
    } else if (lane === COPY || lane === MEMSET) out.copies++;
  }
  return out;
}

/** How an allocation listed for a range relates to it. */
export type RangeRole = 'made' | 'freed' | 'made and freed' | 'alive throughout';

export interface RangeAllocation {
  index: number;
  size: number;
  address: number;
  start: number;
  /** +Infinity: never freed. */
  end: number;
  role: RangeRole;
}

export interface RangeAllocations {
  /** The largest first, at most `limit` of them (ties: the earlier made first). */
  rows: RangeAllocation[];
  /** How many allocations the range holds in all, and their bytes. */
  count: number;
  bytes: number;
}

/**
 * The allocations a range holds — made in it, freed in it, or alive across it — largest first, bounded: a range
 * over a million allocations lists `limit` and counts the rest. One pass, keeping the largest in a heap.
 */
export function rangeAllocations(t: Timeline, fromUs: number, toUs: number, limit = 50): RangeAllocations {
  const startUs = Math.min(fromUs, toUs);
  const endUs = Math.max(fromUs, toUs);
  const a = t.allocations;
  // a min-heap on (size, -start): its top is the one to drop when a larger one comes
  const heap: number[] = [];
  const smaller = (x: number, y: number) =>
    a.size[x]! < a.size[y]! || (a.size[x] === a.size[y] && (a.start[x]! > a.start[y]! || (a.start[x] === a.start[y] && x > y)));
  let count = 0;
  let bytes = 0;
  for (let i = 0; i < a.count; i++) {
    if (a.start[i]! > endUs || a.end[i]! < startUs) continue;
    count++;
    bytes += a.size[i]!;
    if (limit <= 0) continue;
    if (heap.length < limit) siftUp(heap, i, smaller);
    else if (smaller(heap[0]!, i)) replaceTop(heap, i, smaller);
  }
  const rows = heap
    .sort((x, y) => (smaller(x, y) ? 1 : smaller(y, x) ? -1 : 0))
    .map((i): RangeAllocation => {
      const made = a.start[i]! >= startUs;
      const freed = a.end[i]! <= endUs;
      const role: RangeRole = made && freed ? 'made and freed' : made ? 'made' : freed ? 'freed' : 'alive throughout';
      return { index: i, size: a.size[i]!, address: a.address[i]!, start: a.start[i]!, end: a.end[i]!, role };
    });
  return { rows, count, bytes };
}

function siftUp(heap: number[], value: number, less: (x: number, y: number) => boolean): void {
  let i = heap.length;
  heap.push(value);
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!less(value, heap[p]!)) break;
    heap[i] = heap[p]!;
    i = p;
  }
  heap[i] = value;
}

function replaceTop(heap: number[], value: number, less: (x: number, y: number) => boolean): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= heap.length) break;
    const c = l + 1 < heap.length && less(heap[l + 1]!, heap[l]!) ? l + 1 : l;
    if (!less(heap[c]!, value)) break;
    heap[i] = heap[c]!;
    i = c;
  }
  heap[i] = value;
}
