import type { DoctorCheck } from '../discovery';
import { overDevices, unanswered, type DeviceVerdict } from './check-helpers';
import type { NvmlDeviceHealth } from './facts';
import { CLOCK_EVENT_REASONS } from './nvml-codes';

/**
 * Why the clocks are below their maximum right now (NVML's clock event reasons, formerly "throttle reasons").
 * Idle, application clocks, sync boost and display clocks are normal; the power cap is normal under full load
 * (a timing varies with it); thermal slowdown and the hardware slowdowns — which NVML documents as cutting the
 * clocks by half or more — make any timing taken now unrepresentative and point at cooling or power.
 */

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function clocksVerdict(d: NvmlDeviceHealth): DeviceVerdict {
  const f = d.clocksEventReasons;
  if (!f.ok) return { status: 'not-run', evidence: `clock event reasons: ${unanswered(f)}.` };
  // A 64-bit mask: BigInt, since JavaScript's bitwise operators work on 32 bits.
  const mask = BigInt(f.value);
  const active = CLOCK_EVENT_REASONS.filter((r) => (mask & BigInt(r.bit)) !== 0n);
  const unknown = CLOCK_EVENT_REASONS.reduce((rest, r) => rest & ~BigInt(r.bit), mask);
  const names = [...active.map((r) => r.name), ...(unknown ? [`other reasons (0x${unknown.toString(16)})`] : [])];
  const said = names.length ? `clocks limited now by: ${names.join(', ')}.` : 'no clock limit is active.';
  const slowing = active.filter((r) => r.kind === 'hardware' || r.kind === 'thermal');
  if (slowing.length)
    return {
      status: 'warn',
      evidence: `${said} ${capitalized(slowing.map((r) => r.name).join(' and '))} ${slowing.length === 1 ? 'slows' : 'slow'} the GPU: timings taken now are not representative.`,
      remedy: `Check cooling and power: nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i ${d.index} shows which limit and how close it is.`,
    };
  if (active.some((r) => r.kind === 'power')) return { status: 'ok', evidence: `${said} Normal under full load, but kernel timings vary with it.` };
  return { status: 'ok', evidence: said };
}

export function clockChecks(devices: readonly NvmlDeviceHealth[]): DoctorCheck[] {
  return [overDevices({ id: 'clock-limits', area: 'gpu', title: 'Clock limits (throttling)' }, devices, clocksVerdict)];
}
