/**
 * The active memory timeline's layout: every allocation stacked on the ones alive below it, in the order
 * they were made (PyTorch's "active memory timeline"). An allocation goes on top of the stack when it is
 * made, so its offset at that moment is the bytes alive just before it; when one below it is freed, it drops
 * by that one's size. Its offset therefore only falls during its life.
 *
 * Nothing here builds a polygon per allocation (that is O(allocations × frees) and why PyTorch's MemoryViz
 * stops at 15,000): the view is drawn column by column (ActiveRaster), a sweep over the allocations in
 * start order with prefix sums over the live stack, so its cost follows the pixels and the events in view,
 * and every allocation still reaches a pixel at every zoom.
 *
 * Times are the Timeline's (µs after its origin); an allocation is alive over [start, end).
 */
import type { TimelineAllocations } from './timeline';

/** Positions per block whose latest end is kept, so that "alive at t" scans skip blocks that had all ended. */
export const LAYOUT_BLOCK = 256;

export interface ActiveLayout {
  count: number;
  /** Allocation index at each position (positions are in stacking order: by start, then by index); null when that is the identity. */
  order: Int32Array | null;
  /** By position. Shared with the Timeline's own columns when it was already in start order. */
  start: Float64Array;
  end: Float64Array;
  size: Float64Array;
  /** By position: the bytes alive under it when it was made, i.e. its offset at its start. */
  base: Float64Array;
  /** Positions of the allocations that are ever alive and end (end > start, finite), by end ascending; and those ends. */
  endOrder: Int32Array;
  endTime: Float64Array;
  /** The latest end in each block of LAYOUT_BLOCK positions (+Infinity when one never ends). */
  blockMaxEnd: Float64Array;
  /** The most bytes alive at once, and the first moment it was reached (0 and NaN without allocations). */
  peakBytes: number;
  peakUs: number;
}

/** The allocation index at a position. */
export const allocationAt = (layout: ActiveLayout, position: number): number => (layout.order ? layout.order[position]! : position);

/** A per-allocation column in position order (the same array when positions are the allocations' own order). */
export function byPosition(layout: ActiveLayout, values: Uint8Array): Uint8Array {
  const { order } = layout;
  if (!order) return values;
  const out = new Uint8Array(layout.count);
  for (let p = 0; p < layout.count; p++) out[p] = values[order[p]!]!;
  return out;
}

/** Whether it is alive at some instant (a zero-length or malformed life is drawn in its column, but holds no room in the stack). */
const lives = (start: number, end: number) => end > start;

/** Index of the first element > value in an ascending array (NaN-free prefix assumed). */
export function upperBound(sorted: ArrayLike<number>, value: number, lo = 0, hi = sorted.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first element ≥ value in an ascending array. */
export function lowerBound(sorted: ArrayLike<number>, value: number, lo = 0, hi = sorted.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** NaN sorts last, as if it were +Infinity. */
const key = (v: number) => (Number.isNaN(v) ? Infinity : v);

export function buildActiveLayout(a: TimelineAllocations): ActiveLayout {
  const n = a.count;
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) if (key(a.start[i]!) < key(a.start[i - 1]!)) sorted = false;
  let order: Int32Array | null = null;
  let start = a.start;
  let end = a.end;
  let size = a.size;
  if (!sorted) {
    order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    const s = a.start;
    order.sort((x, y) => key(s[x]!) - key(s[y]!) || x - y);
    start = new Float64Array(n);
    end = new Float64Array(n);
    size = new Float64Array(n);
    for (let p = 0; p < n; p++) {
      const i = order[p]!;
      start[p] = key(a.start[i]!);
      end[p] = a.end[i]!;
      size[p] = a.size[i]!;
    }
  }

  // Frees by time: positions that end (end > start, finite), sorted by end through a typed sort of packed keys.
  let ending = 0;
  for (let p = 0; p < n; p++) if (lives(start[p]!, end[p]!) && Number.isFinite(end[p]!)) ending++;
  const endOrder = new Int32Array(ending);
  {
    let k = 0;
    for (let p = 0; p < n; p++) if (lives(start[p]!, end[p]!) && Number.isFinite(end[p]!)) endOrder[k++] = p;
    endOrder.sort((x, y) => end[x]! - end[y]! || x - y);
  }
  const endTime = new Float64Array(ending);
  for (let k = 0; k < ending; k++) endTime[k] = end[endOrder[k]!]!;

  const blocks = Math.ceil(n / LAYOUT_BLOCK);
  const blockMaxEnd = new Float64Array(blocks).fill(-Infinity);
  for (let p = 0; p < n; p++) {
    const b = (p / LAYOUT_BLOCK) | 0;
    const e = lives(start[p]!, end[p]!) ? end[p]! : -Infinity;
    if (e > blockMaxEnd[b]!) blockMaxEnd[b] = e;
  }

  // One sweep: frees at or before a start come off first (alive is [start, end)), then the allocation goes on top.
  const base = new Float64Array(n);
  let live = 0;
  let e = 0;
  let peakBytes = 0;
  let peakUs = NaN;
  for (let p = 0; p < n; p++) {
    const s = start[p]!;
    while (e < ending && endTime[e]! <= s) live -= size[endOrder[e++]!]!;
    base[p] = live;
    if (lives(s, end[p]!)) {
      live += size[p]!;
      if (live > peakBytes) {
        peakBytes = live;
        peakUs = s;
      }
    }
  }
  return { count: n, order, start, end, size, base, endOrder, endTime, blockMaxEnd, peakBytes, peakUs };
}

/** Calls visit(position) for every allocation alive at t (start ≤ t < end), in stacking order. */
export function forEachAliveAt(layout: ActiveLayout, t: number, visit: (position: number) => void): void {
  const { start, end, blockMaxEnd } = layout;
  const last = upperBound(start, t);
  for (let b = 0; b * LAYOUT_BLOCK < last; b++) {
    if (blockMaxEnd[b]! <= t) continue;
    const to = Math.min(last, (b + 1) * LAYOUT_BLOCK);
    for (let p = b * LAYOUT_BLOCK; p < to; p++) if (end[p]! > t && lives(start[p]!, end[p]!)) visit(p);
  }
}

/** The stack at instant t, bottom first: each alive allocation (by its index in the Timeline) and its offset. */
export function stackAt(layout: ActiveLayout, t: number): { allocation: number; offset: number; size: number }[] {
  const out: { allocation: number; offset: number; size: number }[] = [];
  let offset = 0;
  forEachAliveAt(layout, t, (p) => {
    out.push({ allocation: allocationAt(layout, p), offset, size: layout.size[p]! });
    offset += layout.size[p]!;
  });
  return out;
}

/** The bytes alive at instant t. */
export function liveBytesAt(layout: ActiveLayout, t: number): number {
  let total = 0;
  forEachAliveAt(layout, t, (p) => (total += layout.size[p]!));
  return total;
}

/** The position of an allocation (inverse of allocationAt); -1 when out of range. */
export function positionOf(layout: ActiveLayout, allocation: number): number {
  if (!(allocation >= 0 && allocation < layout.count)) return -1;
  if (!layout.order) return allocation;
  // built on first use: most timelines come in start order and never need it
  let inverse = inverses.get(layout);
  if (!inverse) {
    inverse = new Int32Array(layout.count);
    for (let p = 0; p < layout.count; p++) inverse[layout.order[p]!] = p;
    inverses.set(layout, inverse);
  }
  return inverse[allocation]!;
}
const inverses = new WeakMap<ActiveLayout, Int32Array>();

/**
 * The allocation just above (by = 1) or below (by = -1) one in the stack at instant t (its start when t is
 * outside its life), or -1 at the top or the bottom. Positions in, positions out.
 */
export function stackNeighbour(layout: ActiveLayout, position: number, t: number, by: 1 | -1): number {
  const s = layout.start[position]!;
  const e = layout.end[position]!;
  const at = t >= s && t < e ? t : s;
  const stack: number[] = [];
  forEachAliveAt(layout, at, (p) => stack.push(p));
  const k = stack.indexOf(position);
  if (k < 0) {
    // not in the stack (it lives less than an instant): the one under its offset, or above it
    const base = layout.base[position]!;
    let offset = 0;
    let below = -1;
    for (const p of stack) {
      if (offset < base) below = p;
      else return by === 1 ? p : below;
      offset += layout.size[p]!;
    }
    return by === 1 ? -1 : below;
  }
  return stack[k + by] ?? -1;
}

/**
 * The outline of one allocation over its life: its offset from each time on (a step function), falling as
 * the allocations below it are freed. Its first step is its start at its base; the last holds until its end.
 */
export function activeOutline(layout: ActiveLayout, position: number): { time: Float64Array; offset: Float64Array; end: number } {
  const { start, end, size, blockMaxEnd } = layout;
  const s = start[position]!;
  const e = lives(s, end[position]!) ? end[position]! : s;
  const steps: number[] = [];
  for (let b = 0; b * LAYOUT_BLOCK < position; b++) {
    if (blockMaxEnd[b]! <= s) continue;
    const to = Math.min(position, (b + 1) * LAYOUT_BLOCK);
    for (let p = b * LAYOUT_BLOCK; p < to; p++) if (end[p]! > s && end[p]! < e && lives(start[p]!, end[p]!)) steps.push(p);
  }
  steps.sort((x, y) => end[x]! - end[y]! || x - y);
  const time = new Float64Array(steps.length + 1);
  const offset = new Float64Array(steps.length + 1);
  time[0] = s;
  offset[0] = layout.base[position]!;
  for (let k = 0; k < steps.length; k++) {
    time[k + 1] = end[steps[k]!]!;
    offset[k + 1] = offset[k]! - size[steps[k]!]!;
  }
  return { time, offset, end: e };
}

/**
 * The allocation drawn at (time column [ta, tb), byte offset v), by the rule the raster draws with: the stack
 * alive at ta, else one made within the column (the smallest that covers v, at its offset when it was made).
 * Returns the allocation's index in the Timeline, or -1.
 */
export function hitActive(layout: ActiveLayout, ta: number, tb: number, v: number): number {
  if (!(v >= 0)) return -1;
  let offset = 0;
  let hit = -1;
  forEachAliveAt(layout, ta, (p) => {
    const s = layout.size[p]!;
    if (hit < 0 && v >= offset && v < offset + s) hit = p;
    offset += s;
  });
  if (hit >= 0) return allocationAt(layout, hit);
  const { start, end, size, base } = layout;
  let best = -1;
  for (let p = lowerBound(start, ta); p < layout.count && start[p]! < tb; p++) {
    if (start[p]! <= ta && lives(start[p]!, end[p]!)) continue; // in the stack at ta
    const height = Math.max(size[p]!, 1);
    if (v >= base[p]! && v < base[p]! + height && (best < 0 || size[p]! < size[best]!)) best = p;
  }
  return best < 0 ? -1 : allocationAt(layout, best);
}

// ------------------------------------------------------------------------------------------- the raster

/** Colours by palette index, channel by channel in 0..1. */
export interface Palette {
  r: Float32Array;
  g: Float32Array;
  b: Float32Array;
}

/** A tile of the allocations area: `cols` × `rows` RGBA pixels, top row first; column c covers [t0 + c·usPerCol, t0 + (c+1)·usPerCol). */
export interface RasterTarget {
  cols: number;
  rows: number;
  t0: number;
  usPerCol: number;
  /** Bytes per row: row r (from the bottom) covers [r·bytesPerRow, (r+1)·bytesPerRow). */
  bytesPerRow: number;
  pixels: Uint8ClampedArray;
}

/**
 * The least opacity of a pixel that any allocation touches: an allocation far smaller than its pixel still
 * shows there, in a colour mixed by its share of the pixel's bytes.
 */
export const MIN_ALPHA = 0.35;

/**
 * One pixel's RGBA from its accumulator (colour sums weighted by coverage, then the coverage): the mix of what
 * covers it, at least MIN_ALPHA opaque when anything does, transparent when nothing does.
 */
export function writeMixedPixel(acc: ArrayLike<number>, k: number, pixels: Uint8ClampedArray | Uint8Array, o: number): void {
  const w = acc[k + 3]!;
  if (w <= 0) {
    pixels[o + 3] = 0;
    return;
  }
  pixels[o] = (acc[k]! / w) * 255;
  pixels[o + 1] = (acc[k + 1]! / w) * 255;
  pixels[o + 2] = (acc[k + 2]! / w) * 255;
  pixels[o + 3] = Math.max(MIN_ALPHA, Math.min(1, w)) * 255;
}

/** Work arrays a raster reuses (one raster runs at a time per scratch): sized to the live stack, grown on demand. */
export class RasterScratch {
  list = new Int32Array(1024);
  prefix = new Float64Array(1025);
  prefixR = new Float64Array(1025);
  prefixG = new Float64Array(1025);
  prefixB = new Float64Array(1025);
  dead: Int32Array;
  generation = 0;
  acc = new Float32Array(0);

  constructor(count: number) {
    this.dead = new Int32Array(count);
  }

  grow(len: number): void {
    if (len <= this.list.length) return;
    let cap = this.list.length;
    while (cap < len) cap *= 2;
    const list = new Int32Array(cap);
    list.set(this.list);
    this.list = list;
    for (const name of ['prefix', 'prefixR', 'prefixG', 'prefixB'] as const) {
      const next = new Float64Array(cap + 1);
      next.set(this[name]);
      this[name] = next;
    }
  }
}

/**
 * Draws a tile of the active memory timeline column by column, resumably (advance draws a few columns, so
 * a frame can stop when its time is up). Each column shows:
 * - the stack alive at the column's start instant, each row coloured by the allocations in its bytes,
 *   mixed by their share (prefix sums of bytes and of bytes × colour over the stack: O(rows · log stack));
 * - every allocation made within the column that the stack at its start does not hold, at the offset it was
 *   made at, so one that lived for less than a column still reaches its pixels.
 * A pixel's colour is the byte-weighted mix of what covers it; its opacity its coverage, at least MIN_ALPHA.
 */
export class ActiveRaster {
  private column = 0;
  private len = 0;
  private prefixLen = 0;
  /** The lowest position freed since the stack was last compacted (every freed one is on the stack: it was pushed when it started). */
  private lowestDead = Infinity;
  private deadCount = 0;
  private nextAdd: number;
  private nextEnd: number;
  private shortFrom: number;
  private readonly generation: number;
  private readonly lower = new Float64Array(3);
  private readonly upper = new Float64Array(3);
  /** The slot of the stack the last lookup ended in: rows go up, so lookups only move up. */
  private slot = 0;

  constructor(
    private readonly layout: ActiveLayout,
    /** Palette index by position (byPosition of the colours by allocation). */
    private readonly colourAt: Uint8Array,
    private readonly palette: Palette,
    readonly target: RasterTarget,
    private readonly scratch: RasterScratch,
  ) {
    this.generation = ++scratch.generation;
    if (scratch.acc.length < target.rows * 4) scratch.acc = new Float32Array(target.rows * 4);
    const t0 = target.t0;
    forEachAliveAt(layout, t0, (p) => this.push(p));
    this.nextAdd = upperBound(layout.start, t0);
    this.nextEnd = upperBound(layout.endTime, t0);
    this.shortFrom = lowerBound(layout.start, t0);
  }

  get done(): boolean {
    return this.column >= this.target.cols;
  }

  /** Draws up to `columns` more columns; true once the tile is complete. */
  advance(columns: number): boolean {
    if (this.scratch.generation !== this.generation) throw new Error('This raster’s work arrays were taken by a newer raster: start it again.');
    const stop = Math.min(this.target.cols, this.column + columns);
    while (this.column < stop) this.drawColumn(this.column++);
    return this.done;
  }

  private push(p: number): void {
    const s = this.scratch;
    if (this.len >= s.list.length) s.grow(this.len + 1);
    s.list[this.len++] = p;
  }

  /** Marks a freed allocation; the stack is compacted from the lowest freed slot before the next column is drawn. */
  private kill(p: number): void {
    this.scratch.dead[p] = this.generation;
    this.deadCount++;
    if (p < this.lowestDead) this.lowestDead = p;
  }

  /** Compacts the stack past its first freed slot and brings the prefix sums up to date. */
  private settle(): void {
    const s = this.scratch;
    const { list, dead } = s;
    if (this.deadCount > 0) {
      const firstDirty = lowerBound(list, this.lowestDead, 0, this.len);
      let w = firstDirty;
      for (let r = firstDirty; r < this.len; r++) {
        const p = list[r]!;
        if (dead[p] !== this.generation) list[w++] = p;
      }
      this.len = w;
      this.deadCount = 0;
      if (firstDirty < this.prefixLen) this.prefixLen = firstDirty;
      this.lowestDead = Infinity;
    }
    if (this.prefixLen > this.len) this.prefixLen = this.len;
    const { prefix, prefixR, prefixG, prefixB } = s;
    const { size } = this.layout;
    const { r, g, b } = this.palette;
    for (let i = this.prefixLen; i < this.len; i++) {
      const p = list[i]!;
      const bytes = size[p]!;
      const c = this.colourAt[p]!;
      prefix[i + 1] = prefix[i]! + bytes;
      prefixR[i + 1] = prefixR[i]! + bytes * r[c]!;
      prefixG[i + 1] = prefixG[i]! + bytes * g[c]!;
      prefixB[i + 1] = prefixB[i]! + bytes * b[c]!;
    }
    this.prefixLen = this.len;
  }

  /** The colour-weighted bytes of the stack below offset v: the prefix at the slot holding v, plus v's part of that slot. */
  private below(v: number, len: number, out: Float64Array): void {
    const { prefix, prefixR, prefixG, prefixB, list } = this.scratch;
    if (v >= prefix[len]!) {
      out[0] = prefixR[len]!;
      out[1] = prefixG[len]!;
      out[2] = prefixB[len]!;
      return;
    }
    let i = this.slot;
    if (prefix[i + 1]! <= v) {
      // gallop up from the last slot, then halve: the largest i with prefix[i] ≤ v (< prefix[len])
      let step = 1;
      let hi = i + 1;
      while (hi < len && prefix[hi]! <= v) {
        i = hi;
        hi = Math.min(len, hi + (step *= 2));
      }
      let lo = i;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (prefix[mid]! <= v) lo = mid;
        else hi = mid - 1;
      }
      i = lo;
    }
    this.slot = i;
    const part = v - prefix[i]!;
    const col = this.colourAt[list[i]!]!;
    out[0] = prefixR[i]! + part * this.palette.r[col]!;
    out[1] = prefixG[i]! + part * this.palette.g[col]!;
    out[2] = prefixB[i]! + part * this.palette.b[col]!;
  }

  private drawColumn(c: number): void {
    const { target, layout, scratch } = this;
    const { rows, bytesPerRow: bpr } = target;
    const ta = target.t0 + c * target.usPerCol;
    const tb = target.t0 + (c + 1) * target.usPerCol;
    const acc = scratch.acc;
    acc.fill(0, 0, rows * 4);

    // The stack at ta.
    this.settle();
    const { prefix } = scratch;
    const len = this.len;
    const top = prefix[len]!;
    if (len > 0 && top > 0) {
      const used = Math.min(rows, Math.ceil(top / bpr));
      this.slot = 0;
      const { lower, upper } = this;
      this.below(0, len, lower);
      for (let row = 0; row < used; row++) {
        const vb = Math.min((row + 1) * bpr, top);
        this.below(vb, len, upper);
        const k = row * 4;
        acc[k] = (upper[0]! - lower[0]!) / bpr;
        acc[k + 1] = (upper[1]! - lower[1]!) / bpr;
        acc[k + 2] = (upper[2]! - lower[2]!) / bpr;
        acc[k + 3] = (vb - row * bpr) / bpr;
        lower.set(upper);
      }
    }

    // What was made within the column and is not in the stack at ta: at its offset when made.
    const { start, end, size, base } = layout;
    const { r, g, b } = this.palette;
    let p = this.shortFrom;
    for (; p < layout.count && start[p]! < tb; p++) {
      if (start[p]! <= ta && end[p]! > start[p]!) continue;
      const y0 = base[p]!;
      const y1 = y0 + Math.max(size[p]!, 1);
      const first = Math.max(0, Math.floor(y0 / bpr));
      const last = Math.min(rows - 1, Math.ceil(y1 / bpr) - 1);
      const col = this.colourAt[p]!;
      for (let row = first; row <= last; row++) {
        const share = (Math.min(y1, (row + 1) * bpr) - Math.max(y0, row * bpr)) / bpr;
        const k = row * 4;
        acc[k] = acc[k]! + share * r[col]!;
        acc[k + 1] = acc[k + 1]! + share * g[col]!;
        acc[k + 2] = acc[k + 2]! + share * b[col]!;
        acc[k + 3] = acc[k + 3]! + share;
      }
    }
    this.shortFrom = p;

    // Out to the tile: row 0 is the bottom.
    const { pixels, cols } = target;
    for (let row = 0; row < rows; row++) writeMixedPixel(acc, row * 4, pixels, ((rows - 1 - row) * cols + c) * 4);

    // On to tb: what starts by then goes on the stack, then what ends by then comes off.
    for (; this.nextAdd < layout.count && start[this.nextAdd]! <= tb; this.nextAdd++) {
      if (end[this.nextAdd]! > start[this.nextAdd]!) this.push(this.nextAdd);
    }
    const { endTime, endOrder } = layout;
    for (; this.nextEnd < endTime.length && endTime[this.nextEnd]! <= tb; this.nextEnd++) this.kill(endOrder[this.nextEnd]!);
  }
}

/**
 * The outline of an allocation (activeOutline) as a polygon for a view `width` pixels wide showing [t0, t1],
 * decimated to the pixel grid (`step` pixels): along the bottom edge as it steps down, then back along the top,
 * with at most two points per pixel column on each edge (where the offset enters and leaves the column; it
 * only falls, so nothing between them sticks out). Coordinates: x in pixels from the view's left, y in bytes
 * (the caller maps bytes to pixels). An allocation freed a million times under its own feet stays a few
 * thousand points.
 */
export function outlinePolygon(
  outline: { time: Float64Array; offset: Float64Array; end: number },
  size: number,
  t0: number,
  t1: number,
  width: number,
  step: number,
): { x: Float64Array; y: Float64Array } {
  const { time, offset } = outline;
  const n = time.length;
  const scale = width / (t1 - t0);
  const clampX = (t: number) => Math.max(-2, Math.min(width + 2, (t - t0) * scale));
  // the steps that matter: the last one at or before t0, through the first one past t1
  const first = Math.max(0, upperBound(time, t0) - 1);
  const last = Math.min(n - 1, upperBound(time, t1));
  const xs: number[] = [];
  const ys: number[] = [];
  const column = (x: number) => Math.floor(x / step);
  /** Points before this one stay as they are: the turn from the bottom edge to the top is never merged away. */
  let fixed = 0;
  const add = (x: number, y: number) => {
    const k = xs.length;
    // a third point in the same column on a vertical run: move the run's end instead
    if (k - 2 >= fixed && column(xs[k - 1]!) === column(x) && column(xs[k - 2]!) === column(x)) {
      xs[k - 1] = x;
      ys[k - 1] = y;
      return;
    }
    xs.push(x);
    ys.push(y);
  };
  const endX = Math.max(clampX(time[0]!) + step * 2, clampX(Math.min(outline.end, t1 + (t1 - t0))));
  add(clampX(time[first]!), offset[first]!);
  for (let k = first + 1; k <= last; k++) {
    const x = clampX(time[k]!);
    add(x, offset[k - 1]!);
    add(x, offset[k]!);
  }
  add(endX, offset[last]!);
  fixed = xs.length;
  add(endX, offset[last]! + size);
  for (let k = last; k > first; k--) {
    const x = clampX(time[k]!);
    add(x, offset[k]! + size);
    add(x, offset[k - 1]! + size);
  }
  add(clampX(time[first]!), offset[first]! + size);
  return { x: Float64Array.from(xs), y: Float64Array.from(ys) };
}
