import type { DeviceInfo } from '../devices';
import { elementSize } from '../plan/element-types';
import type { LaunchPlan } from '../plan/plan-schema';
import type { LaunchRecord } from '../runner/run-result';
import type { Profile } from './profile';

type LaunchStep = Extract<LaunchPlan['steps'][number], { op: 'launch' }>;

/** The launch a profile measures: the plan step asked for, else the first launch. */
export function chooseLaunch(plan: LaunchPlan, step: number | null): { index: number; step: LaunchStep } | { error: string } {
  const launches = plan.steps.flatMap((s, index) => (s.op === 'launch' ? [{ index, step: s }] : []));
  if (!launches.length) return { error: 'the plan launches no kernel, so there is nothing to profile' };
  if (step === null) return launches[0]!;
  const found = launches.find((l) => l.index === step);
  return found ?? { error: `step ${step + 1} is not a launch (the plan's launches are steps ${launches.map((l) => l.index + 1).join(', ')})` };
}

/**
 * How many launches of the same kernel come before this step's first (warm-up and timed runs included): ncu's
 * --launch-skip, so the launch it profiles is this step's.
 */
export function launchesBefore(plan: LaunchPlan, index: number): number {
  const entry = plan.kernels.find((k) => k.id === (plan.steps[index] as LaunchStep).kernel)?.entry;
  let n = 0;
  plan.steps.slice(0, index).forEach((s) => {
    if (s.op !== 'launch') return;
    if (plan.kernels.find((k) => k.id === s.kernel)?.entry === entry) n += (s.warmup ?? 0) + (s.repeats ?? 1);
  });
  return n;
}

/** The device's peak DRAM bandwidth from its attributes: memory clock (kHz) × 2 (double data rate) × bus width (bytes). */
export function peakDramBytesPerSecond(device: DeviceInfo | null): number | null {
  const clockKHz = device?.attributes['MEMORY_CLOCK_RATE'];
  const busBits = device?.attributes['GLOBAL_MEMORY_BUS_WIDTH'];
  return clockKHz && busBits ? clockKHz * 1000 * 2 * (busBits / 8) : null;
}

/** What needs no counters: the launch's time (ncu's duration when it measured, else the median by CUDA events) and the bytes of the buffers it is given. */
export function effectiveFigures(
  plan: LaunchPlan,
  step: LaunchStep,
  record: LaunchRecord | undefined,
  ncuDurationNs: number | null = null,
): Profile['effective'] {
  if (!record && ncuDurationNs === null) return null;
  const seen = new Set<string>();
  const buffers: { name: string; bytes: number }[] = [];
  for (const arg of step.args) {
    if (!('buffer' in arg) || seen.has(arg.buffer)) continue;
    seen.add(arg.buffer);
    const spec = plan.buffers.find((b) => b.name === arg.buffer);
    if (spec) buffers.push({ name: spec.name, bytes: spec.count * elementSize(spec.type) });
  }
  return {
    kernelMs: ncuDurationNs !== null ? ncuDurationNs / 1e6 : record!.medianMs,
    timedBy: ncuDurationNs !== null ? 'ncu' : 'events',
    bytes: buffers.reduce((a, b) => a + b.bytes, 0),
    buffers,
  };
}
