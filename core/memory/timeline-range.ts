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
