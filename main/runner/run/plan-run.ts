import { isOutOfMemory } from '../../../core/cuda/error-catalog';
import { bytesOf, type BufferSpec, type LaunchPlan, type Step } from '../../../core/plan/plan-schema';
import { stepLabel } from '../../../core/plan/step-label';
import { RunEventRecorder } from '../../../core/runner/event-recorder';
import type { CompiledModule } from '../../../core/runner/protocol';
import { chooseChecks, determinismNotRun, type RunChoice } from '../../../core/runner/run-choice';
import type { RunResult } from '../../../core/runner/run-result';
import { toCudaError } from '../cuda-error';
import type { LoadedFunction } from '../module-cache';
import type { CheckContext } from './choose-checks';
import { RecordedDevice, type RunnerAddon } from './recorded-device';
import type { RunChecks } from './run-check';
import { RunState } from './run-state';
import { runStep } from './steps';

/** Read-back data kept for paging; past this the run still reports summaries, but pages are not kept. */
const RETAINED_BYTES_LIMIT = 1024 ** 3;

export interface ExecutedPlan {
  result: RunResult;
  /** The read-back bytes, by buffer name, for paging (empty when over the retention limit). */
  downloads: Map<string, { type: BufferSpec['type']; bytes: Uint8Array }>;
}

export interface PlanRunOptions {
  modules: CompiledModule[];
  device: { ordinal: number; name: string };
  /** The module's function; `loaded` when this call loaded it (a cache hit is no driver call, and no event). */
  loadFunction: (module: CompiledModule) => Promise<{ fn: LoadedFunction; loaded: boolean }>;
  runId: string;
  /** The host's watchdog for this run: the replays are skipped when they could not fit. */
  timeLimitMs: number | null;
}

/**
 * One run of a plan in this (runner) process, the run object: it owns the steps and runs them in order, then
 * frees what the plan left and makes the result. Its checks (choose-checks.ts: guards, poison, the replays,
 * device output, stale and uninitialised uses) are plug-ins acting through their hooks (run-check.ts); the
 * replays run the steps again from the point before the trailing frees. Every launch is followed by a
 * synchronisation, so an error is pinned to the step that caused it — what CUDA_LAUNCH_BLOCKING=1 does for
 * a host program. The first failure ends the run.
 */
export class PlanRun {
  private readonly runStarted = performance.now();
  private readonly startedAtMs = Date.now();
  private readonly state: RunState;
  private readonly choice: RunChoice;
  private readonly checks: RunChecks;

  constructor(
    private readonly addon: RunnerAddon,
    private readonly plan: LaunchPlan,
    private readonly options: PlanRunOptions,
    /** Its checks, from the plan's choice: chooseRunChecks (choose-checks.ts). */
    checksFor: (context: CheckContext) => RunChecks,
  ) {
    /** Every driver call that touches memory or time, on the run's time axis (core/runner/event-log.ts). */
    const log = new RunEventRecorder(() => performance.now(), this.runStarted);
    this.state = new RunState(plan, new RecordedDevice(addon, log));
    this.choice = chooseChecks(plan);
    this.checks = checksFor({ choice: this.choice, run: this.state, addon, runStarted: this.runStarted, timeLimitMs: options.timeLimitMs });
  }

  async execute(): Promise<ExecutedPlan> {
    try {
      // The GPU's time zero for this run: launches are placed after it. Without it they carry no placement.
      await this.addon.markTimeOrigin();
    } catch {
      // An addon without it, or a context that refused the event: the launches' `gpu` lists stay empty.
    }
    this.checks.start();
    await this.load();
    await this.runSteps();
    // A run that stopped early never reached its free steps: that is not a leak in the plan.
    const leaks = this.state.failure ? [] : [...this.state.allocations].map(([name, a]) => ({ name, bytes: a.bytes }));
    if (!this.state.failure?.sticky) await this.teardown();
    this.checks.end();
    return this.result(leaks);
  }

  private async load(): Promise<void> {
    const { state } = this;
    state.log.phase = 'load';
    for (const module of this.options.modules) {
      try {
        const fn = await state.device.loadFunction(module.kernel, module.image.byteLength, () => this.options.loadFunction(module));
        const entry = this.plan.kernels.find((k) => k.id === module.kernel)?.entry ?? module.symbol;
        state.functions.set(module.kernel, { id: fn.id, entry, attributes: fn.attributes, loaded: fn });
      } catch (error) {
        state.fail(null, 'load', module.kernel, error);
        break;
      }
    }
    state.log.phase = 'run';
  }

  /** The first run, step by step; the replays where the steps before the trailing frees are done. */
  private async runSteps(): Promise<void> {
    const { state, plan } = this;
    const replayAt = this.choice.replayEnd;
    for (let index = 0; index < plan.steps.length && !state.failure; index++) {
      if (index === replayAt) {
        await this.checks.atReplayPoint(() => state.failure !== null);
        if (state.failure) break; // a replay's fault is the run's: the frees after it must not replace it
      }
      const step = plan.steps[index]!;
      const started = performance.now();
      let ms: number | null = null;
      state.log.step = index;
      try {
        ms = await runStep(state, this.checks, step, index);
      } catch (error) {
        await this.stepFailed(step, index, error);
      }
      this.checks.afterStep(index, step, state.failure !== null);
      const wallMs = performance.now() - started;
      state.steps.push({ index, op: step.op, label: stepLabel(step, plan), ms: state.failure ? null : (ms ?? wallMs), wallMs });
    }
    if (!state.failure && replayAt === plan.steps.length) await this.checks.atReplayPoint(() => state.failure !== null);
    state.checks.determinism ??= determinismNotRun(this.choice.determinism);
  }

  /** The step's failure is the run's; an allocation that ran out of memory learns the device's memory too. */
  private async stepFailed(step: Step, index: number, error: unknown): Promise<void> {
    const { state } = this;
    const event = state.fail(index, step.op, step.op === 'launch' ? step.kernel : null, error);
    const f = state.failure!;
    if (step.op === 'alloc' && isOutOfMemory(f.error)) {
      const info = await this.addon.memGetInfo().catch(() => null);
      f.memory = info && { requestedBytes: bytesOf(state.spec(step.buffer)), ...info };
      if (event) event.memory = f.memory;
    }
  }

  /** What the plan left allocated is freed, unless a sticky error took the context (nothing can be freed then). */
  private async teardown(): Promise<void> {
    const { state } = this;
    state.log.phase = 'teardown';
    state.log.step = null;
    for (const [name, a] of state.allocations) {
      try {
        await state.device.free(name, a);
      } catch (error) {
        state.log.error(toCudaError(error, 'cuMemFree_v2'));
      }
    }
  }

  private result(leaks: RunResult['leaks']): ExecutedPlan {
    const { state } = this;
    const { downloads } = state;
    const retained = [...downloads.values()].reduce((sum, d) => sum + d.bytes.byteLength, 0) <= RETAINED_BYTES_LIMIT;
    if (!retained) downloads.clear();
    return {
      downloads,
      result: {
        runId: this.options.runId,
        ok: state.failure === null,
        executeMs: performance.now() - this.runStarted,
        device: this.options.device,
        functions: [...state.functions].map(([kernel, f]) => ({ kernel, entry: f.entry, attributes: f.attributes })),
        steps: state.steps,
        launches: state.launches,
        buffers: state.summaries,
        leaks,
        memory: state.memory,
        checks: state.checks,
        pageable: [...downloads.keys()],
        failure: state.failure,
        deviceOutput: state.deviceOutput,
        startedAtMs: this.startedAtMs,
        ...state.log.finish(),
        runnerPid: process.pid,
      },
    };
  }
}
