import { formatBytes } from '../../../core/format';
import type { AddressLayout } from '../../../core/memory/address-layout';
import { counterColumns, forEachSpanIn, spanColumns, type SpanIndex } from '../../../core/memory/timeline-lod';
import type { Track } from '../../../core/memory/timeline-tracks';
import { warpedTicks, type TimeWarp } from '../../../core/memory/time-warp';
import { formatDuration, niceStep, timeToX, type TimeWindow } from '../../../core/memory/timeline-viewport';
import { SPAN_LANES, type Timeline, type TimelineCounter } from '../../../core/memory/timeline';
import type { TimelineColours } from '../../layout/chart-colours';

/** Where the plot is on the canvas (CSS pixels) and how fine its pixels are. */
export interface Plot {
  x: number;
  width: number;
  dpr: number;
  win: TimeWindow;
  /** Everything below the axis: markers draw their lines over it. */
  height: number;
  /** The axis's breaks: times in `win` are display times. */
  warp: TimeWarp;
}

const FONT = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
/** The track names' font (they are page text in the label column; the canvas measures them to size it). */
export const LABEL_FONT = '12px system-ui, -apple-system, "Segoe UI", sans-serif';
/** The top of the allocations area's label column holds the view's own controls: no byte labels there. */
export const TOOLS_HEIGHT = 96;

export const plotX = (plot: Plot, tUs: number) => plot.x + timeToX(plot.win, plot.width, tUs);

/** Snaps to the device pixel grid, so neighbouring tiles and rectangles meet without a seam. */
export const snap = (plot: Plot, x: number) => Math.round(x * plot.dpr) / plot.dpr;

/** The label column's ground and the rules between its tracks (the names themselves are page text over it). */
export function drawGutter(ctx: CanvasRenderingContext2D, tracks: Track[], gutter: number, height: number, c: TimelineColours): void {
  ctx.fillStyle = c.gutter;
  ctx.fillRect(0, 0, gutter, height);
  for (const t of tracks) {
    if (t.kind === 'axis' || t.kind === 'markers') continue;
    ctx.fillStyle = c.grid;
    ctx.fillRect(0, t.y + t.height - 0.5, gutter, 0.5);
  }
}

/** Writes text cut to fit a width, with an ellipsis. */
export function fitText(ctx: CanvasRenderingContext2D, text: string, x: number, y: number, width: number): void {
  if (width <= 8) return;
  if (ctx.measureText(text).width <= width) {
    ctx.fillText(text, x, y);
    return;
  }
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`${text.slice(0, mid)}…`).width <= width) lo = mid;
    else hi = mid - 1;
  }
  if (lo > 0) ctx.fillText(`${text.slice(0, lo)}…`, x, y);
}

/** The time axis: its grid lines (drawn first, under everything) or its labels and rule; each stretch between breaks to its own scale. */
export function drawAxis(ctx: CanvasRenderingContext2D, track: Track, plot: Plot, c: TimelineColours, part: 'lines' | 'labels'): void {
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'left';
  const { ticks, breaks } = warpedTicks(plot.warp, plot.win, plot.width);
  // a label that would run into a break's own label is left out
  const taken = breaks.map((b) => breakLabelBox(ctx, b, plot));
  for (const tick of ticks) {
    const x = snap(plot, plotX(plot, tick.us));
    if (part === 'lines') {
      ctx.fillStyle = c.grid;
      ctx.fillRect(x, track.y + track.height - 6, 1 / plot.dpr, plot.height);
      continue;
    }
    const w = ctx.measureText(tick.label).width;
    if (taken.some((b) => x + 3 < b.x1 && x + 3 + w > b.x0)) continue;
    ctx.fillStyle = c.muted;
    ctx.fillText(tick.label, x + 3, track.y + track.height / 2 - 2);
  }
  if (part === 'labels') {
    ctx.fillStyle = c.grid;
    ctx.fillRect(plot.x, track.y + track.height - 0.5, plot.width, 0.5);
  }
}

const breakText = (b: { realUs: number }) => `${formatDuration(b.realUs)} idle`;

/** Where a break's label goes on the axis: centred on the break, however narrow the break is drawn. */
function breakLabelBox(ctx: CanvasRenderingContext2D, b: { startUs: number; endUs: number; realUs: number }, plot: Plot): { x0: number; x1: number } {
  const w = ctx.measureText(breakText(b)).width + 8;
  const mid = (plotX(plot, b.startUs) + plotX(plot, b.endUs)) / 2;
  // kept inside the plot: a break at either end is labelled inward
  const x0 = Math.max(plot.x, Math.min(plot.x + plot.width - w, mid - w / 2));
  return { x0, x1: x0 + w };
}

/**
 * The breaks in view: each a band across every track in the gutter's colour, edged by two zigzags (an axis break
 * as charts draw one), with how long it really lasted written on the axis.
 */
export function drawBreaks(ctx: CanvasRenderingContext2D, axis: Track | null, plot: Plot, c: TimelineColours): void {
  const { breaks } = warpedTicks(plot.warp, plot.win, plot.width);
  ctx.font = FONT;
  let labelledTo = -Infinity;
  for (const b of breaks) {
    const x0 = plotX(plot, b.startUs);
    const x1 = plotX(plot, b.endUs);
    const top = axis ? axis.y + axis.height : 0;
    ctx.globalAlpha = 0.55;
    ctx.fillStyle = c.gutter;
    ctx.fillRect(x0, top, x1 - x0, plot.height - top);
    ctx.globalAlpha = 1;
    ctx.strokeStyle = c.muted;
    ctx.lineWidth = 1;
    for (const x of [x0, x1]) {
      ctx.beginPath();
      for (let y = top, k = 0; y < plot.height; y += 4, k++) ctx.lineTo(x + (k % 2 ? 2 : -2), y);
      ctx.stroke();
    }
    const box = breakLabelBox(ctx, b, plot);
    // two breaks close together: only the first is labelled
    if (!axis || box.x0 < labelledTo) continue;
    labelledTo = box.x1;
    ctx.fillStyle = c.gutter;
    ctx.fillRect(box.x0, axis.y + 2, box.x1 - box.x0, axis.height - 6);
    ctx.fillStyle = c.text;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(breakText(b), (box.x0 + box.x1) / 2, axis.y + axis.height / 2 - 1);
    ctx.textAlign = 'left';
  }
}

/** Byte ticks for a track `height` tall showing 0..max: 1, 2 or 5 × a power of 1024's unit. */
export function byteTicks(max: number, height: number, minGapPx = 28): number[] {
  if (!(max > 0) || height < minGapPx) return [];
  let unit = 1;
  while (unit * 1024 <= max / 2) unit *= 1024;
  const step = niceStep(((max / height) * minGapPx) / unit) * unit;
  const out: number[] = [];
  for (let v = step; v < max && out.length < 50; v += step) out.push(v);
  return out;
}

/** The allocations area's byte scale: its lines (drawn under the allocations) or its labels (in the gutter). */
export function drawByteGrid(ctx: CanvasRenderingContext2D, track: Track, max: number, plot: Plot, c: TimelineColours, part: 'lines' | 'labels'): void {
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  for (const v of byteTicks(max, track.height)) {
    const y = snap(plot, track.y + track.height - (v / max) * track.height);
    if (part === 'labels' && y < track.y + TOOLS_HEIGHT) continue;
    if (part === 'lines') {
      ctx.fillStyle = c.grid;
      ctx.fillRect(plot.x, y, plot.width, 1 / plot.dpr);
    } else {
      ctx.fillStyle = c.muted;
      ctx.fillText(formatBytes(v), plot.x - 4, y);
    }
  }
  ctx.textAlign = 'left';
}

/** The address view's scale: an address every ~60 pixels (none in a squeezed gap), in the gutter. */
export function drawAddressLabels(ctx: CanvasRenderingContext2D, track: Track, address: AddressLayout, plot: Plot, c: TimelineColours): void {
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  ctx.fillStyle = c.muted;
  for (let y = track.height - 10; y > TOOLS_HEIGHT; y -= 60) {
    const at = address.addressAt(((track.height - y) / track.height) * address.height);
    if (Number.isNaN(at)) continue;
    ctx.fillText(`0x${Math.floor(at).toString(16)}`, plot.x - 4, track.y + y);
  }
  ctx.textAlign = 'left';
}

/** The scale a counter is drawn against: its capacity when known, else its own largest value. */
export function counterScale(counter: TimelineCounter): number {
  let max = counter.capacity ?? 0;
  for (let i = 0; i < counter.value.length; i++) if (counter.value[i]! > max) max = counter.value[i]!;
  return max > 0 ? max * 1.05 : 1;
}

/**
 * A counter as Perfetto draws one: per device pixel column the area up to its greatest value, and a darker
 * bar from its least to its greatest, so a spike narrower than a pixel still shows.
 */
export function drawCounter(
  ctx: CanvasRenderingContext2D,
  track: Track & { kind: 'counter' },
  scale: number,
  endUs: number,
  plot: Plot,
  c: TimelineColours,
): void {
  const counter = track.counter;
  const cols = Math.max(1, Math.round(plot.width * plot.dpr));
  const usPerCol = (plot.win.endUs - plot.win.startUs) / cols;
  const { min, max, last } = counterColumns(counter, plot.win.startUs, usPerCol, cols, endUs);
  const top = track.y + 4;
  const h = track.height - 6;
  const base = top + h;
  const y = (v: number) => base - (Math.min(v, scale) / scale) * h;
  const colour = c.counter[counter.group];
  const w = 1 / plot.dpr;
  ctx.globalAlpha = 0.3;
  ctx.fillStyle = colour;
  ctx.beginPath();
  let open = false;
  for (let col = 0; col < cols; col++) {
    const x = plot.x + col * w;
    const v = max[col]!;
    if (Number.isNaN(v)) {
      if (open) {
        ctx.lineTo(x, base);
        open = false;
      }
      continue;
    }
    if (!open) {
      ctx.moveTo(x, base);
      open = true;
    }
    ctx.lineTo(x, y(v));
    ctx.lineTo(x + w, y(v));
  }
  if (open) ctx.lineTo(plot.x + cols * w, base);
  ctx.fill();
  ctx.globalAlpha = 1;
  // least..greatest, and the value each column ends on
  for (let col = 0; col < cols; col++) {
    const lo = min[col]!;
    if (Number.isNaN(lo)) continue;
    const yHi = y(max[col]!);
    const yLo = y(lo);
    const yLast = y(last[col]!);
    ctx.fillRect(plot.x + col * w, Math.min(yHi, yLast - 1), w, Math.max(1.5, yLo - yHi + 1));
  }
  if (counter.capacity !== undefined && counter.capacity <= scale) {
    ctx.fillStyle = c.capacity;
    const yc = snap(plot, y(counter.capacity));
    for (let x = plot.x; x < plot.x + plot.width; x += 8) ctx.fillRect(x, yc, 4, 1);
  }
  ctx.fillStyle = c.grid;
  ctx.fillRect(plot.x, track.y + track.height - 0.5, plot.width, 0.5);
}

/**
 * A lane of spans: every device pixel column its spans touch is shaded by the share they cover (at least a
 * faint mark, so a kernel far narrower than a pixel is never lost), and spans wide enough are named.
 */
export function drawSpans(
  ctx: CanvasRenderingContext2D,
  track: Track & { kind: 'spans' },
  t: Timeline,
  index: SpanIndex,
  plot: Plot,
  c: TimelineColours,
): void {
  const cols = Math.max(1, Math.round(plot.width * plot.dpr));
  const usPerCol = (plot.win.endUs - plot.win.startUs) / cols;
  const lanes = SPAN_LANES.length;
  const { busy, count } = spanColumns(index, t.spans, lanes, plot.win.startUs, usPerCol, cols);
  const w = 1 / plot.dpr;
  const y = track.y + 2;
  const h = track.height - 4;
  ctx.fillStyle = c.lane;
  const row = track.lane * cols;
  // runs of equal shade become one rectangle
  let runStart = -1;
  let runAlpha = 0;
  const flush = (end: number) => {
    if (runStart >= 0 && runAlpha > 0) {
      ctx.globalAlpha = runAlpha;
      ctx.fillRect(plot.x + runStart * w, y, (end - runStart) * w, h);
    }
  };
  for (let col = 0; col <= cols; col++) {
    const alpha = col < cols && count[row + col]! > 0 ? Math.max(0.35, busy[row + col]!) : 0;
    const quantised = Math.round(alpha * 20) / 20;
    if (quantised !== runAlpha || col === cols) {
      flush(col);
      runStart = col;
      runAlpha = quantised;
    }
  }
  ctx.globalAlpha = 1;
  // names where a span has room for them
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.fillStyle = c.background;
  const minUs = (60 / plot.width) * (plot.win.endUs - plot.win.startUs);
  let named = 0;
  forEachSpanIn(index, t.spans, plot.win.startUs, plot.win.endUs, (s) => {
    if (named > 400 || t.spans.lane[s] !== track.lane || t.spans.end[s]! - t.spans.start[s]! < minUs) return;
    const x0 = Math.max(plot.x, plotX(plot, t.spans.start[s]!));
    const x1 = Math.min(plot.x + plot.width, plotX(plot, t.spans.end[s]!));
    const label = t.labels[t.spans.label[s]!];
    if (label && x1 - x0 > 40) {
      named++;
      fitText(ctx, label, x0 + 3, track.y + track.height / 2, x1 - x0 - 6);
    }
  });
}

const GLYPH: Record<'oom' | 'leak' | 'error' | 'peak', string> = { oom: '✖', leak: '●', error: '▲', peak: '◆' };

/** Markers: a glyph in their lane and a line down through every track. */
export function drawMarkers(ctx: CanvasRenderingContext2D, track: Track, t: Timeline, plot: Plot, c: TimelineColours, selected: number): void {
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'center';
  t.markers.forEach((m, i) => {
    const x = snap(plot, plotX(plot, m.timeUs));
    if (x < plot.x - 6 || x > plot.x + plot.width + 6) return;
    const colour = c.marker[m.kind];
    ctx.fillStyle = colour;
    ctx.globalAlpha = i === selected ? 0.9 : 0.45;
    ctx.fillRect(x, track.y + track.height, i === selected ? 2 : 1, plot.height - track.height);
    ctx.globalAlpha = 1;
    ctx.fillText(GLYPH[m.kind], x, track.y + track.height / 2);
  });
  ctx.textAlign = 'left';
}
