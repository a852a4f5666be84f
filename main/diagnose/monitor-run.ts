import type { AbortLike } from '../../core/api/channels';
import type { MonitoredProcess, RunEvidence } from '../../core/diagnose/evidence';
import type { MonitorReport } from '../../core/memory/monitor-report';
import { runMonitorSession } from '../memory/monitor-session';
import type { NvmlSource } from '../memory/nvml-source';

/** The program's run is watched at this period, its processes listed at every other sample: children that live 0.3 s are seen. */
const INTERVAL_MS = 50;
const PROCESS_INTERVAL_MS = 100;
/**
 * Not watched after the program ends: what the diagnosis keeps (each process's peak, the device's peak against its
 * baseline) is seen while it runs, and stopping drains the samples taken up to its exit. A tail only delayed a
 * one-step diagnosis (the next step ends the watch at once): `diagnose -- true` spent 200 ms of its 254 there (H100).
 * A descendant the program left running is named at the exit (MonitorTarget.leftBehind), and not watched after it.
 */
const TAIL_MS = 0;

export type Watched = Pick<RunEvidence, 'processes' | 'memory' | 'watchProblems'>;

/** What the monitor saw of one run: each process's peak (the program's children marked), the device's, what it could not see. */
export function watchedOf(report: MonitorReport): Watched {
  const byPid = new Map<number, MonitoredProcess>();
  for (const p of report.processes) {
    // The workbench's own processes (its runners, a re-run that began as this one ended) are not the program's story.
    if (p.relation === 'workbench') continue;
    const seen = byPid.get(p.pid);
    const peak = (seen?.peakBytes ?? 0) + (p.peakBytes ?? 0);
    byPid.set(p.pid, {
      pid: p.pid,
      command: p.command ?? seen?.command ?? null,
      peakBytes: peak,
      isProgram: p.relation === 'target',
      childOfProgram: p.relation === 'target-descendant',
    });
  }
  const device = [...report.devices].sort((a, b) => b.peakUsedBytes - b.baselineUsedBytes - (a.peakUsedBytes - a.baselineUsedBytes))[0];
  return {
    processes: [...byPid.values()].sort((a, b) => b.peakBytes - a.peakBytes),
    memory: device ? { peakUsedBytes: device.peakUsedBytes, baselineUsedBytes: device.baselineUsedBytes, totalBytes: device.totalBytes } : null,
    watchProblems: report.problems,
  };
}

/**
 * Watches the GPUs while a program runs: given its pid once it has started, the report once it has ended. `stop`
 * ends the sampling (the next step is starting: its processes are not this run's); a cancel ends it too.
 */
export function monitorWhileRunning(nvml: NvmlSource, signal?: AbortLike) {
  const stopped = new AbortController();
  signal?.addEventListener('abort', () => stopped.abort(), { once: true });
  let session: Promise<Watched> = Promise.resolve({ processes: null, memory: null, watchProblems: ['The monitor did not start: the program never started.'] });
  return {
    follow(pid: number) {
      session = runMonitorSession(nvml, {
        target: { kind: 'pid', pid },
        intervalMs: INTERVAL_MS,
        processIntervalMs: PROCESS_INTERVAL_MS,
        tailMs: TAIL_MS,
        signal: stopped.signal,
      })
        .then((outcome) => watchedOf(outcome.report))
        .catch((error: unknown) => ({
          processes: null,
          memory: null,
          watchProblems: [`The monitor failed (${error instanceof Error ? error.message : String(error)}), so this run’s GPU memory was not watched.`],
        }));
    },
    stop: () => stopped.abort(),
    finish: () => session,
  };
}
