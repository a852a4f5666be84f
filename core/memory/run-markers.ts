/**
 * The markers of a run's timeline, in words: a failure (the CUDA error decoded), an allocation that ran out of
 * memory (the request against what was free, and who held the rest: the run's own buffers and, when NVML was
 * sampled, every process on the device), the buffers a completed plan never freed, and the peak.
 */
import { isSticky, lookupCode, lookupName } from '../cuda/error-catalog';
import { explanationFor } from '../cuda/explanations';
import { oomAdvice } from './oom-advice';
import { formatBytes } from '../format';
import type { CudaErrorInfo } from '../runner/run-result';
import type { SampleSeries } from './samples';
import { processLines, sampleAt } from './samples-timeline';
import type { TimelineAllocations, TimelineMarker } from './timeline';

export interface RunMarkerContext {
  allocations: TimelineAllocations;
  labels: string[];
  stepLabel: (step: number | null) => string;
  samples: SampleSeries | null;
  /** Microseconds since the epoch of the timeline's time 0, to find the sample of a moment; null when unknown. */
  originUs: number | null;
}

const LISTED = 12;

function bufferName(ctx: RunMarkerContext, i: number): string {
  const l = ctx.allocations.label[i]!;
  return l >= 0 ? (ctx.labels[l] ?? '?') : `0x${ctx.allocations.address[i]!.toString(16)}`;
}

/** "a 4 MiB (step 1 (alloc a))" lines, largest first, bounded. */
function holderLines(ctx: RunMarkerContext, holders: ArrayLike<number>): string[] {
  const a = ctx.allocations;
  const list = Array.from(holders).sort((x, y) => a.size[y]! - a.size[x]! || x - y);
  const lines = list
    .slice(0, LISTED)
    .map((i) => `  ${bufferName(ctx, i)}: ${formatBytes(a.size[i]!)}, from ${ctx.stepLabel(a.step[i]! >= 0 ? a.step[i]! : null)}`);
  if (list.length > LISTED) lines.push(`  … and ${list.length - LISTED} more`);
  return lines;
}

function heldBy(ctx: RunMarkerContext, holders: ArrayLike<number>): string[] {
  let bytes = 0;
  for (let k = 0; k < holders.length; k++) bytes += ctx.allocations.size[holders[k]!]!;
  if (!holders.length) return ['This run held nothing on the device at that moment.'];
  return [`This run held ${holders.length} buffer${holders.length === 1 ? '' : 's'}, ${formatBytes(bytes)}:`, ...holderLines(ctx, holders)];
}

function processesAt(ctx: RunMarkerContext, tUs: number): string[] {
  if (!ctx.samples || ctx.originUs === null) return [];
  const sample = sampleAt(ctx.samples, ctx.originUs + tUs);
  if (!sample) return [];
  const ago = (ctx.originUs + tUs - sample.timeUs) / 1000;
  const when = ago >= 0 ? `${ago.toFixed(1)} ms before` : `${(-ago).toFixed(1)} ms after`;
  return [`Processes holding device memory (NVML, sampled ${when}):`, ...processLines(ctx.samples, sample, null).map((l) => `  ${l}`)];
}

function nextSteps(error: CudaErrorInfo): string[] {
  const explanation = explanationFor(lookupName(error.name) ?? lookupCode(error.code));
  return explanation ? ['What to do:', ...explanation.next.map((n) => `  ${n}`)] : [];
}

/** The advice from the arithmetic (core/memory/oom-advice.ts): the run's own buffers are all it held. */
function runAdvice(
  ctx: RunMarkerContext,
  step: number | null,
  memory: { requestedBytes: number; freeBytes: number; totalBytes: number },
  holders: ArrayLike<number>,
): string[] {
  let held = 0;
  for (let k = 0; k < holders.length; k++) held += ctx.allocations.size[holders[k]!]!;
  const advice = oomAdvice({
    requestedBytes: memory.requestedBytes,
    freeBytes: memory.freeBytes,
    totalBytes: memory.totalBytes,
    allocatedBytes: held,
    reservedBytes: held,
    where: step === null ? null : ctx.stepLabel(step),
    allocator: 'cuda',
  });
  return [advice.headline, ...advice.steps];
}

export function oomMarker(
  ctx: RunMarkerContext,
  at: { timeUs: number; step: number | null; api: string; error: CudaErrorInfo },
  memory: { requestedBytes: number; freeBytes: number; totalBytes: number } | null | undefined,
  holders: ArrayLike<number>,
): TimelineMarker {
  const asked = memory
    ? `asked ${formatBytes(memory.requestedBytes)}, ${formatBytes(memory.freeBytes)} free of ${formatBytes(memory.totalBytes)}`
    : `in ${at.api} (the request and free memory were not recorded)`;
  const ratio = memory && memory.freeBytes > 0 ? memory.requestedBytes / memory.freeBytes : null;
  const lines = [
    `${at.api} failed with ${at.error.name} at ${at.step === null ? 'the run' : ctx.stepLabel(at.step)}.`,
    ...(memory
      ? [
          `It asked for ${formatBytes(memory.requestedBytes)} with ${formatBytes(memory.freeBytes)} free of ${formatBytes(memory.totalBytes)} on the device` +
            (ratio !== null ? ` (${ratio.toFixed(ratio < 10 ? 2 : 0)}× what was free).` : '.'),
        ]
      : []),
    ...(memory ? runAdvice(ctx, at.step, memory, holders) : []),
    ...heldBy(ctx, holders),
    ...processesAt(ctx, at.timeUs),
    ...nextSteps(at.error),
  ];
  return { kind: 'oom', timeUs: at.timeUs, label: `out of memory: ${asked}`, detail: lines.join('\n'), ...(at.step !== null ? { step: at.step } : {}) };
}

export function errorMarker(
  ctx: RunMarkerContext,
  at: { timeUs: number; step: number | null; api: string; error: CudaErrorInfo },
  sticky: boolean,
): TimelineMarker {
  const entry = lookupName(at.error.name) ?? lookupCode(at.error.code);
  const explanation = explanationFor(entry);
  const lines = [
    `${at.api} failed at ${at.step === null ? 'the run' : ctx.stepLabel(at.step)}: ${at.error.name} (${at.error.code}).`,
    at.error.message,
    ...(explanation ? [explanation.summary] : []),
    ...(sticky || isSticky(at.error) ? ['The error is sticky: the CUDA context was dead after it, so the runner that hit it was replaced.'] : []),
    ...nextSteps(at.error),
  ];
  return {
    kind: 'error',
    timeUs: at.timeUs,
    label: `${at.error.name} in ${at.api}`,
    detail: lines.filter((l) => l).join('\n'),
    ...(at.step !== null ? { step: at.step } : {}),
  };
}

export function leakMarker(ctx: RunMarkerContext, allocation: number, timeUs: number, freedAtTeardownUs: number | null): TimelineMarker {
  const a = ctx.allocations;
  const step = a.step[allocation]! >= 0 ? a.step[allocation]! : null;
  const name = bufferName(ctx, allocation);
  const teardown = freedAtTeardownUs === null ? '' : ' The workbench freed it when the run ended.';
  return {
    kind: 'leak',
    timeUs,
    label: `leak: ${name} (${formatBytes(a.size[allocation]!)}) never freed`,
    detail: `${name}: ${formatBytes(a.size[allocation]!)} allocated at ${ctx.stepLabel(step)} and never freed by the plan.${teardown} Add a free step for ${name} after its last use.`,
    ...(step !== null ? { step } : {}),
    allocation,
  };
}

export function peakMarker(ctx: RunMarkerContext, peak: { bytes: number; timeUs: number }, alive: ArrayLike<number>, guardBytes: number): TimelineMarker {
  const guards = guardBytes > 0 ? ` The driver held ${formatBytes(peak.bytes + guardBytes)} for them, the workbench's guard bytes included.` : '';
  return {
    kind: 'peak',
    timeUs: peak.timeUs,
    label: `peak: ${formatBytes(peak.bytes)} in ${alive.length} buffer${alive.length === 1 ? '' : 's'}`,
    detail: [`The most this run had allocated at once.${guards}`, ...holderLines(ctx, alive)].join('\n'),
  };
}
