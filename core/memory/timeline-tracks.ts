/**
 * How the view stacks its tracks, top to bottom: the time axis (unless another view on the same axis draws it),
 * the markers, the counters (the device's used and free memory, each process, the run's allocated and reserved
 * bytes), the allocations area, then one lane per kind of span that occurs. The allocations area is what the view
 * is for: it takes the height left, and when that is short of its minimum the counters give up height first (down
 * to MIN_COUNTER_HEIGHT) before the view has to scroll. Pure: heights in CSS pixels.
 */
import { SPAN_LANES, type Timeline, type TimelineCounter } from './timeline';

export type Track =
  | { kind: 'axis'; y: number; height: number; label: string }
  | { kind: 'markers'; y: number; height: number; label: string }
  | { kind: 'counter'; y: number; height: number; label: string; counter: TimelineCounter }
  | { kind: 'allocations'; y: number; height: number; label: string }
  | { kind: 'spans'; y: number; height: number; label: string; lane: number };

export const AXIS_HEIGHT = 22;
export const MARKERS_HEIGHT = 18;
export const COUNTER_HEIGHT = 44;
/** A counter squeezed for the allocations' sake: still a readable step plot and one line of its name. */
export const MIN_COUNTER_HEIGHT = 26;
export const LANE_HEIGHT = 16;
/** The allocations area's least height, where nothing else asks for less (a comparison's two views do). */
export const MIN_ALLOCATIONS_HEIGHT = 300;
/** The column of track names left of the plot: its narrowest and widest (a longer name wraps, or is cut with its whole text as the title). */
export const MIN_GUTTER_WIDTH = 150;
export const MAX_GUTTER_WIDTH = 240;

const GROUP_ORDER = { device: 0, process: 1, allocated: 2, reserved: 3 } as const;

const LANE_NAMES: Record<(typeof SPAN_LANES)[number], string> = {
  kernel: 'Kernels',
  copy: 'Copies',
  memset: 'Memsets',
  sync: 'Syncs',
  module: 'Module loads',
  other: 'Other events',
};

/** The counter's track name, with its flag's text when it has one ("pid 4242 — exited, still holds memory"). */
export function counterTrackLabel(c: TimelineCounter): string {
  return c.flag ? `${c.label} — ${c.flag.text}` : c.label;
}

export interface TrackOptions {
  /** Draw the time axis (false: another view above, on the same axis, draws it). */
  axis?: boolean;
  /** The allocations area's least height. */
  minAllocations?: number;
}

/** The span lanes that occur, in SPAN_LANES order. */
function lanesOf(t: Timeline): number[] {
  const seen = new Uint8Array(SPAN_LANES.length);
  for (let i = 0; i < t.spans.count; i++) seen[t.spans.lane[i]!] = 1;
  const lanes: number[] = [];
  seen.forEach((s, lane) => s && lanes.push(lane));
  return lanes;
}

/** The counters' height each: full when the allocations keep their minimum, else less, down to MIN_COUNTER_HEIGHT. */
function counterHeight(count: number, height: number, fixed: number, minAllocations: number, hasAllocations: boolean): number {
  if (count === 0 || !hasAllocations) return COUNTER_HEIGHT;
  const spare = Math.floor((height - fixed - minAllocations) / count);
  return Math.max(MIN_COUNTER_HEIGHT, Math.min(COUNTER_HEIGHT, spare));
}

/** The tracks for a view `height` pixels tall; the allocations area grows to fill what is left (the sum may exceed height: the view scrolls). */
export function layoutTracks(t: Timeline, height: number, options: TrackOptions = {}): Track[] {
  const minAllocations = options.minAllocations ?? MIN_ALLOCATIONS_HEIGHT;
  const tracks: Track[] = [];
  let y = 0;
  if (options.axis !== false) {
    tracks.push({ kind: 'axis', y, height: AXIS_HEIGHT, label: 'Time' });
    y += AXIS_HEIGHT;
  }
  tracks.push({ kind: 'markers', y, height: MARKERS_HEIGHT, label: 'Markers' });
  y += MARKERS_HEIGHT;
  const lanes = lanesOf(t);
  const lanesHeight = lanes.length * LANE_HEIGHT;
  const hasAllocations = t.allocations.count > 0;
  const counters = [...t.counters].sort((a, b) => GROUP_ORDER[a.group] - GROUP_ORDER[b.group]);
  const each = counterHeight(counters.length, height, y + lanesHeight, minAllocations, hasAllocations);
  for (const counter of counters) {
    tracks.push({ kind: 'counter', y, height: each, label: counterTrackLabel(counter), counter });
    y += each;
  }
  if (hasAllocations) {
    const area = Math.max(minAllocations, height - y - lanesHeight);
    tracks.push({ kind: 'allocations', y, height: area, label: 'Allocations' });
    y += area;
  }
  for (const lane of lanes) {
    tracks.push({ kind: 'spans', y, height: LANE_HEIGHT, label: LANE_NAMES[SPAN_LANES[lane]!], lane });
    y += LANE_HEIGHT;
  }
  return tracks;
}

/** The least height the tracks fit in without scrolling: the counters squeezed, the allocations at their minimum. */
export function minTracksHeight(t: Timeline, options: TrackOptions = {}): number {
  return tracksHeight(layoutTracks(t, 0, options));
}

export const tracksHeight = (tracks: Track[]): number => tracks.reduce((h, t) => Math.max(h, t.y + t.height), 0);

export const trackAt = (tracks: Track[], y: number): Track | null => tracks.find((t) => y >= t.y && y < t.y + t.height) ?? null;

/**
 * The label column's width: the widest track name (as `measure` gives it, in CSS pixels) and its padding, within
 * MIN_GUTTER_WIDTH..MAX_GUTTER_WIDTH and never more than a third of the view; a longer name wraps or is cut.
 */
export function gutterWidth(labels: string[], measure: (text: string) => number, viewWidth: number): number {
  let widest = 0;
  for (const l of labels) widest = Math.max(widest, measure(l));
  const cap = Math.max(MIN_GUTTER_WIDTH, Math.min(MAX_GUTTER_WIDTH, Math.floor(viewWidth / 3)));
  return Math.min(cap, Math.max(MIN_GUTTER_WIDTH, Math.ceil(widest) + 16));
}
