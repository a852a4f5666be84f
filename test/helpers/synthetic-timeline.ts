import type { Timeline, TimelineAllocations, TimelineCounter, TimelineSpans } from '../../core/memory/timeline';

/**
 * Dev-only: Timelines made up for the tests of pure view logic and for the bench, never shown as data. A
 * training-like workload (a bounded working set, allocations of 512 B to 64 MiB, random frees, some never
 * freed), seeded so every run is the same.
 */
export interface SyntheticOptions {
  allocations: number;
  /** How many allocations are alive at most (frees become likelier as the working set nears it). */
  workingSet?: number;
  /** Share of allocations never freed (they are alive when the timeline ends). */
  leakShare?: number;
  /** Share of allocations that live for less than 2 µs. */
  shortShare?: number;
  stacks?: number;
  spans?: number;
  seed?: number;
}

export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

export function emptyAllocations(count = 0): TimelineAllocations {
  return {
    count,
    start: new Float64Array(count),
    end: new Float64Array(count),
    address: new Float64Array(count),
    size: new Float64Array(count),
    stack: new Int32Array(count).fill(-1),
    step: new Int32Array(count).fill(-1),
    label: new Int32Array(count).fill(-1),
  };
}

export function emptySpans(count = 0): TimelineSpans {
  return {
    count,
    start: new Float64Array(count),
    end: new Float64Array(count),
    lane: new Uint8Array(count),
    label: new Int32Array(count),
    step: new Int32Array(count),
  };
}

/** A Timeline of just these allocations ([start, end, size] each), for hand-made cases. */
export function timelineOf(rows: [start: number, end: number, size: number][], extra: Partial<Timeline> = {}): Timeline {
  const a = emptyAllocations(rows.length);
  rows.forEach(([s, e, size], i) => {
    a.start[i] = s;
    a.end[i] = e;
    a.size[i] = size;
    a.address[i] = 0x7f00_0000_0000 + i * 0x10_0000;
  });
  const durationUs = rows.reduce((m, [s, e]) => Math.max(m, s, Number.isFinite(e) ? e : s), 0);
  return {
    version: 1,
    source: 'snapshot',
    title: 'hand-made',
    device: 0,
    originUs: 0,
    durationUs,
    counters: [],
    allocations: a,
    spans: emptySpans(),
    markers: [],
    labels: [],
    stacks: [],
    steps: [],
    ...extra,
  };
}

export function syntheticTimeline(options: SyntheticOptions): Timeline {
  const n = options.allocations;
  const workingSet = options.workingSet ?? 4000;
  const leakShare = options.leakShare ?? 0.001;
  const shortShare = options.shortShare ?? 0.1;
  const stackCount = options.stacks ?? 200;
  const rand = rng(options.seed ?? 42);
  const a = emptyAllocations(n);
  const live: number[] = [];
  let time = 0;
  let address = 0x7f00_0000_0000;
  const free: number[] = [];
  for (let i = 0; i < n; i++) {
    time += 1 + Math.floor(rand() * 20);
    // frees come first, more of them as the working set fills
    while (live.length > 0 && rand() < live.length / workingSet) {
      const k = Math.floor(rand() * live.length);
      const j = live[k]!;
      live[k] = live[live.length - 1]!;
      live.pop();
      a.end[j] = time;
      free.push(a.address[j]!);
    }
    const size = 512 * 2 ** Math.floor(rand() * 18);
    a.start[i] = time;
    a.size[i] = size;
    a.address[i] = free.length > 0 && rand() < 0.5 ? free.pop()! : (address += size);
    a.stack[i] = Math.floor(rand() * stackCount);
    a.step[i] = -1;
    a.label[i] = -1;
    const r = rand();
    if (r < leakShare) a.end[i] = Infinity;
    else if (r < leakShare + shortShare) a.end[i] = time + rand() * 2;
    else {
      a.end[i] = Infinity; // until freed above
      live.push(i);
    }
  }
  // what is still in the working set is freed at the end, except the leaks
  time += 10;
  for (const j of live) a.end[j] = time;
  const durationUs = time + 10;

  const stacks = Array.from({ length: stackCount }, (_, s) => ({
    frames: [
      { file: 'CUDACachingAllocator.cpp', line: 0, name: 'c10::cuda::CUDACachingAllocator::malloc' },
      { file: `/home/user/train/model_${s % 17}.py`, line: 10 + s, name: `forward_${s}` },
      { file: '/home/user/train/train.py', line: 99, name: '<module>' },
    ],
    userFrame: 1,
  }));

  const spanCount = options.spans ?? Math.min(20_000, Math.floor(n / 10));
  const spans = emptySpans(spanCount);
  const labels = ['vecAdd', 'HtoD a', 'DtoH out', 'memset poison', 'sync', 'module load'];
  for (let k = 0; k < spanCount; k++) {
    const s = (k / spanCount) * durationUs;
    spans.start[k] = s;
    spans.end[k] = s + rand() * (durationUs / spanCount) * 0.8;
    spans.lane[k] = k % 5;
    spans.label[k] = k % labels.length;
    spans.step[k] = -1;
  }

  const counters: TimelineCounter[] = [];
  const samples = 2000;
  const time_ = new Float64Array(samples);
  const used = new Float64Array(samples);
  const total = 80 * 2 ** 30;
  for (let k = 0; k < samples; k++) {
    time_[k] = (k / samples) * durationUs;
    used[k] = 2 ** 30 * (4 + 2 * Math.sin(k / 50) + rand());
  }
  counters.push({ id: 'device-used', label: 'Device used', group: 'device', unit: 'bytes', capacity: total, time: time_, value: used });
  counters.push({
    id: 'device-free',
    label: 'Device free',
    group: 'device',
    unit: 'bytes',
    capacity: total,
    time: time_,
    value: used.map((u) => total - u),
  });

  return {
    version: 1,
    source: 'snapshot',
    title: `synthetic ${n.toLocaleString('en')} allocations`,
    device: 0,
    originUs: 1_795_445_700_000_000,
    durationUs,
    counters,
    allocations: a,
    spans,
    markers: [{ kind: 'oom', timeUs: durationUs * 0.6, label: 'out of memory: asked 80 GiB', detail: 'synthetic' }],
    labels,
    stacks,
    steps: [],
  };
}
