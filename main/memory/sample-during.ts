import type { MonitorReport } from '../../core/memory/monitor-report';
import type { SampleStore } from '../../core/memory/sample-store';
import type { SamplerEvent } from './memory-sampler';
import { runMonitorSession } from './monitor-session';
import { NvmlUnavailableError, openNvmlSource, type NvmlSource } from './nvml-source';

let shared: Promise<NvmlSource> | null = null;

export interface SampledWork<T> {
  value: T;
  /** Null when NVML could not sample (then `problem` says why): the work ran all the same. */
  report: MonitorReport | null;
  store: SampleStore | null;
  problem: string | null;
}

/**
 * Runs `work` while sampling the devices (the whole device: a plan's runner is the workbench's own, so it is
 * never flagged), with a baseline taken before the work starts. For the run service to sample while a plan
 * runs: `sampleDuring(() => runPlan(…), { intervalMs: 10 })`. Without NVML the work still runs, unsampled.
 */
export async function sampleDuring<T>(
  work: () => Promise<T>,
  options: { intervalMs: number; onEvent?: (event: SamplerEvent) => void },
): Promise<SampledWork<T>> {
  shared ??= openNvmlSource();
  let source: NvmlSource;
  try {
    source = await shared;
  } catch (error) {
    shared = null;
    const problem = error instanceof NvmlUnavailableError ? `${error.problem.title}: ${error.problem.detail}` : String(error);
    return { value: await work(), report: null, store: null, problem };
  }
  const stop = new AbortController();
  let sampling!: () => void;
  const started = new Promise<void>((resolve) => (sampling = resolve));
  const session = runMonitorSession(source, {
    target: { kind: 'device' },
    intervalMs: options.intervalMs,
    signal: stop.signal,
    onSampling: () => sampling(),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  // A session that fails before sampling (it cannot: the source answered) must not leave the work waiting.
  await Promise.race([started, session.then(() => undefined)]);
  try {
    const value = await work();
    // The work's last frees land just before it returns: a few more samples see the memory come back.
    await new Promise((resolve) => setTimeout(resolve, Math.max(3 * options.intervalMs, 50)));
    stop.abort();
    const { report, store } = await session;
    return { value, report, store, problem: null };
  } catch (error) {
    stop.abort();
    await session.catch(() => undefined);
    throw error;
  }
}
