import { formatBytes, thousands } from '../format';
import { elementSize } from '../plan/element-types';
import { bytesOf, type LaunchPlan } from '../plan/plan-schema';
import type { DeviceLimits } from './device-limits';
import type { LaunchError, Severity } from './finding';
import { andList } from '../text/shell-words';

/**
 * A plan's memory against the machine it would run on, before anything is allocated: every buffer against the
 * device's total memory (always known: a profile carries it) and its free memory (where NVML said), the most the
 * plan holds at once, and the buffers the host must hold too (uploads and read-backs) against the host's memory.
 * A table of small rules in priority order, each a function from these facts to findings (ARCHITECTURE.md §4b).
 */

/** What the rules know of the machine. */
export interface MemoryFacts {
  device: Pick<DeviceLimits, 'name' | 'totalMemBytes'>;
  /** The device's free memory now, from NVML; null when not known (a profile, no NVML). */
  freeBytes: number | null;
  /** The host's total memory; null when not known. */
  hostBytes: number | null;
}

/** One thing the memory rules have to say: which buffer (null for the plan as a whole), by how much, and the fix. */
export interface MemoryFinding {
  rule: string;
  severity: Severity;
  buffer: string | null;
  message: string;
  limit: number;
  value: number;
  /** What cuMemAlloc (driver API) and cudaMalloc (runtime API) would return; null for the host's memory. */
  driverError: LaunchError | null;
  runtimeError: LaunchError | null;
  fix: string;
}

/** A buffer as the rules see it: its size, whether a step allocates it, and whether the host holds it too. */
interface BufferUse {
  name: string;
  type: LaunchPlan['buffers'][number]['type'];
  bytes: number;
  allocated: boolean;
  /** "uploaded", "read back", "uploaded and read back"; null when the host never holds its data. */
  staged: string | null;
}

interface MemoryContext {
  facts: MemoryFacts;
  buffers: BufferUse[];
  /** The most device memory the plan holds at once: at which step, and which buffers. */
  peak: { bytes: number; stepIndex: number; buffers: string[] } | null;
  /** The findings of the rules before this one. */
  found: MemoryFinding[];
}

type MemoryRule = (ctx: MemoryContext) => MemoryFinding[];

const OUT_OF_MEMORY: LaunchError = { code: 2, name: 'CUDA_ERROR_OUT_OF_MEMORY' };
const RT_OUT_OF_MEMORY: LaunchError = { code: 2, name: 'cudaErrorMemoryAllocation' };

/** "3.2× too large" where the ratio says it well, else the bytes over: "1.5 GiB too large". */
export function howMuchTooLarge(asked: number, have: number, word = 'too large'): string {
  const ratio = asked / Math.max(1, have);
  return ratio >= 1.1 ? `${ratio >= 100 ? thousands(Math.round(ratio)) : trim(ratio.toFixed(1))}× ${word}` : `${formatBytes(asked - have)} ${word}`;
}
const trim = (text: string) => text.replace(/\.0$/, '');

/** `a`, `b` and `c`. */
const names = (list: string[]): string => andList(list.map((n) => `\`${n}\``));

const device = (ctx: MemoryContext) => ctx.facts.device;
const has = (ctx: MemoryContext, rule: string) => ctx.found.some((f) => f.rule === rule);
const freeNow = (ctx: MemoryContext, free: number) =>
  `the ${device(ctx).name} has ${formatBytes(free)} free now (of ${formatBytes(device(ctx).totalMemBytes)}; the CUDA context and other processes hold the rest)`;

function bufferLargerThanDevice(ctx: MemoryContext): MemoryFinding[] {
  const total = device(ctx).totalMemBytes;
  return ctx.buffers
    .filter((b) => b.allocated && b.bytes > total)
    .map((b) => ({
      rule: 'buffer-larger-than-device',
      severity: 'error',
      buffer: b.name,
      message: `Buffer \`${b.name}\` asks for ${formatBytes(b.bytes)}; the ${device(ctx).name} has ${formatBytes(total)} in all: ${howMuchTooLarge(b.bytes, total)}.`,
      limit: total,
      value: b.bytes,
      driverError: OUT_OF_MEMORY,
      runtimeError: RT_OUT_OF_MEMORY,
      fix: `Make \`${b.name}\` smaller — the whole device is ${thousands(Math.floor(total / elementSize(b.type)))} ${b.type} elements, and the CUDA context and the other buffers need some of it — or work through the data in pieces that fit.`,
    }));
}

function planLargerThanDevice(ctx: MemoryContext): MemoryFinding[] {
  const total = device(ctx).totalMemBytes;
  const peak = ctx.peak;
  if (!peak || peak.bytes <= total || has(ctx, 'buffer-larger-than-device')) return [];
  return [
    {
      rule: 'plan-larger-than-device',
      severity: 'error',
      buffer: null,
      message: `At step ${peak.stepIndex + 1} the plan holds ${names(peak.buffers)} at once: ${formatBytes(peak.bytes)}; the ${device(ctx).name} has ${formatBytes(total)} in all: ${howMuchTooLarge(peak.bytes, total, 'too much')}.`,
      limit: total,
      value: peak.bytes,
      driverError: OUT_OF_MEMORY,
      runtimeError: RT_OUT_OF_MEMORY,
      fix: 'Free each buffer once no later step needs it, before allocating the next, or make the buffers smaller.',
    },
  ];
}

function bufferLargerThanFree(ctx: MemoryContext): MemoryFinding[] {
  const free = ctx.facts.freeBytes;
  if (free === null) return [];
  const total = device(ctx).totalMemBytes;
  return ctx.buffers
    .filter((b) => b.allocated && b.bytes > free && b.bytes <= total)
    .map((b) => ({
      rule: 'buffer-larger-than-free',
      severity: 'error',
      buffer: b.name,
      message: `Buffer \`${b.name}\` asks for ${formatBytes(b.bytes)}; ${freeNow(ctx, free)}: ${howMuchTooLarge(b.bytes, free)}.`,
      limit: free,
      value: b.bytes,
      driverError: OUT_OF_MEMORY,
      runtimeError: RT_OUT_OF_MEMORY,
      fix: `Free memory on the device (the Devices view lists who holds it), or make \`${b.name}\` smaller.`,
    }));
}

function planLargerThanFree(ctx: MemoryContext): MemoryFinding[] {
  const free = ctx.facts.freeBytes;
  const peak = ctx.peak;
  if (
    free === null ||
    !peak ||
    peak.bytes <= free ||
    ['buffer-larger-than-device', 'plan-larger-than-device', 'buffer-larger-than-free'].some((r) => has(ctx, r))
  )
    return [];
  return [
    {
      rule: 'plan-larger-than-free',
      severity: 'error',
      buffer: null,
      message: `At step ${peak.stepIndex + 1} the plan holds ${names(peak.buffers)} at once: ${formatBytes(peak.bytes)}; ${freeNow(ctx, free)}: ${howMuchTooLarge(peak.bytes, free, 'too much')}.`,
      limit: free,
      value: peak.bytes,
      driverError: OUT_OF_MEMORY,
      runtimeError: RT_OUT_OF_MEMORY,
      fix: 'Free memory on the device (the Devices view lists who holds it), free each buffer once no later step needs it, or make the buffers smaller.',
    },
  ];
}

function bufferLargerThanHost(ctx: MemoryContext): MemoryFinding[] {
  const host = ctx.facts.hostBytes;
  if (host === null) return [];
  return ctx.buffers
    .filter((b) => b.staged && b.bytes > host)
    .map((b) => ({
      rule: 'buffer-larger-than-host',
      severity: 'error',
      buffer: b.name,
      message: `Buffer \`${b.name}\` is ${b.staged}, so the host holds all ${formatBytes(b.bytes)} of it too; this machine has ${formatBytes(host)} of memory in all: ${howMuchTooLarge(b.bytes, host)}.`,
      limit: host,
      value: b.bytes,
      driverError: null,
      runtimeError: null,
      fix: `Make \`${b.name}\` smaller, or leave out its upload (the kernel then sees the poison pattern) or its read-back.`,
    }));
}

function planLargerThanHost(ctx: MemoryContext): MemoryFinding[] {
  const host = ctx.facts.hostBytes;
  const staged = ctx.buffers.filter((b) => b.staged);
  const bytes = staged.reduce((sum, b) => sum + b.bytes, 0);
  if (host === null || bytes <= host || has(ctx, 'buffer-larger-than-host')) return [];
  return [
    {
      rule: 'plan-larger-than-host',
      severity: 'error',
      buffer: null,
      message: `The buffers the plan uploads and reads back, ${names(staged.map((b) => b.name))}, need ${formatBytes(bytes)} of host memory together; this machine has ${formatBytes(host)} in all: ${howMuchTooLarge(bytes, host, 'too much')}.`,
      limit: host,
      value: bytes,
      driverError: null,
      runtimeError: null,
      fix: 'Make the buffers smaller, or read back only what you need to see.',
    },
  ];
}

/** The rules, in the order they are asked: each sees what the ones before it found. */
export const MEMORY_RULES: readonly (readonly [string, MemoryRule])[] = [
  ['buffer-larger-than-device', bufferLargerThanDevice],
  ['plan-larger-than-device', planLargerThanDevice],
  ['buffer-larger-than-free', bufferLargerThanFree],
  ['plan-larger-than-free', planLargerThanFree],
  ['buffer-larger-than-host', bufferLargerThanHost],
  ['plan-larger-than-host', planLargerThanHost],
];

/** Each buffer's size and use, and the most the steps hold allocated at once (in step order: alloc adds, free takes away). */
export function planMemory(plan: Pick<LaunchPlan, 'buffers' | 'steps'>): Pick<MemoryContext, 'buffers' | 'peak'> {
  const uploads = new Set(plan.steps.flatMap((s) => (s.op === 'upload' ? [s.buffer] : [])));
  const reads = new Set(plan.steps.flatMap((s) => (s.op === 'download' ? [s.buffer] : [])));
  const allocs = new Set(plan.steps.flatMap((s) => (s.op === 'alloc' ? [s.buffer] : [])));
  const buffers = plan.buffers.map((b) => ({
    name: b.name,
    type: b.type,
    bytes: bytesOf(b),
    allocated: allocs.has(b.name),
    staged: uploads.has(b.name) && reads.has(b.name) ? 'uploaded and read back' : uploads.has(b.name) ? 'uploaded' : reads.has(b.name) ? 'read back' : null,
  }));
  const size = new Map(buffers.map((b) => [b.name, b.bytes]));
  const held = new Set<string>();
  let peak: MemoryContext['peak'] = null;
  plan.steps.forEach((step, stepIndex) => {
    if (step.op === 'free') held.delete(step.buffer);
    if (step.op !== 'alloc') return;
    held.add(step.buffer);
    const bytes = [...held].reduce((sum, name) => sum + (size.get(name) ?? 0), 0);
    if (!peak || bytes > peak.bytes) peak = { bytes, stepIndex, buffers: [...held] };
  });
  return { buffers, peak };
}

/** Every memory finding for a plan on a machine, in rule order. */
export function checkPlanMemory(plan: Pick<LaunchPlan, 'buffers' | 'steps'>, facts: MemoryFacts): MemoryFinding[] {
  const ctx: MemoryContext = { facts, ...planMemory(plan), found: [] };
  for (const [, rule] of MEMORY_RULES) ctx.found.push(...rule(ctx));
  return ctx.found;
}
