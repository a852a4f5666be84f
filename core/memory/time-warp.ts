/**
 * A time axis that does not let one late event squeeze the rest. A snapshot whose allocations all happen in the
 * first half millisecond and whose OOM comes 47 ms later, drawn to scale, shows its activity in a sliver at the
 * left; zooming to the activity instead would push the OOM — the reason to look — off screen. So long idle
 * stretches (nothing allocated, freed, launched, copied, marked, and no counter changing) are *broken*: each
 * is drawn a few percent of the width wide and labelled with how long it really lasted, as a chart's axis
 * break is, and everything on either side keeps its own scale. Time inside a break still maps monotonically
 * (an allocation alive across it is drawn across it), so selections, hit tests and tiles work on the warped
 * axis unchanged and only what is said (axis labels, times in words) is mapped back.
 *
 * Pure: the warp is a piecewise-linear map from real to display time, slope 1 outside the breaks.
 */
import type { Timeline } from './timeline';
import { timeTicks } from './timeline-viewport';

export interface TimeBreak {
  /** Real time, µs after the timeline's origin. */
  realStart: number;
  realEnd: number;
  /** Display time: where the break is drawn. */
  displayStart: number;
  displayEnd: number;
}

export interface TimeWarp {
  /** In time order, never overlapping. Empty: the identity. */
  breaks: TimeBreak[];
  realDurationUs: number;
  displayDurationUs: number;
}

/** A gap is broken when, even after the longer gaps are broken, it would take more than this share of the width. */
export const IDLE_SHARE = 0.2;
/** The width each break is drawn at, as a share of the whole (display) width. */
export const BREAK_SHARE = 0.04;
/** A gap shorter than this share of the whole is a pause, not an idle stretch: never broken. */
export const MIN_GAP_SHARE = 0.05;
/** Breaks at most: past this many the axis says little; the longest gaps are the ones broken. */
export const MAX_BREAKS = 4;

export const identityWarp = (durationUs: number): TimeWarp => ({ breaks: [], realDurationUs: durationUs, displayDurationUs: durationUs });

/** Stretches when something happens, sorted and merged: [start[i], end[i]], a moment being a stretch of length 0. */
export interface Activity {
  start: number[];
  end: number[];
}

/**
 * When something happens on a timeline: each allocation made or freed, each marker, each counter's change of
 * value (a moment each), and each span (a kernel, a copy: busy for its whole length, however long), within
 * [0, duration]; the timeline's start and end count as moments.
 */
export function activityOf(t: Timeline): Activity {
  const from: number[] = [0, t.durationUs];
  const to: number[] = [0, t.durationUs];
  const moment = (x: number) => {
    if (!Number.isFinite(x)) return;
    from.push(x);
    to.push(x);
  };
  const a = t.allocations;
  for (let i = 0; i < a.count; i++) {
    moment(a.start[i]!);
    moment(a.end[i]!);
  }
  const s = t.spans;
  for (let i = 0; i < s.count; i++) {
    from.push(s.start[i]!);
    to.push(Math.max(s.start[i]!, s.end[i]!));
  }
  for (const m of t.markers) moment(m.timeUs);
  for (const c of t.counters) for (let i = 0; i < c.time.length; i++) if (i === 0 || c.value[i] !== c.value[i - 1]) moment(c.time[i]!);
  return merge(from, to, t.durationUs);
}

/** Stretches sorted by start and merged where they touch or overlap, clamped to [0, duration]. */
function merge(from: number[], to: number[], durationUs: number): Activity {
  const order = from.map((_, i) => i).sort((x, y) => from[x]! - from[y]!);
  const out: Activity = { start: [], end: [] };
  for (const i of order) {
    const s = Math.min(Math.max(from[i]!, 0), durationUs);
    const e = Math.min(Math.max(to[i]!, s), durationUs);
    const n = out.end.length;
    if (n > 0 && s <= out.end[n - 1]!) out.end[n - 1] = Math.max(out.end[n - 1]!, e);
    else {
      out.start.push(s);
      out.end.push(e);
    }
  }
  return out;
}

/**
 * The breaks for a timeline that is busy in `activity` over `durationUs`: the longest idle gaps first, each
 * kept only while it would still take more than IDLE_SHARE of the width with it and the longer ones broken, and
 * is at least MIN_GAP_SHARE of the whole (a pause between two allocations is not an idle stretch).
 */
export function findWarp(activity: Activity, durationUs: number): TimeWarp {
  const gaps: { start: number; length: number }[] = [];
  for (let i = 1; i < activity.start.length; i++) {
    const length = activity.start[i]! - activity.end[i - 1]!;
    if (length > 0) gaps.push({ start: activity.end[i - 1]!, length });
  }
  gaps.sort((x, y) => y.length - x.length || x.start - y.start);
  const chosen: { start: number; length: number }[] = [];
  let broken = 0;
  for (const gap of gaps.slice(0, MAX_BREAKS)) {
    const k = chosen.length + 1;
    // the display duration with this gap broken too: what is left to scale, plus k breaks of BREAK_SHARE each
    const display = (durationUs - broken - gap.length) / (1 - BREAK_SHARE * k);
    const width = BREAK_SHARE * display;
    if (!(display > 0) || gap.length <= IDLE_SHARE * display || gap.length < MIN_GAP_SHARE * durationUs || gap.length < 3 * width) break;
    chosen.push(gap);
    broken += gap.length;
  }
  if (chosen.length === 0) return identityWarp(durationUs);
  const display = (durationUs - broken) / (1 - BREAK_SHARE * chosen.length);
  const width = BREAK_SHARE * display;
  chosen.sort((x, y) => x.start - y.start);
  const breaks: TimeBreak[] = [];
  let shift = 0;
  for (const g of chosen) {
    const displayStart = g.start - shift;
    breaks.push({ realStart: g.start, realEnd: g.start + g.length, displayStart, displayEnd: displayStart + width });
    shift += g.length - width;
  }
  return { breaks, realDurationUs: durationUs, displayDurationUs: durationUs - shift };
}

/** The warp for one timeline, or for several drawn on one axis (a comparison: each from its own start). */
export function warpFor(timelines: Timeline[]): TimeWarp {
  const duration = Math.max(0, ...timelines.map((t) => t.durationUs));
  const all = timelines.map(activityOf);
  if (all.length === 1) return findWarp(all[0]!, duration);
  return findWarp(
    merge(
      all.flatMap((x) => x.start),
      all.flatMap((x) => x.end),
      duration,
    ),
    duration,
  );
}

/** Real time → display time (±Infinity and NaN pass through). */
export function toDisplay(w: TimeWarp, us: number): number {
  if (w.breaks.length === 0 || !Number.isFinite(us)) return us;
  let shift = 0;
  for (const b of w.breaks) {
    if (us <= b.realStart) break;
    if (us < b.realEnd) return b.displayStart + ((us - b.realStart) / (b.realEnd - b.realStart)) * (b.displayEnd - b.displayStart);
    shift = b.realEnd - b.displayEnd;
  }
  return us - shift;
}

/** Display time → real time: toDisplay's inverse. */
export function toReal(w: TimeWarp, us: number): number {
  if (w.breaks.length === 0 || !Number.isFinite(us)) return us;
  let shift = 0;
  for (const b of w.breaks) {
    if (us <= b.displayStart) break;
    if (us < b.displayEnd) return b.realStart + ((us - b.displayStart) / (b.displayEnd - b.displayStart)) * (b.realEnd - b.realStart);
    shift = b.realEnd - b.displayEnd;
  }
  return us + shift;
}

const mapColumn = (w: TimeWarp, xs: Float64Array): Float64Array => xs.map((x) => toDisplay(w, x));

/**
 * The timeline as the view draws it: every time mapped to display time, everything else shared with the
 * original (the same rows in the same order, so an index selects the same thing in both).
 */
export function warpTimeline(t: Timeline, w: TimeWarp): Timeline {
  if (w.breaks.length === 0) return t;
  const a = t.allocations;
  const s = t.spans;
  return {
    ...t,
    durationUs: toDisplay(w, t.durationUs),
    allocations: { ...a, start: mapColumn(w, a.start), end: mapColumn(w, a.end) },
    spans: { ...s, start: mapColumn(w, s.start), end: mapColumn(w, s.end) },
    counters: t.counters.map((c) => ({ ...c, time: mapColumn(w, c.time) })),
    markers: t.markers.map((m) => ({ ...m, timeUs: toDisplay(w, m.timeUs) })),
  };
}

export interface WarpedTick {
  /** Display time. */
  us: number;
  label: string;
}

export interface BreakInView {
  /** Display times of the break's edges. */
  startUs: number;
  endUs: number;
  /** How long it really lasted: "47.3 ms". */
  realUs: number;
}

/**
 * The time axis's ticks for a display window `width` pixels wide: each stretch between breaks gets its own
 * ticks, in real time (timeTicks at that stretch's share of the width), placed at their display time; and the
 * breaks in view, for the view to draw.
 */
export function warpedTicks(w: TimeWarp, win: { startUs: number; endUs: number }, width: number): { ticks: WarpedTick[]; breaks: BreakInView[] } {
  const span = win.endUs - win.startUs;
  if (!(span > 0) || !(width > 0)) return { ticks: [], breaks: [] };
  const out: WarpedTick[] = [];
  const breaks: BreakInView[] = [];
  let from = win.startUs;
  const stretch = (d0: number, d1: number) => {
    if (d1 <= d0) return;
    const px = ((d1 - d0) / span) * width;
    const r0 = toReal(w, d0);
    const r1 = toReal(w, d1);
    for (const t of timeTicks({ startUs: r0, endUs: r1 }, px)) out.push({ us: toDisplay(w, t.us), label: t.label });
  };
  for (const b of w.breaks) {
    if (b.displayEnd <= win.startUs) continue;
    if (b.displayStart >= win.endUs) break;
    stretch(from, Math.min(b.displayStart, win.endUs));
    breaks.push({ startUs: b.displayStart, endUs: b.displayEnd, realUs: b.realEnd - b.realStart });
    from = Math.max(from, b.displayEnd);
  }
  stretch(from, win.endUs);
  return { ticks: out, breaks };
}
