/**
 * What the memory timeline view draws, whatever it came from: a run's event log (with the NVML samples
 * taken while it ran), a PyTorch snapshot, or a monitoring session. Columns are typed arrays so a
 * million allocations cost a few tens of megabytes and draw without building an object per row.
 *
 * All times are microseconds after `originUs` (itself microseconds since the Unix epoch, for the wall
 * clock). Counters are step functions: value[i] holds from time[i] until time[i + 1] (or the end).
 */

export interface TimelineFrame {
  file: string;
  line: number;
  name: string;
}

export interface TimelineStack {
  /** Innermost first. */
  frames: TimelineFrame[];
  /** Index into frames of the top frame that is the user's own (not PyTorch's, Python's or the runtime's); -1 if none. */
  userFrame: number;
}

export type CounterGroup = 'device' | 'process' | 'allocated' | 'reserved';

export interface TimelineCounter {
  id: string;
  label: string;
  group: CounterGroup;
  unit: 'bytes';
  /** For a process track. */
  pid?: number;
  /** What flags a process: it has exited but still holds memory, or no program the user runs started it. */
  flag?: { kind: 'exited' | 'foreign' | 'not-visible'; text: string; fix: string };
  /** The ceiling the track is drawn against (the device's total memory), when known. */
  capacity?: number;
  time: Float64Array;
  value: Float64Array;
}

export interface TimelineAllocations {
  count: number;
  start: Float64Array;
  /** +Infinity: still alive when the timeline ends. */
  end: Float64Array;
  address: Float64Array;
  size: Float64Array;
  /** Into Timeline.stacks; -1 when it has none. */
  stack: Int32Array;
  /** The plan step that allocated it; -1 when not from a plan. */
  step: Int32Array;
  /** Into Timeline.labels (a buffer's name); -1 when it has none. */
  label: Int32Array;
}

/** Lanes of the spans track ('other': a Chrome trace's events of any other kind, core/memory/trace-timeline.ts). */
export const SPAN_LANES = ['kernel', 'copy', 'memset', 'sync', 'module', 'other'] as const;
export type SpanLane = (typeof SPAN_LANES)[number];

export interface TimelineSpans {
  count: number;
  start: Float64Array;
  end: Float64Array;
  /** Index into SPAN_LANES. */
  lane: Uint8Array;
  /** Into Timeline.labels: the kernel's name, "HtoD a", … */
  label: Int32Array;
  step: Int32Array;
}

export type MarkerKind = 'oom' | 'leak' | 'error' | 'peak';

export interface TimelineMarker {
  kind: MarkerKind;
  timeUs: number;
  /** One line: "out of memory: asked 80 GiB, 79.1 GiB free". */
  label: string;
  /** The detail a person reads on selecting it: the holders, the step, what to do. */
  detail: string;
  step?: number;
  /** For a leak: the allocation (index into allocations). */
  allocation?: number;
}

export interface Timeline {
  version: 1;
  source: 'run' | 'snapshot' | 'monitor';
  title: string;
  /** The CUDA device (ordinal, or PyTorch's device index) the allocations are on; null when mixed or unknown. */
  device: number | null;
  originUs: number;
  durationUs: number;
  counters: TimelineCounter[];
  allocations: TimelineAllocations;
  spans: TimelineSpans;
  markers: TimelineMarker[];
  labels: string[];
  stacks: TimelineStack[];
  /** The plan's steps by index (for a run): what selecting a span or an allocation names. */
  steps: { index: number; label: string }[];
  /** The source file a step's kernel came from, when known: what "open the line" opens. */
  sourceFile?: string | null;
}
