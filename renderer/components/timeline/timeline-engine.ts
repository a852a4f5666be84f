import { PALETTE_SIZE, allocationColours } from '../../../core/memory/timeline-colours';
import {
  activeOutline,
  ActiveRaster,
  allocationAt,
  buildActiveLayout,
  byPosition,
  hitActive,
  outlinePolygon,
  positionOf,
  RasterScratch,
  type ActiveLayout,
  type Palette,
} from '../../../core/memory/timeline-layout';
import { AddressRaster, buildAddressLayout, hitAddress, type AddressLayout } from '../../../core/memory/address-layout';
import { buildSpanIndex, hitSpan, type SpanIndex } from '../../../core/memory/timeline-lod';
import { gutterWidth, layoutTracks, minTracksHeight, trackAt, tracksHeight, type Track, type TrackOptions } from '../../../core/memory/timeline-tracks';
import { identityWarp, type TimeWarp } from '../../../core/memory/time-warp';
import {
  clampWindow,
  fullWindow,
  levelFor,
  MAX_LEVEL,
  TILE_COLS,
  tilesFor,
  tileUsPerCol,
  timeToX,
  xToTime,
  type TileKey,
  type TimeWindow,
} from '../../../core/memory/timeline-viewport';
import type { Timeline } from '../../../core/memory/timeline';
import type { TimelineTarget } from '../../../core/memory/timeline-describe';
import type { TimelineColours } from '../../layout/chart-colours';
import {
  counterScale,
  drawAddressLabels,
  drawAxis,
  drawBreaks,
  drawByteGrid,
  drawCounter,
  drawGutter,
  drawMarkers,
  drawSpans,
  LABEL_FONT,
  snap,
  type Plot,
} from './draw-tracks';
import { TileCache, tileKey } from './tile-cache';

export type AllocationMode = 'active' | 'address';

/** Time a frame may spend drawing tiles: the rest of a 60 Hz frame is left for the browser and the tracks. */
const TILE_BUDGET_MS = 7;
/** Tiles kept (each TILE_COLS × the area's height in device pixels): about 40 MB at a 600-pixel-high area. */
const MAX_TILES = 64;
/** Headroom above the peak in the allocations area. */
const HEADROOM = 1.08;

/** Where the tracks are, for the view's label column (its names are page text, not canvas pixels). */
export interface EngineLayout {
  tracks: Track[];
  gutter: number;
  /** The canvas's height: the tracks', or the view's when taller. */
  height: number;
  /** The least height its tracks fit in (the counters squeezed, the allocations at their minimum). */
  minHeight: number;
}

/** How a view sits among others on one time axis (a comparison), and how its time is drawn. */
export interface EngineAxis {
  /** The time the window may cover, at least the timeline's own (the longer of two compared). */
  extentUs: number;
  /** Idle gaps broken (core/memory/time-warp.ts): the timeline given is already in display time. */
  warp: TimeWarp;
  /** The label column's least width (the wider of two compared, so their plots line up). */
  minGutter: number;
  tracks: TrackOptions;
}

/** What a Timeline needs before its first frame: computed once per timeline, kept while it is shown. */
interface Prepared {
  timeline: Timeline;
  layout: ActiveLayout;
  colourByPosition: Uint8Array;
  address: AddressLayout | null;
  spanIndex: SpanIndex;
  counterScales: number[];
  id: number;
}

let nextId = 1;

/** The theme's allocation palette (core/memory/timeline-colours.ts), channel by channel in 0..1. */
function parsePalette(colours: readonly string[]): Palette {
  const p: Palette = { r: new Float32Array(PALETTE_SIZE), g: new Float32Array(PALETTE_SIZE), b: new Float32Array(PALETTE_SIZE) };
  for (let k = 0; k < PALETTE_SIZE; k++) {
    const hex = colours[k % colours.length]!;
    p.r[k] = parseInt(hex.slice(1, 3), 16) / 255;
    p.g[k] = parseInt(hex.slice(3, 5), 16) / 255;
    p.b[k] = parseInt(hex.slice(5, 7), 16) / 255;
  }
  return p;
}

/**
 * The timeline view's canvas: tracks drawn each frame from per-pixel buckets, the allocations area from
 * cached tiles (tile-cache.ts), the selection and hover outlined on top. Frames are drawn on demand (a
 * change, or tiles still to draw), never in a loop while nothing moves.
 */
export class TimelineEngine {
  private readonly ctx: CanvasRenderingContext2D;
  private prepared: Prepared | null = null;
  private tracks: Track[] = [];
  private win: TimeWindow = { startUs: 0, endUs: 1 };
  private width = 0;
  private viewHeight = 0;
  private dpr = 1;
  private colours: TimelineColours;
  private palette: Palette;
  private readonly tiles = new TileCache(MAX_TILES, TILE_COLS);
  private axis: EngineAxis = { extentUs: 0, warp: identityWarp(0), minGutter: 0, tracks: {} };
  private gutter = 150;
  private natural = 150;
  /** Called after every layout: where the tracks are, for the label column. */
  onLayout: ((layout: EngineLayout) => void) | null = null;
  private scratch: RasterScratch | null = null;
  private raf = 0;
  private mode: AllocationMode = 'active';
  hover: TimelineTarget | null = null;
  selection: TimelineTarget | null = null;
  /** A drag-select under way: from and to, in CSS pixels across the plot. */
  range: { from: number; to: number } | null = null;
  private outline: { index: number; time: Float64Array; offset: Float64Array; end: number } | null = null;
  /** Frames drawn, tiles still missing after the last frame, and what the last frame cost. */
  readonly stats = { frames: 0, pendingTiles: 0, lastFrameMs: 0 };

  constructor(
    private readonly canvas: HTMLCanvasElement,
    colours: TimelineColours,
    private readonly onWindow: (w: TimeWindow) => void,
  ) {
    this.ctx = canvas.getContext('2d', { alpha: false })!;
    this.colours = colours;
    this.palette = parsePalette(colours.palette);
  }

  get timeline(): Timeline | null {
    return this.prepared?.timeline ?? null;
  }

  get window(): TimeWindow {
    return this.win;
  }

  get layout(): ActiveLayout | null {
    return this.prepared?.layout ?? null;
  }

  get allocationMode(): AllocationMode {
    return this.mode;
  }

  /** The canvas height the tracks need (the view scrolls when it is taller than its panel). */
  get contentHeight(): number {
    return tracksHeight(this.tracks);
  }

  /** The least height the tracks fit in: what the view's box is kept to, so that the page scrolls instead of squeezing the plot. */
  get minHeight(): number {
    return this.prepared ? minTracksHeight(this.prepared.timeline, this.axis.tracks) : 0;
  }

  /** The time windows may cover: the timeline's, or a longer one's it is compared with. */
  get extentUs(): number {
    return Math.max(this.prepared?.timeline.durationUs ?? 0, this.axis.extentUs);
  }

  get warp(): TimeWarp {
    return this.axis.warp;
  }

  setAxis(axis: EngineAxis): void {
    const was = this.axis;
    this.axis = axis;
    if (was.extentUs !== axis.extentUs && this.prepared) this.win = clampWindow(this.win, this.extentUs);
    this.relayout();
  }

  /**
   * Shows a timeline. `follow`: a newer version of the one shown (monitoring, a run that goes on) keeps the
   * window, and keeps following the end when the window was at the end.
   */
  setTimeline(timeline: Timeline | null, follow = false): void {
    if (timeline === this.prepared?.timeline) return;
    const before = this.prepared?.timeline ?? null;
    if (!timeline) {
      this.prepared = null;
      this.tracks = [];
      this.requestDraw();
      return;
    }
    const layout = buildActiveLayout(timeline.allocations);
    this.prepared = {
      timeline,
      layout,
      colourByPosition: byPosition(layout, allocationColours(timeline)),
      address: this.mode === 'address' ? buildAddressLayout(timeline.allocations, layout) : null,
      spanIndex: buildSpanIndex(timeline.spans),
      counterScales: timeline.counters.map(counterScale),
      id: nextId++,
    };
    this.scratch = new RasterScratch(timeline.allocations.count);
    this.outline = null;
    if (follow && before) {
      const atEnd = this.win.endUs >= fullWindow(Math.max(before.durationUs, this.axis.extentUs)).endUs - 1e-6;
      const span = this.win.endUs - this.win.startUs;
      const end = fullWindow(this.extentUs).endUs;
      this.win = clampWindow(atEnd ? { startUs: end - span, endUs: end } : this.win, this.extentUs);
    } else {
      this.win = fullWindow(this.extentUs);
      this.selection = null;
      this.hover = null;
    }
    this.relayout();
    this.onWindow(this.win);
  }

  setColours(colours: TimelineColours): void {
    this.colours = colours;
    this.palette = parsePalette(colours.palette);
    this.requestDraw();
  }

  setMode(mode: AllocationMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    if (this.prepared && mode === 'address' && !this.prepared.address)
      this.prepared.address = buildAddressLayout(this.prepared.timeline.allocations, this.prepared.layout);
    this.outline = null;
    this.requestDraw();
  }

  resize(width: number, viewHeight: number, dpr: number): void {
    if (width === this.width && viewHeight === this.viewHeight && dpr === this.dpr) return;
    this.width = width;
    this.viewHeight = viewHeight;
    this.dpr = dpr;
    this.relayout();
  }

  private relayout(): void {
    this.tracks = this.prepared ? layoutTracks(this.prepared.timeline, this.viewHeight, this.axis.tracks) : [];
    this.ctx.font = LABEL_FONT;
    const natural = gutterWidth(
      this.tracks.map((t) => t.label),
      (text) => this.ctx.measureText(text).width,
      this.width,
    );
    this.natural = natural;
    this.gutter = Math.max(natural, Math.min(this.axis.minGutter, Math.floor(this.width / 2)));
    const height = Math.max(this.viewHeight, tracksHeight(this.tracks));
    const w = Math.max(1, Math.round(this.width * this.dpr));
    const h = Math.max(1, Math.round(height * this.dpr));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    this.canvas.style.width = `${this.width}px`;
    this.canvas.style.height = `${height}px`;
    this.onLayout?.({ tracks: this.tracks, gutter: this.gutter, height, minHeight: this.minHeight });
    this.requestDraw();
  }

  /** The label column's width this view would have alone: what a comparison lines its views up by. */
  get naturalGutter(): number {
    return this.natural;
  }

  get plotWidth(): number {
    return Math.max(1, this.width - this.gutter);
  }

  setWindow(w: TimeWindow): void {
    if (!this.prepared) return;
    const next = clampWindow(w, this.extentUs);
    if (next.startUs === this.win.startUs && next.endUs === this.win.endUs) return;
    this.win = next;
    this.onWindow(next);
    this.requestDraw();
  }

  setHover(target: TimelineTarget | null): void {
    if (sameTarget(target, this.hover)) return;
    this.hover = target;
    this.requestDraw();
  }

  setSelection(target: TimelineTarget | null): void {
    if (sameTarget(target, this.selection)) return;
    this.selection = target;
    this.requestDraw();
  }

  setRange(range: { from: number; to: number } | null): void {
    this.range = range;
    this.requestDraw();
  }

  requestDraw(): void {
    if (!this.raf) this.raf = requestAnimationFrame(() => this.draw());
  }

  destroy(): void {
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
    this.prepared = null;
  }

  // ------------------------------------------------------------------------------------- hit testing

  /** The x of the plot's left edge, and its width, in CSS pixels. */
  get plotLeft(): number {
    return this.gutter;
  }

  trackAt(y: number): Track | null {
    return trackAt(this.tracks, y);
  }

  /** What is drawn at (x, y), CSS pixels on the canvas; null for empty space. */
  hitTest(x: number, y: number): TimelineTarget | null {
    const p = this.prepared;
    if (!p || x < this.gutter) return null;
    const track = trackAt(this.tracks, y);
    if (!track) return null;
    const t = xToTime(this.win, this.plotWidth, x - this.gutter);
    const usPerPx = (this.win.endUs - this.win.startUs) / this.plotWidth;
    switch (track.kind) {
      case 'allocations': {
        const level = this.level();
        const usPerCol = tileUsPerCol(p.timeline.durationUs, level);
        const ta = Math.floor(t / usPerCol) * usPerCol;
        const frac = (track.y + track.height - y) / track.height;
        if (this.mode === 'address' && p.address) {
          const index = hitAddress(p.address, p.layout, ta, ta + usPerCol, frac * p.address.height);
          return index >= 0 ? { kind: 'allocation', index } : null;
        }
        const index = hitActive(p.layout, ta, ta + usPerCol, frac * this.yMax());
        return index >= 0 ? { kind: 'allocation', index } : null;
      }
      case 'spans': {
        const index = hitSpan(p.spanIndex, p.timeline.spans, track.lane, t, usPerPx * 3);
        return index >= 0 ? { kind: 'span', index } : null;
      }
      case 'markers': {
        let best = -1;
        let distance = 6 * usPerPx;
        p.timeline.markers.forEach((m, i) => {
          const d = Math.abs(m.timeUs - t);
          if (d <= distance) {
            best = i;
            distance = d;
          }
        });
        return best >= 0 ? { kind: 'marker', index: best } : null;
      }
      case 'counter': {
        const counter = p.timeline.counters.indexOf(track.counter);
        return counter >= 0 && t >= 0 && t <= p.timeline.durationUs ? { kind: 'counter', counter, timeUs: t } : null;
      }
      default:
        return null;
    }
  }

  // ------------------------------------------------------------------------------------- drawing

  private level(): number {
    const p = this.prepared!;
    const usPerDevicePx = (this.win.endUs - this.win.startUs) / (this.plotWidth * this.dpr);
    return levelFor(p.timeline.durationUs, usPerDevicePx);
  }

  private yMax(): number {
    const p = this.prepared!;
    if (this.mode === 'address' && p.address) return p.address.height;
    return Math.max(1, p.layout.peakBytes * HEADROOM);
  }

  private draw(): void {
    this.raf = 0;
    const started = performance.now();
    const { ctx, colours: c } = this;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = c.background;
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    const p = this.prepared;
    if (!p || this.width <= this.gutter) return;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    const height = Math.max(this.viewHeight, tracksHeight(this.tracks));
    const plot: Plot = { x: this.gutter, width: this.plotWidth, dpr: this.dpr, win: this.win, height, warp: this.axis.warp };

    const area = this.tracks.find((t): t is Track & { kind: 'allocations' } => t.kind === 'allocations');
    const axis = this.tracks.find((t) => t.kind === 'axis');
    if (axis) {
      ctx.save();
      ctx.beginPath();
      ctx.rect(plot.x, 0, plot.width, height);
      ctx.clip();
      drawAxis(ctx, axis, plot, c, 'lines');
      ctx.restore();
    }
    let pending = 0;
    if (area) {
      drawByteGrid(ctx, area, this.mode === 'active' ? this.yMax() : 0, plot, c, 'lines');
      pending = this.drawAllocations(area, plot, started + TILE_BUDGET_MS);
    }

    ctx.save();
    ctx.beginPath();
    ctx.rect(plot.x, 0, plot.width, height);
    ctx.clip();
    for (const track of this.tracks) {
      if (track.kind === 'axis') drawAxis(ctx, track, plot, c, 'labels');
      else if (track.kind === 'counter')
        drawCounter(ctx, track, p.counterScales[p.timeline.counters.indexOf(track.counter)] ?? 1, p.timeline.durationUs, plot, c);
      else if (track.kind === 'spans') drawSpans(ctx, track, p.timeline, p.spanIndex, plot, c);
    }
    if (area) this.drawOutlines(area, plot);
    const markers = this.tracks.find((t) => t.kind === 'markers');
    if (markers) drawMarkers(ctx, markers, p.timeline, plot, c, this.selection?.kind === 'marker' ? this.selection.index : -1);
    this.drawSpanSelection(plot);
    // The range being dragged, else the range selected (in time, so it stays put as the view zooms and pans).
    const sel = this.selection?.kind === 'range' ? this.selection : null;
    const band = this.range ?? (sel ? { from: timeToX(this.win, plot.width, sel.startUs), to: timeToX(this.win, plot.width, sel.endUs) } : null);
    if (band) {
      ctx.fillStyle = c.range;
      const a = Math.min(band.from, band.to);
      ctx.fillRect(plot.x + a, 0, Math.max(1, Math.abs(band.to - band.from)), height);
    }
    ctx.restore();
    drawGutter(ctx, this.tracks, this.gutter, height, c);
    if (area && this.mode === 'address' && p.address) drawAddressLabels(ctx, area, p.address, plot, c);
    else if (area) drawByteGrid(ctx, area, this.yMax(), plot, c, 'labels');
    this.drawBreaksOver(plot, height);

    this.stats.frames++;
    this.stats.pendingTiles = pending;
    this.stats.lastFrameMs = performance.now() - started;
    // what tests and the bench wait on: every tile in view drawn at its own level
    const settled = pending === 0 ? 'yes' : 'no';
    if (this.canvas.dataset['tilesSettled'] !== settled) this.canvas.dataset['tilesSettled'] = settled;
    if (pending > 0) this.requestDraw();
  }

  /** Draws the tiles in view (finishing missing ones within the budget, standing in coarser ones meanwhile); returns how many are missing. */
  private drawAllocations(area: Track, plot: Plot, deadline: number): number {
    const p = this.prepared!;
    const { ctx } = this;
    const rows = Math.max(1, Math.round(area.height * this.dpr));
    const duration = p.timeline.durationUs;
    const level = this.level();
    const yMax = this.yMax();
    this.tiles.configure(`${p.id}:${this.mode}:${rows}:${yMax}:${this.colours.palette.join()}`);
    const needed = tilesFor(this.win, duration, level);
    // the whole timeline's tile first: every later frame has something to stand in while finer tiles are drawn
    const wanted = level > 0 && !this.tiles.has(tileKey({ level: 0, index: 0 })) ? [{ level: 0, index: 0 }, ...needed] : needed;
    this.tiles.work(wanted, rows, (key, pixels) => this.raster(key, rows, yMax, pixels), deadline);

    ctx.save();
    ctx.beginPath();
    ctx.rect(plot.x, area.y, plot.width, area.height);
    ctx.clip();
    let missing = 0;
    for (const key of needed) {
      const tileUs = tileUsPerCol(duration, key.level) * TILE_COLS;
      const x0 = snap(plot, plot.x + timeToX(this.win, plot.width, key.index * tileUs));
      const x1 = snap(plot, plot.x + timeToX(this.win, plot.width, (key.index + 1) * tileUs));
      const tile = this.tiles.get(tileKey(key));
      if (tile) {
        ctx.imageSmoothingEnabled = x1 - x0 < TILE_COLS / this.dpr;
        ctx.drawImage(tile, 0, 0, TILE_COLS, rows, x0, area.y, x1 - x0, area.height);
        continue;
      }
      missing++;
      // a coarser tile of the same time, scaled up, until this one is drawn
      for (let up = 1; up <= key.level; up++) {
        const parent = this.tiles.get(tileKey({ level: key.level - up, index: Math.floor(key.index / 2 ** up) }));
        if (!parent) continue;
        const share = TILE_COLS / 2 ** up;
        const sx = (key.index - Math.floor(key.index / 2 ** up) * 2 ** up) * share;
        ctx.imageSmoothingEnabled = false;
        ctx.drawImage(parent, sx, 0, share, rows, x0, area.y, x1 - x0, area.height);
        break;
      }
    }
    ctx.restore();
    return missing;
  }

  private raster(key: TileKey, rows: number, yMax: number, pixels: Uint8ClampedArray) {
    const p = this.prepared!;
    const usPerCol = tileUsPerCol(p.timeline.durationUs, key.level);
    const target = { cols: TILE_COLS, rows, t0: key.index * usPerCol * TILE_COLS, usPerCol, bytesPerRow: yMax / rows, pixels };
    if (this.mode === 'address' && p.address) return new AddressRaster(p.address, p.layout, p.colourByPosition, this.palette, target);
    return new ActiveRaster(p.layout, p.colourByPosition, this.palette, target, this.scratch!);
  }

  /** The selected and the hovered allocation, outlined over their whole life. */
  private drawOutlines(area: Track, plot: Plot): void {
    const p = this.prepared!;
    const { ctx } = this;
    ctx.save();
    ctx.beginPath();
    ctx.rect(plot.x, area.y, plot.width, area.height);
    ctx.clip();
    const yMax = this.yMax();
    const y = (v: number) => area.y + area.height - (v / yMax) * area.height;
    const x = (t: number) => plot.x + timeToX(this.win, plot.width, t);
    for (const [target, colour, width] of [
      [this.hover, this.colours.hover, 1.5],
      [this.selection, this.colours.selection, 2],
    ] as const) {
      if (target?.kind !== 'allocation') continue;
      const a = p.timeline.allocations;
      const size = Math.max(a.size[target.index]!, 0);
      ctx.strokeStyle = colour;
      ctx.lineWidth = width;
      ctx.beginPath();
      if (this.mode === 'address' && p.address) {
        const { y0, y1 } = p.address.span(a.address[target.index]!, size);
        const x0 = x(a.start[target.index]!);
        const x1 = Math.max(x0 + 2, x(Math.min(a.end[target.index]!, p.timeline.durationUs)));
        ctx.rect(x0, y(y1), x1 - x0, Math.max(2, y(y0) - y(y1)));
      } else {
        // one polygon, decimated to the device pixels: a few thousand points however often it dropped
        const o = this.outlineOf(target.index);
        const poly = outlinePolygon({ ...o, end: Math.min(o.end, p.timeline.durationUs) }, size, this.win.startUs, this.win.endUs, plot.width, 1 / this.dpr);
        for (let k = 0; k < poly.x.length; k++) {
          const px = plot.x + poly.x[k]!;
          const py = y(poly.y[k]!);
          if (k === 0) ctx.moveTo(px, py);
          else ctx.lineTo(px, py);
        }
        ctx.closePath();
      }
      ctx.stroke();
    }
    ctx.restore();
  }

  /** The idle gaps broken on the axis: shaded across every track, their real length said on the axis. */
  private drawBreaksOver(plot: Plot, height: number): void {
    if (plot.warp.breaks.length === 0) return;
    const axis = this.tracks.find((t) => t.kind === 'axis') ?? null;
    this.ctx.save();
    this.ctx.beginPath();
    this.ctx.rect(plot.x, 0, plot.width, height);
    this.ctx.clip();
    drawBreaks(this.ctx, axis, plot, this.colours);
    this.ctx.restore();
  }

  private drawSpanSelection(plot: Plot): void {
    const p = this.prepared!;
    const s = this.selection?.kind === 'span' ? this.selection.index : this.hover?.kind === 'span' ? this.hover.index : -1;
    if (s < 0) return;
    const lane = this.tracks.find((t) => t.kind === 'spans' && t.lane === p.timeline.spans.lane[s]);
    if (!lane) return;
    const x0 = plot.x + timeToX(this.win, plot.width, p.timeline.spans.start[s]!);
    const x1 = Math.max(x0 + 2, plot.x + timeToX(this.win, plot.width, p.timeline.spans.end[s]!));
    this.ctx.strokeStyle = this.selection?.kind === 'span' ? this.colours.selection : this.colours.hover;
    this.ctx.lineWidth = 2;
    this.ctx.strokeRect(x0, lane.y + 1, x1 - x0, lane.height - 2);
  }

  private outlineOf(index: number) {
    if (this.outline?.index !== index) {
      const layout = this.prepared!.layout;
      this.outline = { index, ...activeOutline(layout, positionOf(layout, index)) };
    }
    return this.outline;
  }
}

export function sameTarget(a: TimelineTarget | null, b: TimelineTarget | null): boolean {
  if (a === b) return true;
  if (!a || !b || a.kind !== b.kind) return false;
  if (a.kind === 'counter' && b.kind === 'counter') return a.counter === b.counter && a.timeUs === b.timeUs;
  if (a.kind === 'range' && b.kind === 'range') return a.startUs === b.startUs && a.endUs === b.endUs;
  return (a as { index: number }).index === (b as { index: number }).index;
}

export { allocationAt, MAX_LEVEL };
export type { TimelineTarget };
