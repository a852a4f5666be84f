/**
 * Per-pixel levels of detail for the tracks drawn straight onto the canvas each frame: counters as the
 * least, greatest and last value in each pixel column (as Perfetto's counter tracks do: a spike narrower
 * than a pixel still shows), spans as the share of each column they cover (a kernel narrower than a pixel
 * still marks its pixel). Both cost what is in view plus one binary search, whatever the zoom.
 */
import { LAYOUT_BLOCK, lowerBound, upperBound } from './timeline-layout';
import type { TimelineCounter, TimelineSpans } from './timeline';

export interface CounterColumns {
  /** NaN where the counter has no value (before its first sample, after the timeline's end). */
  min: Float64Array;
  max: Float64Array;
  last: Float64Array;
}

/**
 * A step function (value[i] holds over [time[i], time[i + 1]), the last one until `endUs`) in `cols` columns
 * from `t0`, each `usPerCol` wide: the least and greatest values it takes in each, and the one it ends on.
 */
export function counterColumns(counter: Pick<TimelineCounter, 'time' | 'value'>, t0: number, usPerCol: number, cols: number, endUs: number): CounterColumns {
  const { time, value } = counter;
  const n = Math.min(time.length, value.length);
  const out: CounterColumns = { min: new Float64Array(cols).fill(NaN), max: new Float64Array(cols).fill(NaN), last: new Float64Array(cols).fill(NaN) };
  if (n === 0) return out;
  // the sample in effect at t0
  let i = upperBound(time.subarray(0, n), t0) - 1;
  for (let c = 0; c < cols; c++) {
    const ta = t0 + c * usPerCol;
    const tb = ta + usPerCol;
    if (ta >= endUs) break;
    // the sample in effect at ta (one exactly at ta replaces the one before), then those within the column
    while (i + 1 < n && time[i + 1]! <= ta) i++;
    let lo = Infinity;
    let hi = -Infinity;
    if (i >= 0) lo = hi = value[i]!;
    while (i + 1 < n && time[i + 1]! < tb) {
      i++;
      const v = value[i]!;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (i < 0) continue;
    out.min[c] = lo;
    out.max[c] = hi;
    out.last[c] = value[i]!;
  }
  return out;
}

/** Spans by start with each block's latest end, so a window's spans are found without looking at the rest. */
export interface SpanIndex {
  /** Span indices by start. */
  order: Int32Array;
  start: Float64Array;
  blockMaxEnd: Float64Array;
}

export function buildSpanIndex(spans: TimelineSpans): SpanIndex {
  const n = spans.count;
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => spans.start[a]! - spans.start[b]! || a - b);
  const start = new Float64Array(n);
  for (let k = 0; k < n; k++) start[k] = spans.start[order[k]!]!;
  const blockMaxEnd = new Float64Array(Math.ceil(n / LAYOUT_BLOCK)).fill(-Infinity);
  for (let k = 0; k < n; k++) {
    const b = (k / LAYOUT_BLOCK) | 0;
    const e = Math.max(spans.end[order[k]!]!, start[k]!);
    if (e > blockMaxEnd[b]!) blockMaxEnd[b] = e;
  }
  return { order, start, blockMaxEnd };
}

/** Calls visit(span) for each span that overlaps [t0, t1] (a zero-length span at a moment inside counts). */
export function forEachSpanIn(index: SpanIndex, spans: TimelineSpans, t0: number, t1: number, visit: (span: number) => void): void {
  const last = upperBound(index.start, t1);
  const firstInside = lowerBound(index.start, t0);
  for (let b = 0; b * LAYOUT_BLOCK < firstInside; b++) {
    if (index.blockMaxEnd[b]! < t0) continue;
    const to = Math.min(firstInside, (b + 1) * LAYOUT_BLOCK);
    for (let k = b * LAYOUT_BLOCK; k < to; k++) if (spans.end[index.order[k]!]! >= t0) visit(index.order[k]!);
  }
  for (let k = firstInside; k < last; k++) visit(index.order[k]!);
}

export interface SpanColumns {
  /** Per lane and column: the share of the column its spans cover (0..1; overlapping spans are capped at 1). */
  busy: Float32Array;
  /** Per lane and column: how many spans touch it. */
  count: Uint32Array;
  lanes: number;
  cols: number;
}

/** The spans in view, lane by lane, column by column. */
export function spanColumns(index: SpanIndex, spans: TimelineSpans, lanes: number, t0: number, usPerCol: number, cols: number): SpanColumns {
  const busy = new Float32Array(lanes * cols);
  const count = new Uint32Array(lanes * cols);
  const t1 = t0 + usPerCol * cols;
  forEachSpanIn(index, spans, t0, t1, (s) => {
    const lane = spans.lane[s]!;
    if (lane >= lanes) return;
    const a = Math.max(spans.start[s]!, t0);
    const b = Math.min(Math.max(spans.end[s]!, spans.start[s]!), t1);
    const c0 = Math.max(0, Math.min(cols - 1, Math.floor((a - t0) / usPerCol)));
    const c1 = Math.max(c0, Math.min(cols - 1, Math.ceil((b - t0) / usPerCol) - 1));
    for (let c = c0; c <= c1; c++) {
      const ca = t0 + c * usPerCol;
      const share = (Math.min(b, ca + usPerCol) - Math.max(a, ca)) / usPerCol;
      const k = lane * cols + c;
      busy[k] = Math.min(1, busy[k]! + Math.max(0, share));
      count[k] = count[k]! + 1;
    }
  });
  return { busy, count, lanes, cols };
}

/** The span of a lane nearest to t within `toleranceUs` (one under t first, the shortest among those), or -1. */
export function hitSpan(index: SpanIndex, spans: TimelineSpans, lane: number, t: number, toleranceUs: number): number {
  let best = -1;
  let bestDistance = Infinity;
  let bestLength = Infinity;
  forEachSpanIn(index, spans, t - toleranceUs, t + toleranceUs, (s) => {
    if (spans.lane[s] !== lane) return;
    const a = spans.start[s]!;
    const b = Math.max(spans.end[s]!, a);
    const distance = t < a ? a - t : t > b ? t - b : 0;
    const length = b - a;
    if (distance < bestDistance || (distance === bestDistance && length < bestLength)) {
      best = s;
      bestDistance = distance;
      bestLength = length;
    }
  });
  return best;
}
