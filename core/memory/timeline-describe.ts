/**
 * What the view says about a thing on the timeline, in words: the hover tooltip, the details panel and the
 * screen-reader announcement all read it from here.
 */
import { formatBytes, plural, thousands } from '../format';
import { SPAN_LANES, type Timeline, type TimelineFrame } from './timeline';
import { userFrameOf, type TimelineSummary } from './timeline-model';
import { rangeFigures } from './timeline-range';
import { formatDuration } from './timeline-viewport';

/** A thing the view can point at. */
export type TimelineTarget =
  | { kind: 'allocation'; index: number }
  | { kind: 'span'; index: number }
  | { kind: 'marker'; index: number }
  | { kind: 'counter'; counter: number; timeUs: number }
  /** A stretch of time: chosen with the keys (R: the stretch shown) or by Shift+drag. */
  | { kind: 'range'; startUs: number; endUs: number };

export interface Description {
  title: string;
  facts: { name: string; value: string }[];
  /** The stack, innermost first, and which frame is the user's own (-1: none). */
  frames: TimelineFrame[];
  userFrame: number;
  /** A marker's longer text: the holders, what to do. */
  detail: string | null;
}

export const hexAddress = (address: number): string => (Number.isFinite(address) && address >= 0 ? `0x${address.toString(16)}` : 'unknown');

/** "step 3: launch vecAdd", or null when it has no step. */
export function stepText(t: Timeline, step: number | undefined): string | null {
  if (step === undefined || step < 0) return null;
  const s = t.steps.find((x) => x.index === step);
  return s ? `step ${step}: ${s.label}` : `step ${step}`;
}

export const frameText = (f: TimelineFrame): string => `${f.file}:${f.line}${f.name ? ` (${f.name})` : ''}`;

/** A short name for an allocation: its buffer's name, else its size and the user line that made it. */
export function allocationName(t: Timeline, i: number): string {
  const a = t.allocations;
  const label = t.labels[a.label[i]!];
  if (label !== undefined) return `${label} (${formatBytes(a.size[i]!)})`;
  const frame = userFrameOf(t, i);
  return `${formatBytes(a.size[i]!)} allocation${frame ? ` from ${basename(frame.file)}:${frame.line}` : ''}`;
}

const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);

const LANE_WORDS: Record<(typeof SPAN_LANES)[number], string> = {
  kernel: 'Kernel',
  copy: 'Copy',
  memset: 'Memset',
  sync: 'Synchronize',
  module: 'Module load',
  other: 'Event',
};

export function describe(t: Timeline, target: TimelineTarget): Description {
  switch (target.kind) {
    case 'allocation': {
      const a = t.allocations;
      const i = target.index;
      const start = a.start[i]!;
      const end = a.end[i]!;
      const facts = [
        { name: 'Size', value: `${formatBytes(a.size[i]!)} (${thousands(a.size[i]!)} bytes)` },
        { name: 'Address', value: hexAddress(a.address[i]!) },
        {
          name: 'Alive',
          value: Number.isFinite(end)
            ? `${formatDuration(Math.max(0, end - start))}, from ${formatDuration(start)} to ${formatDuration(end)}`
            : `from ${formatDuration(start)} to the end (never freed)`,
        },
      ];
      const step = stepText(t, a.step[i]);
      if (step) facts.push({ name: 'Step', value: step });
      const frame = userFrameOf(t, i);
      if (frame) facts.push({ name: 'Made at', value: frameText(frame) });
      const stack = t.stacks[a.stack[i]!];
      return { title: allocationName(t, i), facts, frames: stack?.frames ?? [], userFrame: stack?.userFrame ?? -1, detail: null };
    }
    case 'span': {
      const s = t.spans;
      const i = target.index;
      const lane = SPAN_LANES[s.lane[i]!] ?? 'kernel';
      const facts = [
        { name: 'When', value: `${formatDuration(s.start[i]!)} to ${formatDuration(s.end[i]!)}` },
        { name: 'Took', value: formatDuration(Math.max(0, s.end[i]! - s.start[i]!)) },
      ];
      const step = stepText(t, s.step[i]);
      if (step) facts.push({ name: 'Step', value: step });
      return { title: `${LANE_WORDS[lane]}: ${t.labels[s.label[i]!] ?? '(unnamed)'}`, facts, frames: [], userFrame: -1, detail: null };
    }
    case 'marker': {
      const m = t.markers[target.index]!;
      const facts = [{ name: 'At', value: formatDuration(m.timeUs) }];
      const step = stepText(t, m.step);
      if (step) facts.push({ name: 'Step', value: step });
      if (m.allocation !== undefined && m.allocation >= 0 && m.allocation < t.allocations.count) {
        facts.push({ name: 'Allocation', value: `${allocationName(t, m.allocation)} at ${hexAddress(t.allocations.address[m.allocation]!)}` });
      }
      return { title: m.label, facts, frames: [], userFrame: -1, detail: m.detail };
    }
    case 'counter': {
      const c = t.counters[target.counter]!;
      const value = counterValueAt(c.time, c.value, target.timeUs);
      const facts = [
        { name: 'At', value: formatDuration(target.timeUs) },
        { name: 'Value', value: Number.isNaN(value) ? 'no sample yet' : formatBytes(value) },
      ];
      if (c.capacity !== undefined) facts.push({ name: 'Of', value: formatBytes(c.capacity) });
      if (c.flag) facts.push({ name: 'Why flagged', value: `${c.flag.text}. ${c.flag.fix}` });
      return { title: c.label, facts, frames: [], userFrame: -1, detail: null };
    }
    case 'range': {
      const r = rangeFigures(t, target.startUs, target.endUs);
      const net = r.allocated.bytes - r.freed.bytes;
      const facts = [
        { name: 'Lasts', value: formatDuration(r.endUs - r.startUs) },
        { name: 'Allocated', value: `${formatBytes(r.allocated.bytes)} in ${plural(r.allocated.count, 'allocation')}` },
        { name: 'Freed', value: `${formatBytes(r.freed.bytes)} in ${plural(r.freed.count, 'allocation')}` },
        { name: 'Net change', value: `${net > 0 ? '+' : ''}${formatBytes(net)}` },
        { name: 'Alive', value: `${formatBytes(r.liveAtStartBytes)} at its start, ${formatBytes(r.liveAtEndBytes)} at its end` },
      ];
      if (t.spans.count > 0) {
        facts.push({ name: 'Kernels', value: `${plural(r.kernels.count, 'kernel')}, ${formatDuration(r.kernels.busyUs)} of GPU time in the range` });
        facts.push({ name: 'Copies and memsets', value: plural(r.copies, 'span') });
      }
      return { title: `Range ${formatDuration(r.startUs)} to ${formatDuration(r.endUs)}`, facts, frames: [], userFrame: -1, detail: null };
    }
  }
}

/** The value a step function holds at t (NaN before its first sample). */
export function counterValueAt(time: Float64Array, value: Float64Array, t: number): number {
  let lo = 0;
  let hi = time.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (time[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? NaN : value[lo - 1]!;
}

/** One line for a screen reader: the title and its facts. */
export function announce(t: Timeline, target: TimelineTarget): string {
  const d = describe(t, target);
  return `${d.title}. ${d.facts.map((f) => `${f.name}: ${f.value}`).join('. ')}.`;
}

/** The timeline in sentences: what a screen reader reads beside the canvas, and what everyone reads first. */
export function summarySentences(t: Timeline, s: TimelineSummary): string[] {
  const out: string[] = [];
  if (t.allocations.count > 0) out.push(`${plural(t.allocations.count, 'allocation')} over ${formatDuration(t.durationUs)}.`);
  else if (t.counters.some((c) => c.time.length > 0)) out.push(`${formatDuration(t.durationUs)} of samples.`);
  else out.push('No samples yet.');
  if (s.peak) out.push(`Peak ${formatBytes(s.peak.bytes)} at ${formatDuration(s.peak.timeUs)}, with ${plural(s.peak.allocations, 'allocation')} alive.`);
  // the device's own memory and PyTorch's cache: what the allocations alone do not say
  for (const c of s.counters.filter((c) => c.peak !== null && (c.id.endsWith(':used') || c.id.endsWith(':reserved'))).slice(0, 4))
    out.push(`${c.label} peaked at ${formatBytes(c.peak!)}${c.peakUs !== null ? ` at ${formatDuration(c.peakUs)}` : ''}.`);
  if (s.ooms.length) out.push(`${plural(s.ooms.length, 'out-of-memory error')}.`);
  if (s.errors.length) out.push(`${plural(s.errors.length, 'other error')}.`);
  if (s.leaks.count > 0)
    out.push(
      t.source === 'run'
        ? `${plural(s.leaks.count, 'allocation')} (${formatBytes(s.leaks.bytes)}) never freed: leaked.`
        : `${plural(s.leaks.count, 'allocation')} (${formatBytes(s.leaks.bytes)}) still alive when the timeline ends: leak candidates.`,
    );
  else if (t.allocations.count > 0) out.push('Everything allocated was freed.');
  return out;
}
