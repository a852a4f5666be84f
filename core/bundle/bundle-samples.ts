import type { SampleSeries } from '../memory/samples';

/**
 * samples.json: device memory sampled through NVML while the run ran (core/memory/samples.ts), drawn on the
 * memory timeline beside the run's own allocations. Other people's processes are in it; a redacted bundle keeps
 * each one's program name and drops the rest of its command line (an argument can be a token), as the doctor's
 * shareable facts do.
 */

/** samples.json is read by the one schema of a saved series (core/memory/sample-series-schema.ts), as result files are. */
export { MAX_SAVED_SAMPLES, sampleSeriesSchema } from '../memory/sample-series-schema';

/** A command line cut to its program's name: `/home/alice/venv/bin/python train.py --token=…` → `python`. */
export function programName(command: string | null): string | null {
  if (command === null) return null;
  const first = command.trim().split(/\s+/)[0] ?? '';
  const name = first.replace(/^.*\//, '');
  return name || null;
}

/** The series as it may leave the machine in a redacted bundle: each process's program name, not its command line. */
export function shareableSamples(series: SampleSeries): SampleSeries {
  return { ...series, processes: series.processes.map((p) => ({ ...p, command: programName(p.command) })) };
}
