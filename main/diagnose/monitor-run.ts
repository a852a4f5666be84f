import type { AbortLike } from '../../core/api/channels';
import type { MonitoredProcess, RunEvidence } from '../../core/diagnose/evidence';
import type { MonitorReport } from '../../core/memory/monitor-report';
import { runMonitorSession } from '../memory/monitor-session';
import type { NvmlSource } from '../memory/nvml-source';

/** The program's run is watched at this period, its processes listed at every other sample: children that live 0.3 s are seen. */
const INTERVAL_MS = 50;
const PROCESS_INTERVAL_MS = 100;
/** Watched this long after the program ends: enough to see its memory come back, short beside the run. */
const TAIL_MS = 200;

/** What the monitor saw of one run: each process's peak (the program's children marked), and the device's. */
export function watchedOf(report: MonitorReport): Pick<RunEvidence, 'processes' | 'memory'> {
  const byPid = new Map<number, MonitoredProcess>();
  for (const p of report.processes) {
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
  };
}

/** Watches the GPUs while a program runs: given its pid once it has started, the report once it has ended. */
export function monitorWhileRunning(nvml: NvmlSource, signal?: AbortLike) {
  let session: Promise<Pick<RunEvidence, 'processes' | 'memory'> | null> = Promise.resolve(null);
  return {
    follow(pid: number) {
      session = runMonitorSession(nvml, {
        target: { kind: 'pid', pid },
        intervalMs: INTERVAL_MS,
        processIntervalMs: PROCESS_INTERVAL_MS,
        tailMs: TAIL_MS,
        signal,
      })
        .then((outcome) => watchedOf(outcome.report))
        .catch(() => null);
    },
    finish: () => session,
  };
}
