/**
 * The allocations by address (y = where in the device's address space): holes between live blocks show as
 * gaps, which is what fragmentation looks like. Virtual addresses of separate segments can be terabytes
 * apart, so the axis keeps small gaps at their true size (they are the fragmentation) and squeezes each large
 * one (never used by any allocation of the timeline) to a thin band.
 */
import { LAYOUT_BLOCK, lowerBound, upperBound, writeMixedPixel, type ActiveLayout, type Palette, type RasterTarget } from './timeline-layout';
import type { TimelineAllocations } from './timeline';

export class AddressLayout {
  constructor(
    /** Address ranges shown (merged from every allocation, small gaps kept), ascending, and the y each starts at. */
    readonly lo: Float64Array,
    readonly hi: Float64Array,
    readonly y: Float64Array,
    /** The height a squeezed gap gets, in the axis's bytes. */
    readonly gap: number,
    /** The axis's height in bytes: ranges plus squeezed gaps. */
    readonly height: number,
    /** Per position (the active layout's): the allocation's address. */
    readonly address: Float64Array,
  ) {}

  /** The y (axis bytes) of an address, or NaN when no allocation ever held it. */
  yOf(address: number): number {
    const k = upperBound(this.lo, address) - 1;
    if (k < 0 || address > this.hi[k]!) return NaN;
    return this.y[k]! + (address - this.lo[k]!);
  }

  /** The address at a y, or NaN in a squeezed gap. */
  addressAt(y: number): number {
    const k = upperBound(this.y, y) - 1;
    if (k < 0) return NaN;
    const address = this.lo[k]! + (y - this.y[k]!);
    return address < this.hi[k]! ? address : NaN;
  }

  /** Where a block is on the axis. */
  span(address: number, size: number): { y0: number; y1: number } {
    const y0 = this.yOf(address);
    return { y0, y1: y0 + Math.max(size, 1) };
  }
}

/** Gaps up to this many bytes are drawn at their true size, or up to a thousandth of what is used, if larger. */
const KEPT_GAP_BYTES = 2 * 1024 ** 2;

export function buildAddressLayout(a: TimelineAllocations, layout: ActiveLayout): AddressLayout {
  const n = a.count;
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = 0; i < n; i++) {
    const address = a.address[i]!;
    if (!Number.isFinite(address)) continue;
    starts.push(address);
    ends.push(address + Math.max(a.size[i]!, 1));
  }
  const s = Float64Array.from(starts).sort();
  const e = Float64Array.from(ends).sort();
  // the union of [start, end) over all blocks: a sweep of sorted starts against sorted ends
  const lo: number[] = [];
  const hi: number[] = [];
  let depth = 0;
  let j = 0;
  for (let i = 0; i < s.length; i++) {
    while (j < e.length && e[j]! <= s[i]!) {
      depth--;
      if (depth === 0) hi.push(e[j]!);
      j++;
    }
    if (depth === 0) lo.push(s[i]!);
    depth++;
  }
  if (depth > 0) hi.push(e[e.length - 1]!);
  let used = 0;
  for (let k = 0; k < lo.length; k++) used += hi[k]! - lo[k]!;
  const kept = Math.max(KEPT_GAP_BYTES, used / 1000);
  // merge across small gaps (kept at true size), squeeze the rest
  const mlo: number[] = [];
  const mhi: number[] = [];
  for (let k = 0; k < lo.length; k++) {
    if (mhi.length > 0 && lo[k]! - mhi[mhi.length - 1]! <= kept) mhi[mhi.length - 1] = hi[k]!;
    else {
      mlo.push(lo[k]!);
      mhi.push(hi[k]!);
    }
  }
  let shown = 0;
  for (let k = 0; k < mlo.length; k++) shown += mhi[k]! - mlo[k]!;
  const gap = mlo.length > 1 ? (shown * 0.1) / (mlo.length - 1) : 0;
  const y = new Float64Array(mlo.length);
  let at = 0;
  for (let k = 0; k < mlo.length; k++) {
    y[k] = at;
    at += mhi[k]! - mlo[k]! + gap;
  }
  const height = Math.max(1, at - gap);
  const address = new Float64Array(layout.count);
  for (let p = 0; p < layout.count; p++) address[p] = a.address[layout.order ? layout.order[p]! : p]!;
  return new AddressLayout(Float64Array.from(mlo), Float64Array.from(mhi), y, gap, height, address);
}

/** Calls visit(position) for every allocation whose life meets [t0, t1): alive in it, or made in it (zero-length ones too). */
function forEachIn(layout: ActiveLayout, t0: number, t1: number, visit: (p: number) => void): void {
  const { start, end, blockMaxEnd } = layout;
  const inside = lowerBound(start, t0);
  for (let b = 0; b * LAYOUT_BLOCK < inside; b++) {
    if (blockMaxEnd[b]! <= t0) continue;
    const to = Math.min(inside, (b + 1) * LAYOUT_BLOCK);
    for (let p = b * LAYOUT_BLOCK; p < to; p++) if (end[p]! > t0 && end[p]! > start[p]!) visit(p);
  }
  const last = lowerBound(start, t1);
  for (let p = inside; p < last; p++) visit(p);
}

/** The allocation drawn at (column [ta, tb), axis y): one alive at ta holding that address, else the smallest made in the column; -1 if none. */
export function hitAddress(address: AddressLayout, layout: ActiveLayout, ta: number, tb: number, y: number): number {
  const at = address.addressAt(y);
  if (Number.isNaN(at)) return -1;
  let best = -1;
  let bestAlive = false;
  forEachIn(layout, ta, tb, (p) => {
    const lo = address.address[p]!;
    if (!(at >= lo && at < lo + Math.max(layout.size[p]!, 1))) return;
    const alive = layout.start[p]! <= ta && layout.end[p]! > ta;
    if (best < 0 || (alive && !bestAlive) || (alive === bestAlive && layout.size[p]! < layout.size[best]!)) {
      best = p;
      bestAlive = alive;
    }
  });
  return best < 0 ? -1 : layout.order ? layout.order[best]! : best;
}

/** Allocations handled per unit of advance(): a unit costs about what a column of the active raster does. */
const PER_UNIT = 64;

/**
 * A tile of the address view: each allocation a rectangle from its start to its end at its address, every
 * pixel it touches given its colour by its share of the pixel's bytes (at least MIN_ALPHA opaque), so a block
 * far smaller than a pixel still shows. Resumable like ActiveRaster.
 */
export class AddressRaster {
  private readonly acc: Float32Array;
  private readonly todo: Int32Array;
  private next = 0;
  private written = false;

  constructor(
    private readonly address: AddressLayout,
    private readonly layout: ActiveLayout,
    private readonly colourAt: Uint8Array,
    private readonly palette: Palette,
    readonly target: RasterTarget,
  ) {
    this.acc = new Float32Array(target.cols * target.rows * 4);
    const list: number[] = [];
    forEachIn(layout, target.t0, target.t0 + target.cols * target.usPerCol, (p) => list.push(p));
    this.todo = Int32Array.from(list);
  }

  advance(units: number): boolean {
    if (this.written) return true;
    const stop = Math.min(this.todo.length, this.next + units * PER_UNIT);
    for (; this.next < stop; this.next++) this.paint(this.todo[this.next]!);
    if (this.next < this.todo.length) return false;
    this.finish();
    return true;
  }

  private paint(p: number): void {
    const { cols, rows, t0, usPerCol, bytesPerRow: bpr } = this.target;
    const { start, end, size } = this.layout;
    const y0 = this.address.yOf(this.address.address[p]!);
    if (Number.isNaN(y0)) return;
    const y1 = y0 + Math.max(size[p]!, 1);
    const s = start[p]!;
    const e = end[p]!;
    const c0 = Math.max(0, Math.min(cols - 1, Math.floor((Math.max(s, t0) - t0) / usPerCol)));
    const c1 = e > s ? Math.max(c0, Math.min(cols - 1, Math.ceil((Math.min(e, t0 + cols * usPerCol) - t0) / usPerCol) - 1)) : c0;
    const r0 = Math.max(0, Math.floor(y0 / bpr));
    const r1 = Math.min(rows - 1, Math.ceil(y1 / bpr) - 1);
    const col = this.colourAt[p]!;
    const red = this.palette.r[col]!;
    const green = this.palette.g[col]!;
    const blue = this.palette.b[col]!;
    const acc = this.acc;
    for (let r = r0; r <= r1; r++) {
      const share = (Math.min(y1, (r + 1) * bpr) - Math.max(y0, r * bpr)) / bpr;
      for (let c = c0; c <= c1; c++) {
        const k = (r * cols + c) * 4;
        acc[k] = acc[k]! + share * red;
        acc[k + 1] = acc[k + 1]! + share * green;
        acc[k + 2] = acc[k + 2]! + share * blue;
        acc[k + 3] = acc[k + 3]! + share;
      }
    }
  }

  private finish(): void {
    const { cols, rows, pixels } = this.target;
    const acc = this.acc;
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) writeMixedPixel(acc, (r * cols + c) * 4, pixels, ((rows - 1 - r) * cols + c) * 4);
    }
    this.written = true;
  }
}
