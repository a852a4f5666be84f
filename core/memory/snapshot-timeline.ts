/**
 * One device of a PyTorch memory snapshot as a timeline: each block from its alloc to its free_completed (or
 * alive to the end), the blocks that predate the recording from time 0 (those still held, found in the segments;
 * those freed during it, found by frees with no alloc), PyTorch's allocated and reserved bytes, and markers for
 * each OOM (the request against the device's free memory, and what held memory then, by user frame), for what
 * was still alive at the end (by user frame) and for the peak.
 *
 * Stacks stay shared: one TimelineStack per snapshot stack that this device uses, each frame one object however
 * many stacks hold it — a million allocations from two hundred call sites cost two hundred stacks.
 */
import { formatBytes } from '../format';
import { adviceLines, oomAdvice } from './oom-advice';
import { A, beforeRecording, type SnapshotModel } from './snapshot-model';
import type { Timeline, TimelineFrame, TimelineMarker, TimelineStack } from './timeline';
import { AllocationsBuilder, CounterBuilder, counterHead, emptySpans, LabelTable } from './timeline-columns';
import { aliveAt, aliveAtEnd, describeTimelineFrame, groupAllocations, peakOf, sumBytes, type AllocationGroup } from './timeline-model';

/** OOMs past this many get their marker without the holders (each is one pass over the allocations). */
const OOMS_WITH_HOLDERS = 20;
/** Leak markers, one per user frame, past which the rest are counted in one. */
const LEAK_MARKERS = 500;
const GROUP_LINES = 12;

export const BEFORE_RECORDING = 'allocated before the recording';

function groupLines(groups: AllocationGroup[]): string[] {
  const lines = groups
    .slice(0, GROUP_LINES)
    .map((g) => `  ${formatBytes(g.bytes)} in ${g.count} block${g.count === 1 ? '' : 's'} (up to ${formatBytes(g.largest)}) from ${g.title}`);
  if (groups.length > GROUP_LINES) lines.push(`  … and ${groups.length - GROUP_LINES} more`);
  return lines;
}

export function timelineFromSnapshot(model: SnapshotModel, device: number, options: { name?: string } = {}): Timeline {
  const t = model.devices[device];
  if (!t) throw new RangeError(`The snapshot has no device ${device} (it has ${model.devices.length}).`);
  // A trace without times (older PyTorch wrote none): its entries in order, one a microsecond, and the title says so.
  let timed = true;
  for (let i = 0; i < t.count && timed; i++) timed = Number.isFinite(t.time[i]!);
  // A time earlier than the entry before it (a damaged trace) is drawn at that entry's: the axis only goes forward.
  const forward = new Float64Array(t.count);
  for (let i = 0; i < t.count; i++) forward[i] = i > 0 ? Math.max(forward[i - 1]!, t.time[i]!) : t.time[i]!;
  const timeOf = timed ? (i: number) => forward[i]! : (i: number) => i;
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < t.count; i++) {
    first = Math.min(first, timeOf(i));
    last = Math.max(last, timeOf(i));
  }
  const originUs = Number.isFinite(first) ? first : 0;
  const durationUs = Number.isFinite(last) ? last - originUs : 0;

  // Stacks: only those this device uses, in first-use order; frames one object per snapshot frame.
  const stackIndex = new Int32Array(model.stacks.length).fill(-1);
  const stacks: TimelineStack[] = [];
  const frames: (TimelineFrame | undefined)[] = [];
  const frameOf = (id: number): TimelineFrame =>
    (frames[id] ??= { file: model.frames[id]!.filename, line: model.frames[id]!.line, name: model.frames[id]!.name });
  const stackOf = (s: number): number => {
    if (s < 0 || s >= model.stacks.length) return -1;
    if (stackIndex[s] === -1) {
      const ids = model.stacks[s]!;
      stackIndex[s] = stacks.length;
      stacks.push({ frames: Array.from(ids, frameOf), userFrame: ids.indexOf(model.userFrame[s]!) });
    }
    return stackIndex[s]!;
  };

  const labels = new LabelTable();
  const allocations = new AllocationsBuilder();
  const before = labels.id(BEFORE_RECORDING);
  for (const b of beforeRecording(model, t))
    allocations.push({ start: 0, end: Infinity, address: b.address, size: b.size, stack: stackOf(b.stack), label: before });
  // Frees of blocks the trace never allocated: allocated before it began, alive from 0 to the free.
  const matched = new Uint8Array(t.count);
  for (let i = 0; i < t.count; i++) if (t.action[i] === A.alloc && t.freedAt[i]! >= 0) matched[t.freedAt[i]!] = 1;
  for (let i = 0; i < t.count; i++) {
    if (t.action[i] === A.free_completed && !matched[i])
      allocations.push({ start: 0, end: timeOf(i) - originUs, address: t.address[i]!, size: t.size[i]!, label: before });
  }
  for (let i = 0; i < t.count; i++) {
    if (t.action[i] !== A.alloc) continue;
    const freed = t.freedAt[i]!;
    allocations.push({
      start: timeOf(i) - originUs,
      end: freed >= 0 ? timeOf(freed) - originUs : Infinity,
      address: t.address[i]!,
      size: t.size[i]!,
      stack: stackOf(t.stack[i]!),
    });
  }

  const allocated = new CounterBuilder(counterHead(`snapshot:${device}:allocated`, `cuda:${device} allocated (PyTorch)`, 'allocated'));
  const reserved = new CounterBuilder(counterHead(`snapshot:${device}:reserved`, `cuda:${device} reserved (PyTorch cache)`, 'reserved'));
  allocated.push(0, t.baseAllocated);
  reserved.push(0, t.baseReserved);
  for (let i = 0; i < t.count; i++) {
    allocated.push(timeOf(i) - originUs, t.allocated[i]!);
    reserved.push(timeOf(i) - originUs, t.reserved[i]!);
  }

  const timeline: Timeline = {
    version: 1,
    source: 'snapshot',
    title: `cuda:${device} · PyTorch memory snapshot${options.name ? ` · ${options.name}` : ''}${timed ? '' : ' (the trace has no times: its entries in order, not to time)'}`,
    device,
    originUs,
    durationUs,
    counters: [allocated.finish(), reserved.finish()],
    allocations: allocations.finish(),
    spans: emptySpans(),
    markers: [],
    labels: labels.labels,
    stacks,
    steps: [],
  };
  timeline.markers = [...oomMarkers(model, device, timeline, timeOf), ...leakMarkers(timeline), ...peakMarkers(timeline)].sort((a, b) => a.timeUs - b.timeUs);
  return timeline;
}

function oomMarkers(model: SnapshotModel, device: number, timeline: Timeline, timeOf: (i: number) => number): TimelineMarker[] {
  const t = model.devices[device]!;
  const out: TimelineMarker[] = [];
  for (let i = 0; i < t.count; i++) {
    if (t.action[i] !== A.oom) continue;
    const timeUs = timeOf(i) - timeline.originUs;
    const free = t.deviceFree.get(i) ?? NaN;
    // The oom entry itself changes nothing: what was held is what the entry before it left.
    const held = i > 0 ? t.allocated[i - 1]! : t.baseAllocated;
    const cache = i > 0 ? t.reserved[i - 1]! : t.baseReserved;
    const stack = t.stack[i]!;
    const frameId = stack >= 0 ? model.userFrame[stack]! : -1;
    const frame = frameId >= 0 ? model.frames[frameId]! : null;
    const where = describeTimelineFrame(frame ? { file: frame.filename, line: frame.line, name: frame.name } : null);
    const freeText = Number.isFinite(free) ? `${formatBytes(free)} free` : 'free memory not recorded';
    const ratio = Number.isFinite(free) && free > 0 ? ` (${(t.size[i]! / free).toFixed(t.size[i]! / free < 10 ? 2 : 0)}× what was free)` : '';
    const holders = out.length < OOMS_WITH_HOLDERS ? groupAllocations(timeline, aliveAt(timeline, timeUs)) : null;
    out.push({
      kind: 'oom',
      timeUs,
      label: `out of memory: asked ${formatBytes(t.size[i]!)}, ${freeText}`,
      detail: [
        `Asked for ${formatBytes(t.size[i]!)} at ${where} with ${freeText} on the device${ratio}.`,
        `PyTorch held ${formatBytes(held)} allocated and ${formatBytes(cache)} reserved (${formatBytes(Math.max(0, cache - held))} cached and unused).`,
        ...adviceLines(
          oomAdvice({
            requestedBytes: t.size[i]!,
            freeBytes: free,
            totalBytes: NaN,
            allocatedBytes: held,
            reservedBytes: cache,
            where: frame ? `${frame.filename}:${frame.line}` : null,
            allocator: 'pytorch',
          }),
        ),
        ...(holders ? ['What held memory then, by user frame:', ...groupLines(holders)] : ['(Holders are listed for the first OOMs only.)']),
      ].join('\n'),
    });
  }
  return out;
}

/** One marker per user frame that still held blocks made during the recording when the snapshot was dumped. */
function leakMarkers(timeline: Timeline): TimelineMarker[] {
  const before = timeline.labels.indexOf(BEFORE_RECORDING);
  const end = aliveAtEnd(timeline).filter((i) => timeline.allocations.label[i] !== before || before < 0);
  const groups = groupAllocations(timeline, end);
  const markers: TimelineMarker[] = groups.slice(0, LEAK_MARKERS).map((g) => ({
    kind: 'leak',
    timeUs: timeline.durationUs,
    label: `alive at the end: ${formatBytes(g.bytes)} in ${g.count} block${g.count === 1 ? '' : 's'} from ${g.title}`,
    detail: `${g.count} block${g.count === 1 ? '' : 's'} (${formatBytes(g.bytes)}, the largest ${formatBytes(g.largest)}) allocated at ${g.title} during the recording were still allocated when the snapshot was dumped. Held on purpose (weights, a cache) or a leak: a group that grows from one snapshot to the next is a leak.`,
    allocation: g.largestIndex,
  }));
  const rest = groups.slice(LEAK_MARKERS);
  if (rest.length) {
    const bytes = rest.reduce((s, g) => s + g.bytes, 0);
    markers.push({
      kind: 'leak',
      timeUs: timeline.durationUs,
      label: `alive at the end: ${formatBytes(bytes)} from ${rest.length} more frames`,
      detail: `${rest.length} more user frames held ${formatBytes(bytes)} at the end; the markers above are the ${LEAK_MARKERS} that held the most.`,
    });
  }
  return markers;
}

function peakMarkers(timeline: Timeline): TimelineMarker[] {
  const peak = peakOf(timeline);
  if (!peak) return [];
  const alive = aliveAt(timeline, peak.timeUs);
  return [
    {
      kind: 'peak',
      timeUs: peak.timeUs,
      label: `peak: ${formatBytes(peak.bytes)} in ${peak.allocations} block${peak.allocations === 1 ? '' : 's'}`,
      detail: [`The most allocated at once (${formatBytes(sumBytes(timeline, alive))}). By user frame:`, ...groupLines(groupAllocations(timeline, alive))].join(
        '\n',
      ),
    },
  ];
}
