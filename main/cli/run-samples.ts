import { resolve } from 'node:path';

import { MAX_BUNDLE_SAMPLES } from '../../core/bundle/bundle-samples';
import type { SampleSeries } from '../../core/memory/samples';
import { seriesWith } from '../memory/monitor-export';
import { sampleDuring } from '../memory/sample-during';
import { writeFileAtomic } from '../services/safe-fs';

/** How often `run --samples` samples: often enough to see a short run's allocations, cheap for NVML (bench:nvml). */
export const RUN_SAMPLE_INTERVAL_MS = 10;

/**
 * `run --samples FILE`: the run made while NVML samples every device (main/memory/sample-during.ts), and the
 * samples written as a SampleSeries — what `bundle export --samples` carries into a bundle, beside the run's
 * event log on one clock. Without NVML the run still runs and the reason is returned instead.
 */
export async function runWithSamples<T>(work: () => Promise<T>, file: string): Promise<{ value: T; samples: SampleSeries | null; note: string }> {
  const sampled = await sampleDuring(work, { intervalMs: RUN_SAMPLE_INTERVAL_MS });
  const path = resolve(file);
  if (!sampled.report || !sampled.store)
    return { value: sampled.value, samples: null, note: `✗ No samples written to ${path}: ${sampled.problem ?? 'NVML did not sample'}` };
  const samples = seriesWith(sampled.report, sampled.store, sampled.store.newest(MAX_BUNDLE_SAMPLES));
  await writeFileAtomic(path, JSON.stringify(samples) + '\n');
  return { value: sampled.value, samples, note: `Samples: ${path} (${samples.samples.length} samples every ${RUN_SAMPLE_INTERVAL_MS} ms)` };
}
