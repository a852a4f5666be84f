import { resolve } from 'node:path';

import { NoEventLogError, timelineFromRun } from '../../core/memory/run-timeline';
import type { SampleSeries } from '../../core/memory/samples';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { formatBytes } from '../../core/format';
import { TraceTooLargeError, writeTimelineTrace } from '../memory/write-trace';

export type RunTraceReport = { path: string; bytes: number; events: number } | { path: string; notWritten: string };

/**
 * `run --trace FILE`: the run's event log (and the device memory sampled while it ran, when there is some) as
 * Chrome Trace Event JSON for Perfetto or chrome://tracing. A run that never reached the runner has no log:
 * that is said, not written as an empty trace.
 */
export async function writeRunTrace(outcome: RunOutcome, file: string, samples: SampleSeries | null = null): Promise<RunTraceReport> {
  const path = resolve(file);
  if (!outcome.result) return { path, notWritten: `the run never reached the GPU (${outcome.status}), so there is no event log to trace` };
  try {
    const timeline = timelineFromRun(outcome.result, samples);
    return { path, ...(await writeTimelineTrace([timeline], path, { source: 'gpu-workbench run' })) };
  } catch (error) {
    if (error instanceof NoEventLogError || error instanceof TraceTooLargeError) return { path, notWritten: error.message };
    throw error;
  }
}

export function renderRunTrace(report: RunTraceReport): string {
  return 'notWritten' in report
    ? `✗ No trace written to ${report.path}: ${report.notWritten}`
    : `Trace: ${report.path} (${formatBytes(report.bytes)}, ${report.events} events) — open it in https://ui.perfetto.dev or chrome://tracing`;
}
