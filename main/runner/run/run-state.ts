import { isSticky } from '../../../core/cuda/error-catalog';
import type { BufferSpec, LaunchPlan } from '../../../core/plan/plan-schema';
import type { DeviceOutput } from '../../../core/runner/device-output';
import type { RunEventRecorder } from '../../../core/runner/event-recorder';
import type { AllocationRecord, FunctionAttributes, LaunchRecord, RunChecksReport, RunFailure, RunResult, StepRecord } from '../../../core/runner/run-result';
import { toCudaError } from '../cuda-error';
import type { LoadedFunction } from '../module-cache';
import type { Allocation, RecordedDevice } from './recorded-device';
import { StepFailure, workbenchError } from './step-failure';

export type ErrorEvent = ReturnType<RunEventRecorder['error']>;

/** A loaded kernel as the run uses it. */
export interface RunFunction {
  id: number;
  entry: string;
  attributes: FunctionAttributes;
  loaded: LoadedFunction;
}

/**
 * What a run knows as it goes: the plan's buffers where they live, the records the result is made of, and
 * the failure that stops it. The run (plan-run.ts), its steps and its checks share this one object.
 */
export class RunState {
  readonly buffers: Map<string, BufferSpec>;
  readonly allocations = new Map<string, Allocation>();
  /** Buffers freed since their last allocation: the pointer a stale use passes on, and the step that freed it. */
  readonly freed = new Map<string, { pointer: bigint; stepIndex: number }>();
  readonly memory: AllocationRecord[] = [];
  readonly functions = new Map<string, RunFunction>();
  readonly steps: StepRecord[] = [];
  readonly launches: LaunchRecord[] = [];
  readonly summaries: RunResult['buffers'] = [];
  readonly downloads = new Map<string, { type: BufferSpec['type']; bytes: Uint8Array }>();
  readonly deviceOutput: DeviceOutput[] = [];
  readonly checks: RunChecksReport;
  failure: RunFailure | null = null;

  constructor(
    readonly plan: LaunchPlan,
    readonly device: RecordedDevice,
  ) {
    this.buffers = new Map(plan.buffers.map((b) => [b.name, b]));
    this.checks = {
      guardBytes: plan.checks.guardBytes,
      poison: plan.checks.poison,
      guardViolations: [],
      staleUses: [],
      uninitialised: [],
      comparisons: [],
    };
  }

  get log(): RunEventRecorder {
    return this.device.log;
  }

  spec(name: string): BufferSpec {
    return this.buffers.get(name)!;
  }

  /** Records the run's failure, and its event in the log (returned, for what the caller learns after). */
  fail(stepIndex: number | null, op: string, kernel: string | null, error: unknown): ErrorEvent {
    const info = error instanceof StepFailure ? error.error : toCudaError(error, op);
    this.failure = { stepIndex, op, kernel, error: info, sticky: isSticky(info) };
    return this.log.error(info);
  }

  /** The buffer's live allocation; a use before its alloc or after its free is the plan's error, said so. */
  allocated(name: string, api: string): Allocation {
    const a = this.allocations.get(name);
    if (a) return a;
    const gone = this.freed.get(name);
    throw workbenchError(
      api,
      gone
        ? `buffer "${name}" is used after step ${gone.stepIndex + 1} freed it: move the free after its last use`
        : `buffer "${name}" is used before it is allocated: add an alloc step before this one`,
    );
  }
}
