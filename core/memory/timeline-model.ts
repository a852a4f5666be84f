/**
 * The questions a person asks of any memory timeline — a run's, a PyTorch snapshot's, a monitoring session's —
 * answered from its columns: live bytes over time, the peak and when, what was alive then and at the end,
 * where it came from (grouped by stack, user frame, step or buffer), and the address-space picture at a moment.
 *
 * An allocation is alive over [start, end): at its start time it counts, at its end time it no longer does.
 * Several changes at one microsecond are netted — the model knows times, not the order of calls within one
 * microsecond — so a block freed and another allocated at the same time never count together, and an
 * allocation freed at the microsecond it was made never counts at all. With that rule, what aliveAt(peak)
 * returns adds up to the peak exactly.
 *
 * Every scan is linear in the allocations; sorting is done once per question with sortedIndex (radix, or one
 * pass when the column is already in order), never per query.
 */
import * as z from 'zod';

import { schemaFor } from '../api/typed-schema';
import { sortedIndex } from './sort-index';
import type { Timeline, TimelineCounter, TimelineFrame, TimelineMarker } from './timeline';

// ---------------------------------------------------------------------------------------------- live bytes

export interface LiveBytes {
  /** One point per distinct time at which an allocation starts or ends; the value after every change at that time. */
  time: Float64Array;
  value: Float64Array;
  /** How many allocations are alive from each point on. */
  alive: Float64Array;
}

export function liveBytes(t: Pick<Timeline, 'allocations'>): LiveBytes {
  const a = t.allocations;
  const n = a.count;
  const byStart = sortedIndex(a.start);
  const ends = a.end;
  const byEnd = sortedIndex(ends);
  const time = new Float64Array(2 * n);
  const value = new Float64Array(2 * n);
  const alive = new Float64Array(2 * n);
  let points = 0;
  let s = 0;
  let e = 0;
  let bytes = 0;
  let count = 0;
  for (;;) {
    const nextStart = s < n ? a.start[byStart[s]!]! : Infinity;
    const nextEnd = e < n ? ends[byEnd[e]!]! : Infinity;
    const at = nextStart < nextEnd ? nextStart : nextEnd;
    if (!Number.isFinite(at)) break;
    while (s < n && a.start[byStart[s]!] === at) {
      bytes += a.size[byStart[s]!]!;
      count++;
      s++;
    }
    while (e < n && ends[byEnd[e]!] === at) {
      bytes -= a.size[byEnd[e]!]!;
      count--;
      e++;
    }
    time[points] = at;
    value[points] = bytes;
    alive[points] = count;
    points++;
  }
  return { time: time.slice(0, points), value: value.slice(0, points), alive: alive.slice(0, points) };
}

export interface TimelinePeak {
  bytes: number;
  /** The first time live bytes reached the peak. */
  timeUs: number;
  /** Allocations alive then. */
  allocations: number;
}

/** The highest live bytes of the allocations, and when it was first reached; null when nothing was ever allocated. */
export function peakOf(t: Timeline): TimelinePeak | null {
  const live = liveBytes(t);
  let best = -1;
  for (let i = 0; i < live.time.length; i++) if (best < 0 || live.value[i]! > live.value[best]!) best = i;
  if (best < 0 || live.value[best]! <= 0) return null;
  return { bytes: live.value[best]!, timeUs: live.time[best]!, allocations: live.alive[best]! };
}

/** A counter's highest value and the first time it had it; null for an empty counter. */
export function counterPeak(c: TimelineCounter): { value: number; timeUs: number } | null {
  let best = -1;
  for (let i = 0; i < c.value.length; i++) if (Number.isFinite(c.value[i]!) && (best < 0 || c.value[i]! > c.value[best]!)) best = i;
  return best < 0 ? null : { value: c.value[best]!, timeUs: c.time[best]! };
}

// ---------------------------------------------------------------------------------------------- who is alive

/** Allocations alive at `tUs` (start ≤ t < end), in index order. */
export function aliveAt(t: Pick<Timeline, 'allocations'>, tUs: number): Uint32Array {
  const a = t.allocations;
  let n = 0;
  for (let i = 0; i < a.count; i++) if (a.start[i]! <= tUs && tUs < a.end[i]!) n++;
  const out = new Uint32Array(n);
  n = 0;
  for (let i = 0; i < a.count; i++) if (a.start[i]! <= tUs && tUs < a.end[i]!) out[n++] = i;
  return out;
}

/** Allocations never freed before the timeline ends (end = +Infinity). */
export function aliveAtEnd(t: Pick<Timeline, 'allocations'>): Uint32Array {
  const a = t.allocations;
  let n = 0;
  for (let i = 0; i < a.count; i++) if (a.end[i] === Infinity) n++;
  const out = new Uint32Array(n);
  n = 0;
  for (let i = 0; i < a.count; i++) if (a.end[i] === Infinity) out[n++] = i;
  return out;
}

export const sumBytes = (t: Timeline, indices: ArrayLike<number>): number => {
  let s = 0;
  for (let k = 0; k < indices.length; k++) s += t.allocations.size[indices[k]!]!;
  return s;
};

// ---------------------------------------------------------------------------------------------- where it came from

export const describeTimelineFrame = (f: TimelineFrame | null): string => (f ? `${f.file}:${f.line} ${f.name}` : '(no user frame)');

export function userFrameOf(t: Timeline, allocation: number): TimelineFrame | null {
  const s = t.allocations.stack[allocation]!;
  if (s < 0) return null;
  const stack = t.stacks[s];
  return stack && stack.userFrame >= 0 ? (stack.frames[stack.userFrame] ?? null) : null;
}

export function stepLabel(t: Timeline, step: number): string {
  const known = t.steps.find((s) => s.index === step);
  return known ? `step ${step + 1} (${known.label})` : `step ${step + 1}`;
}

/**
 * What made an allocation, in words a person recognises: the top user frame of its stack, else the buffer's name,
 * else the plan step; "(unknown)" when the timeline says nothing.
 */
export function originOf(t: Timeline, allocation: number): string {
  const frame = userFrameOf(t, allocation);
  if (frame) return describeTimelineFrame(frame);
  const label = t.allocations.label[allocation]!;
  if (label >= 0 && t.labels[label] !== undefined) return t.labels[label];
  const step = t.allocations.step[allocation]!;
  if (step >= 0) return stepLabel(t, step);
  return '(unknown)';
}

export type GroupBy = 'origin' | 'stack' | 'step' | 'label';

export interface AllocationGroup {
  /** Text that names the group in any timeline (two snapshots' groups are matched on it). */
  key: string;
  /** What to show: the user frame, the buffer, the step. */
  title: string;
  frame: TimelineFrame | null;
  step: number | null;
  count: number;
  bytes: number;
  largest: number;
  /** The largest allocation of the group (an index into allocations). */
  largestIndex: number;
}

function stackKey(t: Timeline, stack: number, cache: Map<number, string>): string {
  let key = cache.get(stack);
  if (key === undefined) {
    const s = t.stacks[stack];
    key = s ? s.frames.map((f) => `${f.file}:${f.line} ${f.name}`).join('\n') : '(no stack)';
    cache.set(stack, key);
  }
  return key;
}

/** The key and title of one allocation's group. */
function groupOf(t: Timeline, i: number, by: GroupBy, stacks: Map<number, string>): { key: string; title: string } {
  const a = t.allocations;
  switch (by) {
    case 'stack': {
      const s = a.stack[i]!;
      if (s >= 0) return { key: stackKey(t, s, stacks), title: describeTimelineFrame(userFrameOf(t, i)) };
      const origin = originOf(t, i);
      return { key: origin, title: origin };
    }
    case 'step': {
      const step = a.step[i]!;
      return step >= 0 ? { key: `step ${step}`, title: stepLabel(t, step) } : { key: '(no step)', title: '(no step)' };
    }
    case 'label': {
      const l = a.label[i]!;
      return l >= 0 ? { key: t.labels[l]!, title: t.labels[l]! } : { key: '(no name)', title: '(no name)' };
    }
    default: {
      const origin = originOf(t, i);
      return { key: origin, title: origin };
    }
  }
}

/** Allocations grouped (by their top user frame or name, by whole stack, by step or by buffer), most bytes first. */
export function groupAllocations(t: Timeline, indices: ArrayLike<number>, by: GroupBy = 'origin'): AllocationGroup[] {
  const a = t.allocations;
  const groups = new Map<string, AllocationGroup>();
  const stacks = new Map<number, string>();
  // A group's key depends on the stack, else the buffer, else the step: worked out once for each, not per allocation.
  const memo = [
    new Map<number, { key: string; title: string }>(),
    new Map<number, { key: string; title: string }>(),
    new Map<number, { key: string; title: string }>(),
  ];
  const hasUserFrame = (s: number) => (t.stacks[s]?.userFrame ?? -1) >= 0;
  for (let k = 0; k < indices.length; k++) {
    const i = indices[k]!;
    const stack = a.stack[i]!;
    const label = a.label[i]!;
    const [table, id] =
      by === 'step'
        ? [memo[2]!, a.step[i]!]
        : by === 'label'
          ? [memo[1]!, label]
          : stack >= 0 && (by === 'stack' || hasUserFrame(stack))
            ? [memo[0]!, stack]
            : label >= 0
              ? [memo[1]!, label]
              : [memo[2]!, a.step[i]!];
    let named = table.get(id);
    if (!named) table.set(id, (named = groupOf(t, i, by, stacks)));
    const { key, title } = named;
    let g = groups.get(key);
    if (!g) {
      const step = a.step[i]!;
      groups.set(key, (g = { key, title, frame: userFrameOf(t, i), step: step >= 0 ? step : null, count: 0, bytes: 0, largest: -1, largestIndex: i }));
    }
    g.count++;
    g.bytes += a.size[i]!;
    if (a.size[i]! > g.largest) {
      g.largest = a.size[i]!;
      g.largestIndex = i;
    }
  }
  return [...groups.values()].sort((x, y) => y.bytes - x.bytes || y.count - x.count || (x.key < y.key ? -1 : 1));
}

/**
 * The groupings that say something about this timeline, in the order offered: by whole stack and by line of the
 * user's code when it has stacks (a PyTorch snapshot), by buffer and by plan step when it has them (a run).
 * A grouping the data cannot fill — plan steps of a snapshot — would put everything in one "(no step)" group; and a
 * snapshot's only label ("allocated before the recording") names no buffer.
 */
export function groupingsFor(t: Pick<Timeline, 'allocations' | 'stacks' | 'labels' | 'source'>): GroupBy[] {
  const a = t.allocations;
  let stacks = false;
  let userFrames = false;
  let steps = false;
  let labels = false;
  for (let i = 0; i < a.count && !(stacks && userFrames && steps && labels); i++) {
    const s = t.stacks[a.stack[i]!];
    if (s) {
      stacks = true;
      userFrames ||= s.userFrame >= 0;
    }
    steps ||= a.step[i]! >= 0;
    labels ||= t.source !== 'snapshot' && t.labels[a.label[i]!] !== undefined;
  }
  const out: GroupBy[] = [];
  if (stacks) out.push('stack');
  if (userFrames || (!stacks && !steps && !labels)) out.push('origin');
  if (labels) out.push('label');
  if (steps) out.push('step');
  return out;
}

export interface Leak {
  allocation: number;
  bytes: number;
  startUs: number;
  address: number;
  step: number | null;
  /** The user frame, buffer or step that made it. */
  origin: string;
}

/**
 * Leak candidates: what is still alive when the timeline ends, largest first. For a run that completed these
 * are the plan's leaks; for a snapshot, what was still held when it was dumped.
 */
export function leaksOf(t: Timeline, limit = Infinity): Leak[] {
  if (limit <= 0) return [];
  const a = t.allocations;
  const end = aliveAtEnd(t);
  const bySize = (x: number, y: number) => a.size[y]! - a.size[x]! || x - y;
  let chosen: number[];
  if (end.length <= limit) chosen = [...end].sort(bySize);
  else {
    // The largest `limit` without sorting them all: a million leak candidates cost one pass.
    chosen = [];
    for (const i of end) {
      if (chosen.length === limit) {
        if (bySize(i, chosen[limit - 1]!) >= 0) continue;
        chosen.pop();
      }
      let at = chosen.length;
      while (at > 0 && bySize(i, chosen[at - 1]!) < 0) at--;
      chosen.splice(at, 0, i);
    }
  }
  return chosen.map((i) => ({
    allocation: i,
    bytes: a.size[i]!,
    startUs: a.start[i]!,
    address: a.address[i]!,
    step: a.step[i]! >= 0 ? a.step[i]! : null,
    origin: originOf(t, i),
  }));
}

// ---------------------------------------------------------------------------------------------- address space

export interface AddressPart {
  kind: 'used' | 'gap';
  address: number;
  size: number;
  /** For a used part: the allocation. */
  allocation?: number;
}

export interface AddressPicture {
  tUs: number;
  parts: AddressPart[];
  lowest: number | null;
  highest: number | null;
  usedBytes: number;
  largestGap: number;
  /** Blocks that overlap the one before them in address order: the data is wrong somewhere, so it is said. */
  overlaps: number;
}

/** The blocks alive at `tUs` by address, with the gaps between them. */
export function addressSpaceAt(t: Timeline, tUs: number): AddressPicture {
  const alive = aliveAt(t, tUs);
  const addresses = new Float64Array(alive.length);
  for (let k = 0; k < alive.length; k++) addresses[k] = t.allocations.address[alive[k]!]!;
  const order = sortedIndex(addresses);
  const parts: AddressPart[] = [];
  let reach = -Infinity;
  let used = 0;
  let largestGap = 0;
  let overlaps = 0;
  for (let k = 0; k < order.length; k++) {
    const i = alive[order[k]!]!;
    const address = t.allocations.address[i]!;
    const size = t.allocations.size[i]!;
    if (!Number.isFinite(address)) continue;
    if (address > reach && Number.isFinite(reach)) {
      parts.push({ kind: 'gap', address: reach, size: address - reach });
      largestGap = Math.max(largestGap, address - reach);
    } else if (address < reach) overlaps++;
    parts.push({ kind: 'used', address, size, allocation: i });
    used += size;
    reach = Math.max(reach, address + size);
  }
  const firstUsed = parts.find((p) => p.kind === 'used');
  return { tUs, parts, lowest: firstUsed ? firstUsed.address : null, highest: Number.isFinite(reach) ? reach : null, usedBytes: used, largestGap, overlaps };
}

// ---------------------------------------------------------------------------------------------- summary

const LIST = 20;

export interface TimelineSummary {
  title: string;
  source: Timeline['source'];
  device: number | null;
  durationUs: number;
  allocations: number;
  peak: (TimelinePeak & { groups: AllocationGroup[] }) | null;
  atEnd: { count: number; bytes: number; groups: AllocationGroup[] };
  /** The largest leak candidates (count says how many there are in all). */
  leaks: { count: number; bytes: number; largest: Leak[] };
  ooms: { marker: TimelineMarker; holders: AllocationGroup[] }[];
  errors: TimelineMarker[];
  /** The address space at the peak: how spread out the blocks were. */
  addressSpace: { blocks: number; lowest: number | null; highest: number | null; usedBytes: number; largestGap: number } | null;
  /** Counters' peaks (device used, each process): label and value. */
  counters: { id: string; label: string; peak: number | null; peakUs: number | null }[];
}

const count = z.number().int().min(0);
const groupSchema = z.object({
  key: z.string(),
  title: z.string(),
  frame: z.object({ file: z.string(), line: z.number().int(), name: z.string() }).nullable(),
  step: z.number().int().nullable(),
  count,
  bytes: z.number(),
  largest: z.number(),
  largestIndex: z.number().int(),
});
const markerSchema = z.object({
  kind: z.enum(['oom', 'leak', 'error', 'peak']),
  timeUs: z.number(),
  label: z.string(),
  detail: z.string(),
  step: z.number().int().optional(),
  allocation: z.number().int().optional(),
});

/** A timeline's summary, as memory.open and bundle.open answer it beside the timeline. */
export const timelineSummarySchema = schemaFor<TimelineSummary>()(
  z.object({
    title: z.string(),
    source: z.enum(['run', 'snapshot', 'monitor']),
    device: z.number().int().nullable(),
    durationUs: z.number(),
    allocations: count,
    peak: z.object({ bytes: z.number(), timeUs: z.number(), allocations: count, groups: z.array(groupSchema) }).nullable(),
    atEnd: z.object({ count, bytes: z.number(), groups: z.array(groupSchema) }),
    leaks: z.object({
      count,
      bytes: z.number(),
      largest: z.array(
        z.object({
          allocation: z.number().int(),
          bytes: z.number(),
          startUs: z.number(),
          address: z.number(),
          step: z.number().int().nullable(),
          origin: z.string(),
        }),
      ),
    }),
    ooms: z.array(z.object({ marker: markerSchema, holders: z.array(groupSchema) })),
    errors: z.array(markerSchema),
    addressSpace: z
      .object({ blocks: count, lowest: z.number().nullable(), highest: z.number().nullable(), usedBytes: z.number(), largestGap: z.number() })
      .nullable(),
    counters: z.array(z.object({ id: z.string(), label: z.string(), peak: z.number().nullable(), peakUs: z.number().nullable() })),
  }),
);

/** What memory.open answers beside the timelines: bounded lists, so a million allocations summarise in kilobytes. */
export function summarizeTimeline(t: Timeline): TimelineSummary {
  const peak = peakOf(t);
  const end = aliveAtEnd(t);
  const leaks = leaksOf(t, LIST);
  const picture = peak ? addressSpaceAt(t, peak.timeUs) : null;
  return {
    title: t.title,
    source: t.source,
    device: t.device,
    durationUs: t.durationUs,
    allocations: t.allocations.count,
    peak: peak ? { ...peak, groups: groupAllocations(t, aliveAt(t, peak.timeUs)).slice(0, LIST) } : null,
    atEnd: { count: end.length, bytes: sumBytes(t, end), groups: groupAllocations(t, end).slice(0, LIST) },
    leaks: { count: end.length, bytes: sumBytes(t, end), largest: leaks },
    // Holders for the first OOMs only: each is one pass over the allocations.
    ooms: t.markers
      .filter((m) => m.kind === 'oom')
      .slice(0, LIST)
      .map((marker) => ({ marker, holders: groupAllocations(t, aliveAt(t, marker.timeUs)).slice(0, LIST) })),
    errors: t.markers.filter((m) => m.kind === 'error').slice(0, LIST),
    addressSpace: picture
      ? {
          blocks: picture.parts.filter((p) => p.kind === 'used').length,
          lowest: picture.lowest,
          highest: picture.highest,
          usedBytes: picture.usedBytes,
          largestGap: picture.largestGap,
        }
      : null,
    counters: t.counters.slice(0, 200).map((c) => {
      const p = counterPeak(c);
      return { id: c.id, label: c.label, peak: p?.value ?? null, peakUs: p?.timeUs ?? null };
    }),
  };
}
