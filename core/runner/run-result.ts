import * as z from 'zod';

import { schemaFor } from '../api/typed-schema';
import { ELEMENT_TYPE_NAMES } from '../plan/element-types';
import { runLogEventSchema } from './event-log-schema';
import type { DeviceOutput } from './device-output';
import type { RunLogEvent } from './event-log';
import type { Dim3 } from '../dims';
import type { BufferSummary } from '../plan/buffer-data';
import type { Comparison } from '../plan/compare';
import type { ElementType } from '../plan/element-types';
import type { GuardDamage } from '../plan/guards';
import type { PoisonScan } from '../plan/poison';

/** A CUDA (or NVRTC, NVML, workbench) failure as it crosses the addon boundary. */
export interface CudaErrorInfo {
  library: string;
  api: string;
  code: number;
  name: string;
  message: string;
}

export interface FunctionAttributes {
  maxThreadsPerBlock: number;
  sharedSizeBytes: number;
  constSizeBytes: number;
  localSizeBytes: number;
  numRegs: number;
  ptxVersion: number;
  binaryVersion: number;
  maxDynamicSharedSizeBytes: number;
}

export interface StepRecord {
  index: number;
  op: string;
  label: string;
  /** The step's own time: the kernel's median by CUDA events, a copy's duration; else wall time. */
  ms: number | null;
  /** Host wall time of the step in the runner, CUDA calls and the workbench's checks included. */
  wallMs: number;
}

export interface LaunchRecord {
  stepIndex: number;
  kernel: string;
  entry: string;
  grid: Dim3;
  block: Dim3;
  sharedBytes: number;
  timesMs: number[];
  minMs: number;
  medianMs: number;
  maxMs: number;
}

export interface RunFailure {
  stepIndex: number | null;
  op: string;
  kernel: string | null;
  error: CudaErrorInfo;
  sticky: boolean;
  /** The first run passed; the fault came when the determinism check ran the launches again. */
  duringDeterminismRun?: boolean;
  /** The first run passed; the fault came when the launches ran again with unwritten memory zeroed. */
  duringPoisonProbe?: boolean;
  /** For an allocation that failed: what it asked for, and the device's memory at that moment. */
  memory?: { requestedBytes: number; freeBytes: number; totalBytes: number } | null;
}

/** A kernel wrote into the guard bytes around a buffer: an out-of-bounds write the hardware let through. */
export interface GuardViolation {
  stepIndex: number;
  kernel: string;
  entry: string;
  buffer: string;
  type: ElementType;
  count: number;
  damage: GuardDamage;
}

/** A launch was given a buffer the plan had already freed: the kernel got a dangling pointer. */
export interface StaleUse {
  stepIndex: number;
  kernel: string;
  buffer: string;
  freedAtStep: number;
}

/** A buffer a kernel received before anything wrote it: it held the poison pattern (or garbage, in a host program). */
export interface UninitialisedUse {
  stepIndex: number;
  kernel: string;
  buffer: string;
}

/** A read-back that came out different when the same launches ran again on the same inputs. */
export interface DeterminismDifference {
  /** Which extra run differed (1 is the first replay). */
  run: number;
  stepIndex: number;
  buffer: string;
  type: ElementType;
  count: number;
  differing: number;
  firstIndex: number;
  /** Element firstIndex in the first run, and in the replay. NaN travels through JSON as null. */
  first: number | null;
  second: number | null;
}

export interface DeterminismReport {
  /** 'compared': the replay ran; 'skipped': it could not (reason says why); 'off': turned off. */
  status: 'compared' | 'skipped' | 'off';
  reason: string | null;
  runs: number;
  /** Wall time of the replays in the runner. */
  ms: number;
  differences: DeterminismDifference[];
}

/**
 * NaN in a read-back, and memory nothing wrote reached a launch: the launches ran once more with that
 * memory zeroed instead of poisoned. NaN that turned into numbers came from the poison.
 */
export interface PoisonProbe {
  status: 'ran' | 'skipped';
  reason: string | null;
  buffers: { buffer: string; stepIndex: number; nanInFirst: number; nanWithZeros: number; firstIndex: number | null }[];
}

export interface RunChecksReport {
  guardBytes: number;
  poison: boolean;
  guardViolations: GuardViolation[];
  staleUses: StaleUse[];
  uninitialised: UninitialisedUse[];
  comparisons: Comparison[];
  /** Absent in results saved before the check existed. */
  determinism?: DeterminismReport;
  /** Present when NaN could have come from memory nothing wrote. */
  poisonProbe?: PoisonProbe;
}

/** One allocation of a plan's buffer: its device address (the buffer's first byte, hex), its size, its steps. */
export interface AllocationRecord {
  buffer: string;
  address: string;
  bytes: number;
  allocatedAtStep: number;
  freedAtStep: number | null;
}

export interface RunResult {
  /** Names this run's read-back data in the runner, for paging through it afterwards. */
  runId: string;
  ok: boolean;
  /** Wall time of the whole plan inside the runner. */
  executeMs: number;
  checks: RunChecksReport;
  /** Buffers whose read-back data the runner keeps for paging (until its next run). */
  pageable: string[];
  device: { ordinal: number; name: string };
  functions: { kernel: string; entry: string; attributes: FunctionAttributes }[];
  steps: StepRecord[];
  launches: LaunchRecord[];
  buffers: (BufferSummary & { poison?: PoisonScan | null })[];
  /** Buffers still allocated when the plan ended: a leak in the plan. */
  leaks: { name: string; bytes: number }[];
  /** Where each buffer lived on the device, and when: what names an address a tool reports (absent in older results). */
  memory?: AllocationRecord[];
  failure: RunFailure | null;
  /** When the run began on the host's wall clock (epoch ms): time zero of `events` (absent in older results). */
  startedAtMs?: number;
  /** The runner's event log: every driver call that touches memory or time (core/runner/event-log.ts). Absent in older results. */
  events?: RunLogEvent[];
  /** Events left out past MAX_RUN_EVENTS. */
  eventsDropped?: number;
  /** Device printf and assert text, by the step after which it appeared (absent in results saved before it was captured). */
  deviceOutput?: DeviceOutput[];
  runnerPid: number;
}

/** Any number: a read-back holds NaN and ±Infinity, which zod's number refuses, as its values. */
export const readBackValueSchema = z.custom<number>((v) => typeof v === 'number', { message: 'expected a number' });
const value = readBackValueSchema;
const count = z.number().int().min(0);
const index = z.number().int().min(0);
const elementType = z.enum(ELEMENT_TYPE_NAMES as [ElementType, ...ElementType[]]);
const dim3 = z.tuple([z.number(), z.number(), z.number()]).readonly();
export const cudaErrorInfoSchema = z.object({ library: z.string(), api: z.string(), code: z.number().int(), name: z.string(), message: z.string() });
const guardDamage = z.object({ side: z.enum(['before', 'after']), bytesChanged: count, nearestElement: z.number().int(), farthestElement: z.number().int() });
const comparison = z.object({
  buffer: z.string(),
  against: z.string(),
  checked: count,
  mismatches: count,
  first: z.array(z.object({ index, expected: value, actual: value })),
  maxAbsError: value,
  tolerance: z.object({ abs: z.number(), rel: z.number() }),
});
const checks = schemaFor<RunChecksReport>()(
  z.object({
    guardBytes: count,
    poison: z.boolean(),
    guardViolations: z.array(
      z.object({ stepIndex: index, kernel: z.string(), entry: z.string(), buffer: z.string(), type: elementType, count, damage: guardDamage }),
    ),
    staleUses: z.array(z.object({ stepIndex: index, kernel: z.string(), buffer: z.string(), freedAtStep: index })),
    uninitialised: z.array(z.object({ stepIndex: index, kernel: z.string(), buffer: z.string() })),
    comparisons: z.array(comparison),
    determinism: z
      .object({
        status: z.enum(['compared', 'skipped', 'off']),
        reason: z.string().nullable(),
        runs: count,
        ms: z.number().min(0),
        differences: z.array(
          z.object({
            run: count,
            stepIndex: index,
            buffer: z.string(),
            type: elementType,
            count,
            differing: count,
            firstIndex: index,
            first: value.nullable(),
            second: value.nullable(),
          }),
        ),
      })
      .optional(),
    poisonProbe: z
      .object({
        status: z.enum(['ran', 'skipped']),
        reason: z.string().nullable(),
        buffers: z.array(z.object({ buffer: z.string(), stepIndex: index, nanInFirst: count, nanWithZeros: count, firstIndex: index.nullable() })),
      })
      .optional(),
  }),
);
const bufferSummary = z.object({
  name: z.string(),
  type: elementType,
  count,
  min: value.nullable(),
  max: value.nullable(),
  mean: value.nullable(),
  nanCount: count,
  infCount: count,
  head: z.array(value),
  tail: z.array(value),
  values: z.array(value).nullable(),
  poison: z.object({ poisonCount: count, firstPoisonIndex: index.nullable(), nanCount: count, firstNanIndex: index.nullable() }).nullable().optional(),
});

/** A run's result, as run.plan answers it inside its outcome. */
export const runResultSchema = schemaFor<RunResult>()(
  z.object({
    runId: z.string(),
    ok: z.boolean(),
    executeMs: z.number().min(0),
    checks,
    pageable: z.array(z.string()),
    device: z.object({ ordinal: index, name: z.string() }),
    functions: z.array(
      z.object({
        kernel: z.string(),
        entry: z.string(),
        attributes: z.object({
          maxThreadsPerBlock: z.number(),
          sharedSizeBytes: z.number(),
          constSizeBytes: z.number(),
          localSizeBytes: z.number(),
          numRegs: z.number(),
          ptxVersion: z.number(),
          binaryVersion: z.number(),
          maxDynamicSharedSizeBytes: z.number(),
        }),
      }),
    ),
    steps: z.array(z.object({ index, op: z.string(), label: z.string(), ms: z.number().nullable(), wallMs: z.number() })),
    launches: z.array(
      z.object({
        stepIndex: index,
        kernel: z.string(),
        entry: z.string(),
        grid: dim3,
        block: dim3,
        sharedBytes: count,
        timesMs: z.array(z.number()),
        minMs: z.number(),
        medianMs: z.number(),
        maxMs: z.number(),
      }),
    ),
    buffers: z.array(bufferSummary),
    leaks: z.array(z.object({ name: z.string(), bytes: count })),
    memory: z.array(z.object({ buffer: z.string(), address: z.string(), bytes: count, allocatedAtStep: index, freedAtStep: index.nullable() })).optional(),
    failure: z
      .object({
        stepIndex: index.nullable(),
        op: z.string(),
        kernel: z.string().nullable(),
        error: cudaErrorInfoSchema,
        sticky: z.boolean(),
        duringDeterminismRun: z.boolean().optional(),
        duringPoisonProbe: z.boolean().optional(),
        memory: z.object({ requestedBytes: z.number(), freeBytes: z.number(), totalBytes: z.number() }).nullable().optional(),
      })
      .nullable(),
    startedAtMs: z.number().optional(),
    events: z.array(runLogEventSchema).optional(),
    eventsDropped: count.optional(),
    deviceOutput: z.array(z.object({ stepIndex: z.number().int(), text: z.string(), droppedBytes: count })).optional(),
    runnerPid: z.number().int(),
  }),
);

export function timingStats(times: number[]): { minMs: number; medianMs: number; maxMs: number } {
  if (times.length === 0) return { minMs: 0, medianMs: 0, maxMs: 0 };
  const sorted = [...times].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { minMs: sorted[0]!, medianMs: median, maxMs: sorted[sorted.length - 1]! };
}
