/**
 * A run's memory timeline, from the runner's event log (core/runner/event-log.ts): each buffer's allocation from
 * its alloc to its free, the launches (on the GPU's own clock where CUDA events timed them), copies, memsets,
 * syncs and module loads as spans, the run's live bytes, and — when NVML was sampled while it ran — each device's
 * used memory and each process's, on the same axis. Markers: the failure, an allocation that ran out of memory,
 * the buffers a completed plan never freed, and the peak.
 *
 * A buffer the plan never freed is freed by the workbench's teardown; that free does not end it here (it is
 * drawn alive to the end, as a leak), and it does not lower the run's live bytes.
 *
 * A result saved before the event log existed has only its allocation records (by step): its timeline puts the
 * steps in order, one a millisecond, and says so in its title. A result with neither is refused in words.
 */
import { MAX_RUN_EVENTS, type RunLogEvent } from '../runner/event-log';
import type { RunResult } from '../runner/run-result';
import type { SampleSeries } from './samples';
import { orderedSamples, sampleCounters } from './samples-timeline';
import type { Timeline, TimelineMarker } from './timeline';
import { AllocationsBuilder, CounterBuilder, counterHead, LabelTable, parseAddress, SpansBuilder } from './timeline-columns';
import { aliveAt, peakOf } from './timeline-model';
import { isOutOfMemory } from '../cuda/error-catalog';
import { errorMarker, leakMarker, oomMarker, peakMarker, type RunMarkerContext } from './run-markers';

export class NoEventLogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoEventLogError';
  }
}

export interface RunTimelineOptions {
  title?: string;
  sourceFile?: string | null;
}

/**
 * The samples a run's timeline is drawn with when the run took none of its own: the monitor's, when it was
 * sampling while the run ran (from its start to its end, with a sample either side); else null. The Memory tab
 * draws with these, and memory.export writes the same timeline on the host.
 */
export function samplesDuring(series: SampleSeries | null, result: RunResult): SampleSeries | null {
  const startedAtMs = result.startedAtMs;
  if (!series || startedAtMs === undefined || series.samples.length === 0) return null;
  const durationMs = (result.events ?? []).reduce((m, e) => Math.max(m, e.t + e.dur), 0);
  const from = startedAtMs * 1000;
  const to = from + durationMs * 1000;
  const first = series.samples[0]!.timeUs;
  const last = series.samples[series.samples.length - 1]!.timeUs;
  if (first > to || last < from) return null;
  const { samples } = series;
  const start = Math.max(0, samples.findIndex((x) => x.timeUs >= from) - 1);
  const after = samples.findIndex((x) => x.timeUs > to);
  const end = after === -1 ? samples.length : after + 1;
  if (start === 0 && end === samples.length) return series;
  const kept = samples.slice(start, end);
  const pids = new Set(kept.flatMap((x) => (x.processes ?? []).map((p) => p.pid)));
  return { ...series, samples: kept, processes: series.processes.filter((p) => pids.has(p.pid)), dropped: start === 0 ? series.dropped : 0 };
}

/** Time per step in a timeline built without an event log (steps in order, not to time). */
export const STEP_ORDER_US = 1000;

const runTitle = (result: RunResult) => `Run on ${result.device.name} (cuda:${result.device.ordinal})`;

function stepLabeller(result: RunResult): (step: number | null) => string {
  const labels = new Map(result.steps.map((s) => [s.index, s.label]));
  return (step) => (step === null ? 'teardown' : labels.has(step) ? `step ${step + 1} (${labels.get(step)})` : `step ${step + 1}`);
}

export function timelineFromRun(result: RunResult, samples?: SampleSeries | null, options: RunTimelineOptions = {}): Timeline {
  if (result.events) return fromEvents(result, result.events, samples ?? null, options);
  if (result.memory) return fromStepOrder(result, options);
  throw new NoEventLogError(
    'This result has no event log and no allocation records: it was saved by an older workbench, so there is no memory timeline to draw. Run the plan again to record one.',
  );
}

function fromEvents(result: RunResult, events: RunLogEvent[], samples: SampleSeries | null, options: RunTimelineOptions): Timeline {
  const startUs = typeof result.startedAtMs === 'number' && Number.isFinite(result.startedAtMs) ? result.startedAtMs * 1000 : null;
  const sampleList = samples && startUs !== null ? orderedSamples(samples) : [];
  const originUs = startUs === null ? 0 : Math.min(startUs, sampleList[0]?.timeUs ?? Infinity);
  const offsetUs = startUs === null ? 0 : startUs - originUs;
  const at = (ms: number) => Math.max(0, offsetUs + ms * 1000);

  const labels = new LabelTable();
  const allocations = new AllocationsBuilder();
  const spans = new SpansBuilder();
  const allocated = new CounterBuilder(counterHead('run:allocated', 'allocated by the run', 'allocated'));
  allocated.push(0, 0);
  const live = new Map<string, number>(); // address text -> allocation
  const guard: number[] = []; // per allocation: the guard bytes the driver held beside the buffer
  const teardownFree = new Map<number, number>();
  const pendingMarkers: ((ctx: RunMarkerContext) => TimelineMarker)[] = [];
  let liveBytes = 0;
  let endUs = 0;
  let planEndUs: number | null = null;
  let sawError = false;

  let clock = 0;
  for (const e of events) {
    // The runner logs in order; an event timed before the one before it (an edited file) is drawn at that one's time.
    const t = (clock = Math.max(clock, at(e.t)));
    const tEnd = Math.max(t, at(e.t + Math.max(0, e.dur)));
    endUs = Math.max(endUs, tEnd);
    if (e.phase === 'teardown' && planEndUs === null) planEndUs = t;
    const phase =
      e.phase === 'run' || e.phase === 'load' || e.phase === 'teardown' ? '' : ` (${e.phase === 'determinism' ? 'determinism replay' : 'zeroed-memory probe'})`;
    switch (e.kind) {
      case 'module-load':
        spans.push('module', t, tEnd, labels.id(`load ${e.kernel}`), null);
        break;
      case 'alloc': {
        const key = e.address.toLowerCase();
        const before = live.get(key);
        if (before !== undefined) liveBytes -= endAt(allocations, before, t);
        const i = allocations.push({
          start: t,
          end: Infinity,
          address: parseAddress(e.address),
          size: e.bytes,
          step: e.step ?? -1,
          label: labels.id(e.buffer),
        });
        guard[i] = Math.max(0, e.allocatedBytes - e.bytes);
        live.set(key, i);
        liveBytes += e.bytes;
        allocated.push(t, liveBytes);
        break;
      }
      case 'free': {
        const key = e.address.toLowerCase();
        const i = live.get(key);
        if (i === undefined) break;
        live.delete(key);
        if (e.phase === 'teardown') teardownFree.set(i, t);
        else {
          liveBytes -= endAt(allocations, i, t);
          allocated.push(t, liveBytes);
        }
        break;
      }
      case 'memset':
        spans.push('memset', t, tEnd, labels.id(`memset ${e.buffer} (${e.why})${phase}`), e.step);
        break;
      case 'copy': {
        const what = e.buffer === null ? 'guards' : e.why === 'guards' ? `${e.buffer} guards` : e.buffer;
        spans.push('copy', t, tEnd, labels.id(`${e.direction} ${what}${phase}`), e.step);
        break;
      }
      case 'launch':
        endUs = Math.max(endUs, launchSpans(spans, e, labels.id(`${e.entry || e.kernel}${phase}`), [t, tEnd], at));
        break;
      case 'sync':
        spans.push('sync', t, tEnd, labels.id('sync'), e.step);
        break;
      case 'error': {
        sawError = true;
        const holders = [...live.values()];
        const where = { timeUs: t, step: e.step, api: e.api, error: e.error };
        const sticky = result.failure?.error.code === e.error.code && result.failure.sticky;
        const memory = e.memory ?? (result.failure?.error.code === e.error.code ? result.failure.memory : null);
        pendingMarkers.push((ctx) => (isOutOfMemory(e.error) ? oomMarker(ctx, where, memory, holders) : errorMarker(ctx, where, sticky)));
        break;
      }
    }
  }

  const planEnd = planEndUs ?? endUs;
  // A failure the log does not show (its events were dropped past the bound): marked where the log ends.
  const failure = result.failure;
  if (failure && !sawError) {
    const holders = [...live.values()];
    const where = { timeUs: planEnd, step: failure.stepIndex, api: failure.error.api, error: failure.error };
    pendingMarkers.push((ctx) => (isOutOfMemory(failure.error) ? oomMarker(ctx, where, failure.memory, holders) : errorMarker(ctx, where, failure.sticky)));
  }

  const counters = [allocated.finish(), ...(samples && startUs !== null ? sampleCounters(samples, originUs) : [])];
  const lastSampleUs = sampleList.length ? sampleList[sampleList.length - 1]!.timeUs - originUs : 0;
  const notes = [
    ...(result.eventsDropped ? [`${result.eventsDropped} events past the first ${MAX_RUN_EVENTS} were not recorded`] : []),
    ...(samples && startUs === null ? ['the NVML samples are not shown: the result does not say when the run began'] : []),
  ];
  return finish(result, options, notes, {
    originUs,
    durationUs: Math.max(endUs, lastSampleUs),
    planEndUs: planEnd,
    allocations,
    spans,
    labels,
    counters,
    guard,
    teardownFree,
    pendingMarkers,
    samples,
    sampleOrigin: startUs === null ? null : originUs,
  });
}

/** A launch's kernel spans: on the GPU's clock where CUDA events timed it, else over the host call. Returns where the last ends. */
function launchSpans(
  spans: SpansBuilder,
  e: Extract<RunLogEvent, { kind: 'launch' }>,
  label: number,
  host: [number, number],
  at: (ms: number) => number,
): number {
  const timed = e.gpu.filter((g) => Number.isFinite(g.startMs) && Number.isFinite(g.endMs) && g.endMs >= g.startMs);
  if (!timed.length) spans.push('kernel', host[0], host[1], label, e.step);
  let end = host[1];
  for (const g of timed) {
    spans.push('kernel', at(g.startMs), at(g.endMs), label, e.step);
    end = Math.max(end, at(g.endMs));
  }
  return end;
}

/** Ends allocation i at t; returns its bytes. */
function endAt(allocations: AllocationsBuilder, i: number, t: number): number {
  allocations.setEnd(i, t);
  return allocations.sizeOf(i);
}

interface Parts {
  originUs: number;
  durationUs: number;
  planEndUs: number;
  allocations: AllocationsBuilder;
  spans: SpansBuilder;
  labels: LabelTable;
  counters: Timeline['counters'];
  guard: number[];
  teardownFree: Map<number, number>;
  pendingMarkers: ((ctx: RunMarkerContext) => TimelineMarker)[];
  samples: SampleSeries | null;
  sampleOrigin: number | null;
}

/** The markers that need the finished columns (leaks, the peak, the failure's holders), and the Timeline itself. */
function finish(result: RunResult, options: RunTimelineOptions, notes: string[], p: Parts): Timeline {
  const timeline: Timeline = {
    version: 1,
    source: 'run',
    title: `${options.title ?? runTitle(result)}${notes.length ? ` (${notes.join('; ')})` : ''}`,
    device: result.device.ordinal,
    originUs: p.originUs,
    durationUs: p.durationUs,
    counters: p.counters,
    allocations: p.allocations.finish(),
    spans: p.spans.finish(),
    markers: [],
    labels: p.labels.labels,
    stacks: [],
    steps: result.steps.map((s) => ({ index: s.index, label: s.label })),
    sourceFile: options.sourceFile ?? null,
  };
  const ctx: RunMarkerContext = {
    allocations: timeline.allocations,
    labels: timeline.labels,
    stepLabel: stepLabeller(result),
    samples: p.samples,
    originUs: p.sampleOrigin,
  };
  const markers = p.pendingMarkers.map((make) => make(ctx));
  if (result.failure === null) {
    const a = timeline.allocations;
    for (let i = 0; i < a.count; i++) if (a.end[i] === Infinity) markers.push(leakMarker(ctx, i, p.planEndUs, p.teardownFree.get(i) ?? null));
  }
  const peak = peakOf(timeline);
  if (peak) {
    const alive = aliveAt(timeline, peak.timeUs);
    let guardBytes = 0;
    for (const i of alive) guardBytes += p.guard[i] ?? 0;
    markers.push(peakMarker(ctx, peak, alive, guardBytes));
  }
  timeline.markers = markers.sort((x, y) => x.timeUs - y.timeUs);
  return timeline;
}

/** An older result: its allocation records by step, the steps in order one STEP_ORDER_US apart. */
function fromStepOrder(result: RunResult, options: RunTimelineOptions): Timeline {
  const labels = new LabelTable();
  const allocations = new AllocationsBuilder();
  const spans = new SpansBuilder();
  const at = (step: number) => step * STEP_ORDER_US;
  for (const m of result.memory ?? []) {
    allocations.push({
      start: at(m.allocatedAtStep),
      end: m.freedAtStep === null ? Infinity : at(m.freedAtStep),
      address: parseAddress(m.address),
      size: m.bytes,
      step: m.allocatedAtStep,
      label: labels.id(m.buffer),
    });
  }
  for (const s of result.steps) {
    const lane = s.op === 'launch' ? 'kernel' : s.op === 'upload' || s.op === 'download' ? 'copy' : s.op === 'sync' ? 'sync' : null;
    if (lane) spans.push(lane, at(s.index), at(s.index + 1), labels.id(s.label), s.index);
  }
  const steps = Math.max(result.steps.length, ...(result.memory ?? []).map((m) => Math.max(m.allocatedAtStep, m.freedAtStep ?? 0) + 1));
  const durationUs = at(steps);
  const built = allocations.finish();
  // The live bytes from the records, step by step.
  const allocated = new CounterBuilder(counterHead('run:allocated', 'allocated by the run (by step)', 'allocated'));
  allocated.push(0, 0);
  const changes = new Map<number, number>();
  for (let i = 0; i < built.count; i++) {
    changes.set(built.start[i]!, (changes.get(built.start[i]!) ?? 0) + built.size[i]!);
    if (built.end[i] !== Infinity) changes.set(built.end[i]!, (changes.get(built.end[i]!) ?? 0) - built.size[i]!);
  }
  let bytes = 0;
  for (const time of [...changes.keys()].sort((x, y) => x - y)) allocated.push(time, (bytes += changes.get(time)!));

  const pending: ((ctx: RunMarkerContext) => TimelineMarker)[] = [];
  const failure = result.failure;
  if (failure) {
    const t = failure.stepIndex === null ? durationUs : at(failure.stepIndex);
    const where = { timeUs: t, step: failure.stepIndex, api: failure.error.api, error: failure.error };
    pending.push((ctx) => {
      const holders = aliveAt({ allocations: ctx.allocations }, t);
      return isOutOfMemory(failure.error) ? oomMarker(ctx, where, failure.memory, holders) : errorMarker(ctx, where, failure.sticky);
    });
  }
  return finish(result, options, ['no event log: the steps in order, one a millisecond, not to time'], {
    originUs: 0,
    durationUs,
    planEndUs: durationUs,
    allocations,
    spans,
    labels,
    counters: [allocated.finish()],
    guard: [],
    teardownFree: new Map(),
    pendingMarkers: pending,
    samples: null,
    sampleOrigin: null,
  });
}
