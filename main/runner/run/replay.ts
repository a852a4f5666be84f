import type { BufferSpec, Step } from '../../../core/plan/plan-schema';
import type { RunPhase } from '../../../core/runner/event-log';
import { setDynamicSharedLimit } from './dynamic-shared';
import { initialData } from './initial-data';
import type { RunState } from './run-state';
import { workbenchError } from './step-failure';

/** What the first run left for a replay: each launch's encoded arguments, and each read-back, by step. */
export interface FirstRun {
  /** The replay covers the steps [0, end): all but the trailing frees. */
  readonly replayEnd: number;
  readonly launchArgs: ReadonlyMap<number, Uint8Array[]>;
  readonly readBacks: ReadonlyMap<number, Uint8Array>;
}

/** One pass of a replay: what it fills memory no upload initialises with, and what it does with each read-back. */
export interface ReplayPass {
  phase: Extract<RunPhase, 'determinism' | 'probe'>;
  /** Set on the run's failure when this pass caused it. */
  flag: 'duringDeterminismRun' | 'duringPoisonProbe';
  /** What memory the first run filled at allocation is filled with now: the poison again, or zeros. */
  fill: { value: number; why: 'poison' | 'zero' };
  onDownload: (stepIndex: number, spec: BufferSpec, data: Uint8Array, first: Uint8Array) => void;
}

/**
 * Every step before the trailing frees once more, on the first run's allocations with the same inputs
 * (uploads repeated, memory filled at allocation filled again as `pass.fill` says). A failure is recorded as the
 * run's, with the flag that says which replay it was; the replay stops there.
 */
export async function replay(run: RunState, first: FirstRun, pass: ReplayPass): Promise<void> {
  run.log.phase = pass.phase;
  for (let index = 0; index < first.replayEnd && !run.failure; index++) {
    const step = run.plan.steps[index]!;
    run.log.step = index;
    try {
      await replayStep(run, first, step, index, pass);
    } catch (error) {
      run.fail(index, step.op, step.op === 'launch' ? step.kernel : null, error);
      run.failure![pass.flag] = true;
    }
  }
  run.log.phase = 'run';
}

async function replayStep(run: RunState, first: FirstRun, step: Step, index: number, pass: ReplayPass): Promise<void> {
  switch (step.op) {
    case 'alloc': {
      const a = run.allocations.get(step.buffer)!;
      if (a.fill >= 0) await run.device.memset(step.buffer, a.pointer, a.bytes, pass.fill.value, pass.fill.why);
      return;
    }
    case 'upload':
      await run.device.upload(step.buffer, run.allocations.get(step.buffer)!, initialData(run.spec(step.buffer)));
      return;
    case 'launch': {
      const fn = run.functions.get(step.kernel)!;
      await setDynamicSharedLimit(run.device.addon, fn.loaded, step.sharedBytes);
      await run.device.launch(step.kernel, fn.entry, {
        functionId: fn.id,
        grid: step.grid,
        block: step.block,
        sharedBytes: step.sharedBytes,
        args: first.launchArgs.get(index)!,
        warmup: step.warmup,
        repeats: step.repeats,
      });
      return;
    }
    case 'sync':
      await run.device.synchronize();
      return;
    case 'download': {
      const { data } = await run.device.download(step.buffer, run.allocations.get(step.buffer)!);
      const firstData = first.readBacks.get(index);
      if (firstData) pass.onDownload(index, run.spec(step.buffer), data, firstData);
      return;
    }
    case 'free':
      throw workbenchError('cuMemFree_v2', 'the determinism check does not replay frees');
  }
}
