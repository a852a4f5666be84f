/**
 * The time window the timeline view shows, and how zoom and pan move it: pure arithmetic, so that the
 * mouse, the keyboard and the tests move it the same way. Times are the Timeline's (µs after its origin).
 */

export interface TimeWindow {
  startUs: number;
  endUs: number;
}

/** The narrowest window: a nanosecond across the whole view is already finer than any clock we read. */
export const MIN_SPAN_US = 0.001;

/** The whole timeline, with a small margin either side so its first and last moments are not on the edge. */
export function fullWindow(durationUs: number): TimeWindow {
  const span = Math.max(durationUs, 1);
  const margin = span * 0.01;
  return { startUs: -margin, endUs: span + margin };
}

/** Keeps a window inside the full one, no narrower than MIN_SPAN_US; a window wider than the full one becomes it. */
export function clampWindow(w: TimeWindow, durationUs: number): TimeWindow {
  const full = fullWindow(durationUs);
  let span = Math.max(MIN_SPAN_US, w.endUs - w.startUs);
  if (!Number.isFinite(span) || span >= full.endUs - full.startUs) return full;
  let start = Number.isFinite(w.startUs) ? w.startUs : full.startUs;
  if (start < full.startUs) start = full.startUs;
  if (start + span > full.endUs) start = full.endUs - span;
  span = Math.max(span, MIN_SPAN_US);
  return { startUs: start, endUs: start + span };
}

/**
 * Zooms by `factor` (> 1 zooms in) keeping the time under `anchor` (0..1 across the view) where it is, as a
 * wheel over a point or a key at the view's centre does.
 */
export function zoomWindow(w: TimeWindow, factor: number, anchor: number, durationUs: number): TimeWindow {
  const span = w.endUs - w.startUs;
  const at = w.startUs + span * anchor;
  const next = Math.max(MIN_SPAN_US, span / factor);
  return clampWindow({ startUs: at - next * anchor, endUs: at - next * anchor + next }, durationUs);
}

/** Moves the window by a share of its own width (> 0 goes later). */
export function panWindow(w: TimeWindow, share: number, durationUs: number): TimeWindow {
  const span = w.endUs - w.startUs;
  return clampWindow({ startUs: w.startUs + span * share, endUs: w.endUs + span * share }, durationUs);
}

/** The window between two points of the view (0..1, in either order), as a drag-select makes. */
export function selectWindow(w: TimeWindow, from: number, to: number, durationUs: number): TimeWindow {
  const span = w.endUs - w.startUs;
  const a = Math.min(from, to);
  const b = Math.max(from, to);
  return clampWindow({ startUs: w.startUs + span * a, endUs: w.startUs + span * b }, durationUs);
}

/** A window of the given span centred on a time, as following a selection does. */
export function centreWindow(w: TimeWindow, atUs: number, durationUs: number, spanUs = w.endUs - w.startUs): TimeWindow {
  return clampWindow({ startUs: atUs - spanUs / 2, endUs: atUs + spanUs / 2 }, durationUs);
}

export const timeToX = (w: TimeWindow, width: number, tUs: number): number => ((tUs - w.startUs) / (w.endUs - w.startUs)) * width;
export const xToTime = (w: TimeWindow, width: number, x: number): number => w.startUs + (x / width) * (w.endUs - w.startUs);

// ---------------------------------------------------------------------------------------------- tiles

/**
 * The allocations area is drawn in tiles of TILE_COLS columns, at levels of detail that halve: level 0 is
 * the whole timeline in one tile; level L has 2^L tiles. A view uses the level whose columns are at least as
 * fine as its own pixels (so a tile is only ever scaled down, by less than half), and tiles already drawn
 * serve every later frame: panning and zooming redraw from them.
 */
export const TILE_COLS = 256;
/** Past this the arithmetic of tile indices would lose precision; deeper zoom reuses it (scaled up). */
export const MAX_LEVEL = 40;

export interface TileKey {
  level: number;
  index: number;
}

export function tileUsPerCol(durationUs: number, level: number): number {
  return Math.max(durationUs, 1) / TILE_COLS / 2 ** level;
}

/** The level whose columns are no wider than `usPerPx` (device pixels). */
export function levelFor(durationUs: number, usPerPx: number): number {
  if (!(usPerPx > 0)) return 0;
  const level = Math.ceil(Math.log2(Math.max(durationUs, 1) / TILE_COLS / usPerPx) - 1e-9);
  return Math.max(0, Math.min(MAX_LEVEL, level));
}

/** The tiles of a level that the window touches, nearest to the window's centre first (they are drawn first). */
export function tilesFor(w: TimeWindow, durationUs: number, level: number): TileKey[] {
  const tileUs = tileUsPerCol(durationUs, level) * TILE_COLS;
  const count = 2 ** level;
  const first = Math.max(0, Math.floor(w.startUs / tileUs));
  const last = Math.min(count - 1, Math.floor(w.endUs / tileUs));
  const centre = (w.startUs + w.endUs) / 2 / tileUs;
  const out: TileKey[] = [];
  for (let i = first; i <= last; i++) out.push({ level, index: i });
  return out.sort((a, b) => Math.abs(a.index + 0.5 - centre) - Math.abs(b.index + 0.5 - centre));
}

// ---------------------------------------------------------------------------------------------- the time axis

/** Tick spacing: 1, 2 or 5 × a power of ten microseconds, the first at least `minUs`. */
export function niceStep(minUs: number): number {
  if (!(minUs > 0)) return 1;
  const pow = 10 ** Math.floor(Math.log10(minUs));
  for (const m of [1, 2, 5, 10]) if (m * pow >= minUs) return m * pow;
  return 10 * pow;
}

export interface Tick {
  us: number;
  label: string;
}

/** Ticks at least `minGapPx` apart across a view `width` pixels wide, labelled in one unit chosen by the step. */
export function timeTicks(w: TimeWindow, width: number, minGapPx = 80): Tick[] {
  const span = w.endUs - w.startUs;
  if (!(span > 0) || !(width > 0)) return [];
  const step = niceStep((span / width) * minGapPx);
  // the step's unit, unless the times themselves would need more than four digits in it (deep in a long timeline)
  const magnitude = Math.max(Math.abs(w.startUs), Math.abs(w.endUs));
  const unit = magnitude / unitFor(step).us >= 1e4 ? unitFor(magnitude) : unitFor(step);
  const out: Tick[] = [];
  for (let k = Math.ceil(w.startUs / step); k * step <= w.endUs && out.length < 1000; k++) {
    const us = k * step;
    out.push({ us, label: formatWithUnit(us, unit, step) });
  }
  return out;
}

interface Unit {
  name: string;
  us: number;
}
const UNITS: Unit[] = [
  { name: 'ns', us: 0.001 },
  { name: 'µs', us: 1 },
  { name: 'ms', us: 1000 },
  { name: 's', us: 1e6 },
  { name: 'min', us: 60e6 },
];

function unitFor(stepUs: number): Unit {
  let unit = UNITS[0]!;
  for (const u of UNITS) if (stepUs >= u.us) unit = u;
  return unit;
}

/** A time in the unit, with as many decimals as the step needs (0.25 ms steps: "1.25 ms"). */
function formatWithUnit(us: number, unit: Unit, stepUs: number): string {
  const value = us / unit.us;
  const decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10(stepUs / unit.us) - 1e-9)));
  const text = value.toFixed(decimals);
  return `${text === '-0' ? '0' : text} ${unit.name}`;
}

/** A duration or a moment as a person reads it: "350 ns", "12.5 µs", "3.2 ms", "1.25 s", "2 min 5 s". */
export function formatDuration(us: number): string {
  if (!Number.isFinite(us)) return us > 0 ? 'until the end' : String(us);
  if (us === 0) return '0';
  const a = Math.abs(us);
  const sign = us < 0 ? '-' : '';
  // thresholds just under each unit's 1000, so that rounding to 3 figures never writes "1000 µs"
  if (a < 0.9995) return `${sign}${trim((a * 1000).toPrecision(3))} ns`;
  if (a < 999.5) return `${sign}${trim(a.toPrecision(3))} µs`;
  if (a < 999_500) return `${sign}${trim((a / 1000).toPrecision(3))} ms`;
  if (a < 59.95e6) return `${sign}${trim((a / 1e6).toPrecision(3))} s`;
  const minutes = Math.floor(a / 60e6);
  const seconds = Math.round((a - minutes * 60e6) / 1e6);
  return `${sign}${minutes} min${seconds ? ` ${seconds} s` : ''}`;
}

const trim = (text: string) => (text.includes('.') && !text.includes('e') ? text.replace(/0+$/, '').replace(/\.$/, '') : text);
