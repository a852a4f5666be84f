/**
 * How the view stacks its tracks, top to bottom: the time axis, the markers, the counters (the device's
 * used and free memory, each process, the run's allocated and reserved bytes), the allocations area (which
 * takes the height left), then one lane per kind of span that occurs. Pure: heights in CSS pixels.
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
export const LANE_HEIGHT = 16;
export const MIN_ALLOCATIONS_HEIGHT = 140;
/** The column of track names left of the plot. */
export const GUTTER_WIDTH = 150;

const GROUP_ORDER = { device: 0, process: 1, allocated: 2, reserved: 3 } as const;

const LANE_NAMES: Record<(typeof SPAN_LANES)[number], string> = {
  kernel: 'Kernels',
  copy: 'Copies',
  memset: 'Memsets',
  sync: 'Syncs',
  module: 'Module loads',
};

/** The counter's track name, with its flag's text when it has one ("pid 4242 — exited, still holds memory"). */
export function counterTrackLabel(c: TimelineCounter): string {
  return c.flag ? `${c.label} — ${c.flag.text}` : c.label;
}

/** The tracks for a view `height` pixels tall; the allocations area grows to fill what is left (the sum may exceed height: the view scrolls). */
export function layoutTracks(t: Timeline, height: number): Track[] {
  const tracks: Track[] = [];
  let y = 0;
  tracks.push({ kind: 'axis', y, height: AXIS_HEIGHT, label: 'Time' });
  y += AXIS_HEIGHT;
  tracks.push({ kind: 'markers', y, height: MARKERS_HEIGHT, label: 'Markers' });
  y += MARKERS_HEIGHT;
  const counters = [...t.counters].sort((a, b) => GROUP_ORDER[a.group] - GROUP_ORDER[b.group]);
  for (const counter of counters) {
    tracks.push({ kind: 'counter', y, height: COUNTER_HEIGHT, label: counterTrackLabel(counter), counter });
    y += COUNTER_HEIGHT;
  }
  const lanes: number[] = [];
  const seen = new Uint8Array(SPAN_LANES.length);
  for (let i = 0; i < t.spans.count; i++) seen[t.spans.lane[i]!] = 1;
  seen.forEach((s, lane) => s && lanes.push(lane));
  const lanesHeight = lanes.length * LANE_HEIGHT;
  if (t.allocations.count > 0) {
    const area = Math.max(MIN_ALLOCATIONS_HEIGHT, height - y - lanesHeight);
    tracks.push({ kind: 'allocations', y, height: area, label: 'Allocations' });
    y += area;
  }
  for (const lane of lanes) {
    tracks.push({ kind: 'spans', y, height: LANE_HEIGHT, label: LANE_NAMES[SPAN_LANES[lane]!], lane });
    y += LANE_HEIGHT;
  }
  return tracks;
}

export const tracksHeight = (tracks: Track[]): number => tracks.reduce((h, t) => Math.max(h, t.y + t.height), 0);

export const trackAt = (tracks: Track[], y: number): Track | null => tracks.find((t) => y >= t.y && y < t.y + t.height) ?? null;
