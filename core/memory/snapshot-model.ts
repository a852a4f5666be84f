/**
 * The model of a PyTorch memory snapshot (`torch.cuda.memory._dump_snapshot`), built from what the whitelist
 * unpickler returns. The trace becomes typed columns per device (time, action, address, size, stream, stack),
 * one pass replays it into allocated and reserved bytes over time, and the rest is read from those columns:
 * the peak and what was alive then, OOM events with the request against what was free, what was still alive
 * at the end, and the address-space picture from `segments`. Frames and stacks are interned: PyTorch writes a
 * frame once and refers to it through the pickle memo, and the model keeps that sharing (one id per frame,
 * one per stack).
 *
 * Blocks that were allocated before the recording began (or whose alloc fell out of the trace's ring
 * buffer) have no alloc entry; they are found by comparing the replay with the segments at the end, as
 * PyTorch's MemoryViz does, and are counted from the start of the timeline.
 */
import { thousands } from '../format';
import type { PickleValue } from './unpickle';
import { isInternalFile } from './stack-rows';

export const ACTIONS = [
  'alloc',
  'free_requested',
  'free_completed',
  'segment_alloc',
  'segment_free',
  'segment_map',
  'segment_unmap',
  'snapshot',
  'oom',
  'other',
] as const;
export type TraceAction = (typeof ACTIONS)[number];
const ACTION_CODE = new Map<string, number>(ACTIONS.map((a, i) => [a, i]));
export const A = Object.fromEntries(ACTIONS.map((a, i) => [a, i])) as Record<TraceAction, number>;

export interface Frame {
  filename: string;
  line: number;
  name: string;
}

/** One device's trace, column by column; index i across the columns is the i-th trace entry. */
export interface DeviceTrace {
  device: number;
  count: number;
  /** Microseconds, as PyTorch wrote them (since the epoch). */
  time: Float64Array;
  /** Index into ACTIONS. */
  action: Uint8Array;
  address: Float64Array;
  size: Float64Array;
  stream: Float64Array;
  /** Stack id (into SnapshotModel.stacks), -1 when the entry has no frames. */
  stack: Int32Array;
  /** Bytes allocated / reserved just after each entry (baseline included). */
  allocated: Float64Array;
  reserved: Float64Array;
  /** For an alloc: the index of the free_completed that ended it, -1 if still alive at the end; -1 otherwise. */
  freedAt: Int32Array;
  /** What was already allocated / reserved when the recording began. */
  baseAllocated: number;
  baseReserved: number;
  /** Free bytes on the device reported by an oom entry (NaN elsewhere): only oom entries carry it. */
  deviceFree: Map<number, number>;
}

export interface Block {
  address: number;
  size: number;
  requestedSize: number;
  state: string;
  stack: number;
}

export interface Segment {
  device: number;
  address: number;
  totalSize: number;
  allocatedSize: number;
  stream: number;
  segmentType: string;
  isExpandable: boolean;
  blocks: Block[];
}

export interface SnapshotModel {
  frames: Frame[];
  /** Frame ids, innermost first (as PyTorch writes them). */
  stacks: Int32Array[];
  /** Per stack: the frame id of its top user frame, -1 if it has none. */
  userFrame: Int32Array;
  devices: DeviceTrace[];
  segments: Segment[];
  allocatorSettings: Record<string, unknown>;
}

export class SnapshotFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotFormatError';
  }
}

// ---------------------------------------------------------------------------------------------- reading

const isMap = (v: PickleValue | undefined): v is Map<PickleValue, PickleValue> => v instanceof Map;
const isList = (v: PickleValue | undefined): v is PickleValue[] => Array.isArray(v);
const num = (v: PickleValue | undefined): number => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'boolean' ? Number(v) : NaN);
/** A size in bytes: anything but a whole number from 0 to 2^53 (8 PiB) is none, 0, so that the totals built from sizes stay finite. */
const bytesOf = (v: PickleValue | undefined): number => {
  const n = num(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
};
/** An address: a whole number from 0 to 2^53, else unknown (NaN), as the timeline draws one. */
const addressOf = (v: PickleValue | undefined): number => {
  const n = num(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : NaN;
};

/**
 * The longest text a frame, block or setting keeps (no path is longer: PATH_MAX). A string the pickle shares
 * among many frames is copied once per frame by whatever serializes the model, and hashed per frame when frames
 * are interned; past this it is cut, and says so.
 */
export const MAX_TEXT = 4096;
const clip = (s: string): string => (s.length <= MAX_TEXT ? s : `${s.slice(0, MAX_TEXT)}… (cut from ${thousands(s.length)} characters)`);
/** Text of a scalar; a container is no text (String() of a list would expand every reference in it). */
const str = (v: PickleValue | undefined): string =>
  typeof v === 'string' ? clip(v) : typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' ? String(v) : '';

/** Plain data for the allocator's settings (a small flat dict in a snapshot): at most PLAIN_VALUES values are copied. */
const PLAIN_VALUES = 10_000;
function plain(v: PickleValue, left = { values: PLAIN_VALUES }, depth = 0): unknown {
  if (depth > 8 || left.values-- <= 0) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return clip(v);
  if (v instanceof Uint8Array) return `<${v.byteLength} bytes>`;
  if (v instanceof Map) {
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [k, x] of v) {
      if (left.values <= 0) break;
      out[str(k)] = plain(x, left, depth + 1);
    }
    return out;
  }
  if (v instanceof Set || Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      if (left.values <= 0) break;
      out.push(plain(x, left, depth + 1));
    }
    return out;
  }
  return v;
}

/** Is this frame PyTorch's, Python's or the C++ runtime's rather than the user's own code? */
export const isInternalFrame = (f: Frame): boolean => isInternalFile(f.filename);

/** The innermost frame of the user's own code; failing that, the innermost Python frame; else -1. */
function pickUserFrame(stack: Int32Array, frames: Frame[]): number {
  for (const id of stack) if (!isInternalFrame(frames[id]!)) return id;
  for (const id of stack) if (/\.py$|^<.*>$/.test(frames[id]!.filename)) return id;
  return -1;
}

class Interner {
  frames: Frame[] = [];
  stacks: Int32Array[] = [];
  private frameByObject = new Map<object, number>();
  private frameByText = new Map<string, number>();
  private stackByObject = new Map<object, number>();
  private stackByText = new Map<string, number>();

  frame(v: PickleValue): number {
    if (typeof v === 'object' && v !== null) {
      const known = this.frameByObject.get(v);
      if (known !== undefined) return known;
    }
    const m = isMap(v) ? v : new Map<PickleValue, PickleValue>();
    const f: Frame = { filename: str(m.get('filename')), line: num(m.get('line')) || 0, name: str(m.get('name')) };
    const text = `${f.filename}\0${f.line}\0${f.name}`;
    let id = this.frameByText.get(text);
    if (id === undefined) {
      id = this.frames.length;
      this.frames.push(f);
      this.frameByText.set(text, id);
    }
    if (typeof v === 'object' && v !== null) this.frameByObject.set(v, id);
    return id;
  }

  stack(v: PickleValue | undefined): number {
    if (!isList(v) || v.length === 0) return -1;
    const known = this.stackByObject.get(v);
    if (known !== undefined) return known;
    const ids = new Int32Array(v.length);
    for (let i = 0; i < v.length; i++) ids[i] = this.frame(v[i]!);
    const text = ids.join(',');
    let id = this.stackByText.get(text);
    if (id === undefined) {
      id = this.stacks.length;
      this.stacks.push(ids);
      this.stackByText.set(text, id);
    }
    this.stackByObject.set(v, id);
    return id;
  }
}

/** More devices than any machine has: a snapshot claiming them is refused, not allocated for. */
const MAX_DEVICES = 1024;

/** Builds the model from an unpickled snapshot; throws SnapshotFormatError when it is not one. */
export function buildSnapshotModel(root: PickleValue): SnapshotModel {
  if (!isMap(root)) throw new SnapshotFormatError('This pickle is not a PyTorch memory snapshot: its top level is not a dict.');
  const traces = root.get('device_traces');
  const segmentsIn = root.get('segments');
  if (!isList(traces) && !isList(segmentsIn)) {
    throw new SnapshotFormatError(
      'This pickle is not a PyTorch memory snapshot: it has neither "device_traces" nor "segments" (torch.cuda.memory._dump_snapshot writes both).',
    );
  }
  const intern = new Interner();

  const segments: Segment[] = [];
  for (const s of isList(segmentsIn) ? segmentsIn : []) {
    if (!isMap(s)) continue;
    const blocks: Block[] = [];
    let at = addressOf(s.get('address'));
    for (const b of isList(s.get('blocks')) ? (s.get('blocks') as PickleValue[]) : []) {
      if (!isMap(b)) continue;
      const size = bytesOf(b.get('size'));
      const address = b.has('address') ? addressOf(b.get('address')) : at; // older snapshots leave block addresses implicit
      blocks.push({ address, size, requestedSize: bytesOf(b.get('requested_size')) || size, state: str(b.get('state')), stack: intern.stack(b.get('frames')) });
      at = address + size;
    }
    const device = num(s.get('device')) || 0;
    // A device ordinal sizes the per-device tables below: one past any GPU count is not data, it is a refusal.
    if (!Number.isInteger(device) || device < 0 || device >= MAX_DEVICES)
      throw new SnapshotFormatError(`A segment names device ${device}: a snapshot's devices are numbered 0 to ${MAX_DEVICES - 1}.`);
    segments.push({
      device,
      address: addressOf(s.get('address')),
      totalSize: bytesOf(s.get('total_size')),
      allocatedSize: bytesOf(s.get('allocated_size')),
      stream: num(s.get('stream')) || 0,
      segmentType: str(s.get('segment_type')),
      isExpandable: s.get('is_expandable') === true,
      blocks,
    });
  }

  const devices: DeviceTrace[] = [];
  const traceList = isList(traces) ? traces : [];
  if (traceList.length > MAX_DEVICES)
    throw new SnapshotFormatError(`The snapshot has traces for ${traceList.length} devices; at most ${MAX_DEVICES} are read.`);
  let deviceCount = traceList.length;
  for (const segment of segments) deviceCount = Math.max(deviceCount, segment.device + 1);
  for (let d = 0; d < deviceCount; d++) {
    const entries = traceList[d];
    devices.push(readDevice(d, isList(entries) ? entries : [], intern, segments));
  }

  const userFrame = new Int32Array(intern.stacks.length);
  for (let i = 0; i < intern.stacks.length; i++) userFrame[i] = pickUserFrame(intern.stacks[i]!, intern.frames);
  const settings = root.get('allocator_settings');
  return {
    frames: intern.frames,
    stacks: intern.stacks,
    userFrame,
    devices,
    segments,
    allocatorSettings: isMap(settings) ? (plain(settings) as Record<string, unknown>) : {},
  };
}

function readDevice(device: number, entries: PickleValue[], intern: Interner, segments: Segment[]): DeviceTrace {
  const n = entries.length;
  const time = new Float64Array(n);
  const action = new Uint8Array(n);
  const address = new Float64Array(n);
  const size = new Float64Array(n);
  const stream = new Float64Array(n);
  const stack = new Int32Array(n);
  const allocated = new Float64Array(n);
  const reserved = new Float64Array(n);
  const freedAt = new Int32Array(n).fill(-1);
  const deviceFree = new Map<number, number>();

  const live = new Map<number, number>(); // address -> index of its alloc
  let alloc = 0;
  let res = 0;
  let unmatchedFrees = 0; // freed in the trace, allocated before it
  let unmatchedSegmentFrees = 0;
  for (let i = 0; i < n; i++) {
    const e = entries[i];
    if (!isMap(e)) throw new SnapshotFormatError(`Trace entry ${i} of device ${device} is not a dict.`);
    const named = e.get('action');
    const a = (typeof named === 'string' ? ACTION_CODE.get(named) : undefined) ?? A.other;
    const addr = addressOf(e.get('addr'));
    time[i] = num(e.get('time_us'));
    action[i] = a;
    address[i] = addr;
    size[i] = bytesOf(e.get('size'));
    stream[i] = num(e.get('stream')) || 0;
    stack[i] = intern.stack(e.get('frames'));
    switch (a) {
      case A.alloc:
        live.set(addr, i);
        alloc += size[i]!;
        break;
      case A.free_completed: {
        const from = live.get(addr);
        if (from !== undefined) {
          live.delete(addr);
          freedAt[from] = i;
        } else unmatchedFrees += size[i]!;
        alloc -= size[i]!;
        break;
      }
      case A.segment_alloc:
      case A.segment_map:
        res += size[i]!;
        break;
      case A.segment_free:
      case A.segment_unmap:
        res -= size[i]!;
        if (res < 0) {
          unmatchedSegmentFrees -= res;
          res = 0;
        }
        break;
      case A.oom:
        deviceFree.set(i, num(e.get('device_free')));
        break;
    }
    allocated[i] = alloc;
    reserved[i] = res;
  }

  // The baseline: what the segments hold at the end that the replay does not account for.
  let endActive = 0;
  let endReserved = 0;
  for (const s of segments) {
    if (s.device !== device) continue;
    endReserved += s.totalSize;
    for (const b of s.blocks) if (b.state.startsWith('active')) endActive += b.size;
  }
  const endAlloc = n ? allocated[n - 1]! : 0;
  const endRes = n ? reserved[n - 1]! : 0;
  const baseAllocated = Math.max(unmatchedFrees, endActive - endAlloc, 0);
  const baseReserved = Math.max(unmatchedSegmentFrees, endReserved - endRes, 0);
  if (baseAllocated || baseReserved) {
    for (let i = 0; i < n; i++) {
      allocated[i] = allocated[i]! + baseAllocated;
      reserved[i] = reserved[i]! + baseReserved;
    }
  }
  return { device, count: n, time, action, address, size, stream, stack, allocated, reserved, freedAt, baseAllocated, baseReserved, deviceFree };
}

// ---------------------------------------------------------------------------------------------- questions

export interface Allocation {
  /** Trace index of its alloc, -1 for a block allocated before the recording began. */
  index: number;
  address: number;
  size: number;
  timeUs: number | null;
  stream: number;
  stack: number;
  userFrame: Frame | null;
}

export interface FrameGroup {
  frame: Frame | null;
  count: number;
  bytes: number;
  largest: number;
}

export interface Peak {
  bytes: number;
  reserved: number;
  index: number;
  timeUs: number | null;
}

export interface OomEvent {
  index: number;
  timeUs: number;
  request: number;
  deviceFree: number;
  allocated: number;
  reserved: number;
  /** Reserved by PyTorch's cache but not allocated: what the allocator could have reused. */
  cachedFree: number;
  stream: number;
  userFrame: Frame | null;
}

const userFrameOf = (model: SnapshotModel, stack: number): Frame | null => {
  if (stack < 0) return null;
  const id = model.userFrame[stack]!;
  return id < 0 ? null : model.frames[id]!;
};

export const describeFrame = (f: Frame | null): string => (f ? `${f.filename}:${f.line} ${f.name}` : '(no user frame)');

/** The highest allocated bytes; the first entry that reached it. */
export function peakOf(t: DeviceTrace): Peak {
  let best = -1;
  let bytes = t.baseAllocated;
  for (let i = 0; i < t.count; i++) {
    if (t.allocated[i]! > bytes) {
      bytes = t.allocated[i]!;
      best = i;
    }
  }
  return { bytes, reserved: best >= 0 ? t.reserved[best]! : t.baseReserved, index: best, timeUs: best >= 0 ? t.time[best]! : null };
}

/** Blocks alive at the end that the trace never allocated: they predate the recording. */
export function beforeRecording(model: SnapshotModel, t: DeviceTrace): Allocation[] {
  const fromTrace = new Set<number>();
  for (let i = 0; i < t.count; i++) if (t.action[i] === A.alloc && t.freedAt[i] === -1) fromTrace.add(t.address[i]!);
  const out: Allocation[] = [];
  for (const s of model.segments) {
    if (s.device !== t.device) continue;
    for (const b of s.blocks) {
      if (!b.state.startsWith('active') || fromTrace.has(b.address)) continue;
      out.push({ index: -1, address: b.address, size: b.size, timeUs: null, stream: s.stream, stack: b.stack, userFrame: userFrameOf(model, b.stack) });
    }
  }
  return out;
}

/** Allocations made in the trace and alive just after entry `at` (at = count - 1: at the end). */
export function aliveAt(model: SnapshotModel, t: DeviceTrace, at: number): Allocation[] {
  const out: Allocation[] = [];
  for (let i = 0; i <= at && i < t.count; i++) {
    if (t.action[i] !== A.alloc) continue;
    const freed = t.freedAt[i]!;
    if (freed !== -1 && freed <= at) continue;
    out.push({
      index: i,
      address: t.address[i]!,
      size: t.size[i]!,
      timeUs: t.time[i]!,
      stream: t.stream[i]!,
      stack: t.stack[i]!,
      userFrame: userFrameOf(model, t.stack[i]!),
    });
  }
  return out;
}

/** Allocations grouped by their top user frame, largest total first. */
export function groupByUserFrame(allocations: Allocation[]): FrameGroup[] {
  // Frames are interned (one object per frame), so the object is the key: no text built per allocation.
  const groups = new Map<Frame | null, FrameGroup>();
  for (const a of allocations) {
    let g = groups.get(a.userFrame);
    if (!g) groups.set(a.userFrame, (g = { frame: a.userFrame, count: 0, bytes: 0, largest: 0 }));
    g.count++;
    g.bytes += a.size;
    g.largest = Math.max(g.largest, a.size);
  }
  return [...groups.values()].sort((x, y) => y.bytes - x.bytes || y.count - x.count);
}

export function oomEvents(model: SnapshotModel, t: DeviceTrace): OomEvent[] {
  const out: OomEvent[] = [];
  for (let i = 0; i < t.count; i++) {
    if (t.action[i] !== A.oom) continue;
    // The oom entry itself changes nothing: what was held is what the entry before it left.
    const allocated = i > 0 ? t.allocated[i - 1]! : t.baseAllocated;
    const reserved = i > 0 ? t.reserved[i - 1]! : t.baseReserved;
    out.push({
      index: i,
      timeUs: t.time[i]!,
      request: t.size[i]!,
      deviceFree: t.deviceFree.get(i) ?? NaN,
      allocated,
      reserved,
      cachedFree: Math.max(0, reserved - allocated),
      stream: t.stream[i]!,
      userFrame: userFrameOf(model, t.stack[i]!),
    });
  }
  return out;
}

export interface SegmentPicture {
  device: number;
  address: number;
  totalSize: number;
  stream: number;
  /** Used blocks and the gaps (inactive blocks) between them, in address order. */
  parts: { address: number; size: number; kind: 'used' | 'gap'; stack: number }[];
  largestGap: number;
}

/** Where each block lives in its segment, and the gaps between them (from the segments at the end). */
export function addressSpace(model: SnapshotModel): SegmentPicture[] {
  return [...model.segments]
    .sort((a, b) => a.device - b.device || a.address - b.address)
    .map((s) => {
      const parts = [...s.blocks]
        .sort((a, b) => a.address - b.address)
        .map((b) => ({ address: b.address, size: b.size, kind: b.state.startsWith('active') ? ('used' as const) : ('gap' as const), stack: b.stack }));
      const largestGap = parts.reduce((m, p) => (p.kind === 'gap' ? Math.max(m, p.size) : m), 0);
      return { device: s.device, address: s.address, totalSize: s.totalSize, stream: s.stream, parts, largestGap };
    });
}

// ---------------------------------------------------------------------------------------------- summary

export interface DeviceSummary {
  device: number;
  entries: number;
  startUs: number | null;
  endUs: number | null;
  peak: Peak & { allocations: number; groups: FrameGroup[]; largest: Allocation[] };
  ooms: (OomEvent & { holders: FrameGroup[] })[];
  atEnd: { allocated: number; reserved: number; allocations: Allocation[]; groups: FrameGroup[] };
  beforeRecording: { bytes: number; allocations: Allocation[]; groups: FrameGroup[] };
  segments: { count: number; reserved: number; largestGap: number };
}

const LARGEST = 10;

/** What the CLI prints and `--json` carries: one summary per device that has a trace or segments. */
export function summarize(model: SnapshotModel): DeviceSummary[] {
  const pictures = addressSpace(model);
  return model.devices
    .filter((t) => t.count > 0 || model.segments.some((s) => s.device === t.device))
    .map((t) => {
      const peak = peakOf(t);
      const before = beforeRecording(model, t);
      const atPeak = [...before, ...(peak.index >= 0 ? aliveAt(model, t, peak.index) : [])];
      const atEnd = aliveAt(model, t, t.count - 1);
      const bySize = (x: Allocation, y: Allocation) => y.size - x.size || x.index - y.index;
      const segs = pictures.filter((p) => p.device === t.device);
      return {
        device: t.device,
        entries: t.count,
        startUs: t.count ? t.time[0]! : null,
        endUs: t.count ? t.time[t.count - 1]! : null,
        peak: { ...peak, allocations: atPeak.length, groups: groupByUserFrame(atPeak), largest: [...atPeak].sort(bySize).slice(0, LARGEST) },
        // Holders for the first OOMs only: each is one pass over the trace up to it.
        ooms: oomEvents(model, t).map((o, k) => ({ ...o, holders: k < 20 ? groupByUserFrame([...before, ...aliveAt(model, t, o.index)]) : [] })),
        atEnd: {
          allocated: t.count ? t.allocated[t.count - 1]! : t.baseAllocated,
          reserved: t.count ? t.reserved[t.count - 1]! : t.baseReserved,
          allocations: atEnd,
          groups: groupByUserFrame(atEnd),
        },
        beforeRecording: { bytes: before.reduce((s, a) => s + a.size, 0), allocations: before, groups: groupByUserFrame(before) },
        segments: { count: segs.length, reserved: segs.reduce((s, p) => s + p.totalSize, 0), largestGap: segs.reduce((m, p) => Math.max(m, p.largestGap), 0) },
      };
    });
}
