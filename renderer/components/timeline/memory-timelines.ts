import { NoEventLogError, samplesDuring, timelineFromRun } from '../../../core/memory/run-timeline';
import type { SampleSeries } from '../../../core/memory/samples';
import type { Timeline } from '../../../core/memory/timeline';
import type { RunOutcome } from '../../../core/runner/run-outcome';

/** The run result's timeline, or in words why there is none. */
export type RunTimeline = { timeline: Timeline; why: null } | { timeline: null; why: string };

const cache = new WeakMap<RunOutcome, { series: SampleSeries | null; value: RunTimeline }>();

/**
 * The memory timeline of a run: from its event log (timelineFromRun), with the device's and each process's
 * memory when the run sampled them (run.plan's sampleIntervalMs) or the monitor was sampling while it ran.
 * Kept per outcome, so re-renders reuse it.
 */
export function runTimeline(outcome: RunOutcome | null, monitor: SampleSeries | null): RunTimeline {
  if (!outcome) return { timeline: null, why: 'No run yet: run a kernel (Ctrl+Enter), or open a saved result in the Run tab, to see its memory over time.' };
  const result = outcome.result;
  if (!result)
    return {
      timeline: null,
      why: `There is no memory timeline: this run has no result from the device to draw (${outcome.diagnosis.headline}).`,
    };
  // the run's own samples when it took them, else the monitor's if it was sampling meanwhile
  const series = outcome.samples ?? samplesDuring(monitor, result);
  const hit = cache.get(outcome);
  if (hit && hit.series === series) return hit.value;
  let value: RunTimeline;
  try {
    value = { timeline: timelineFromRun(result, series), why: null };
  } catch (error) {
    value = {
      timeline: null,
      why:
        error instanceof NoEventLogError
          ? error.message
          : `The run's event log could not be drawn: ${error instanceof Error ? error.message : String(error)}. Run it again with this version of the workbench to record a complete one.`,
    };
  }
  cache.set(outcome, { series, value });
  return value;
}
