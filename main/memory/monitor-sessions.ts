import { randomUUID } from 'node:crypto';

import { ApiError, monitorTimelineId, type CallContext, type ChannelRequest, type MonitorEvent } from '../../core/api/channels';
import { addSamples } from '../../core/memory/sample-batches';
import type { MonitorReport } from '../../core/memory/monitor-report';
import { processRuns } from '../process/process-state';
import type { HeldResults, LiveSeries } from '../services/held-results';
import { runMonitorSession } from './monitor-session';
import { NvmlUnavailableError, openNvmlSource, type NvmlSource } from './nvml-source';

/** Sessions one host runs at once: each samples on its own timer, and a page can open more than it needs. */
export const MAX_MONITOR_SESSIONS = 4;

/**
 * The host's monitoring sessions for the UI (monitor.start / monitor.stop): at most MAX_MONITOR_SESSIONS, each
 * under an id the host makes and gives in the session's first event (for Stop; a caller never chooses it, so no
 * session takes over another's samples); NVML opened once and shared. A session follows a process or the whole
 * device: a request never starts a program. Its samples are kept as the UI keeps them (its series, batch by batch),
 * held for memory.export and bundle.export under monitorTimelineId(id).
 */
export class MonitorSessions {
  private readonly running = new Map<string, AbortController>();
  private source: Promise<NvmlSource> | null = null;

  /** `open`: where NVML comes from (the driver's, through the addon). */
  constructor(
    private readonly held: HeldResults | null = null,
    private readonly open: () => Promise<NvmlSource> = () => openNvmlSource(),
  ) {}

  async start(request: ChannelRequest<'monitor.start'>, context: CallContext<MonitorEvent>): Promise<MonitorReport> {
    if (this.running.size >= MAX_MONITOR_SESSIONS)
      throw new ApiError(`${MAX_MONITOR_SESSIONS} monitoring sessions are already running on this host: stop one first.`, 'MONITOR_BUSY');
    if (request.pid !== undefined && !processRuns(request.pid))
      throw new ApiError(`No process with PID ${request.pid} is running on the host.`, 'NO_SUCH_PROCESS');
    // The slot is taken before anything is awaited, so two calls at once cannot both take the last one.
    const id = `m-${randomUUID()}`;
    const stop = new AbortController();
    context.signal.addEventListener('abort', () => stop.abort(), { once: true });
    if (context.signal.aborted) stop.abort();
    this.running.set(id, stop);
    context.emit({ kind: 'started', id });
    const heldId = this.held ? monitorTimelineId(id) : null;
    let live: LiveSeries | null = null;
    try {
      const source = await this.openSource();
      const kept: LiveSeries = { series: { intervalMs: request.intervalMs ?? 100, devices: source.devices, processes: [], samples: [], dropped: 0 } };
      live = kept;
      if (heldId) this.held!.holdSamples(heldId, kept);
      const { report } = await runMonitorSession(source, {
        target: request.pid !== undefined ? { kind: 'pid', pid: request.pid } : { kind: 'device' },
        intervalMs: request.intervalMs ?? 100,
        ...(request.processIntervalMs !== undefined ? { processIntervalMs: Math.max(request.processIntervalMs, request.intervalMs ?? 100) } : {}),
        durationS: request.durationS ?? null,
        signal: stop.signal,
        onEvent: (event) => {
          if (event.kind === 'batch') {
            kept.series = addSamples(kept.series, event.batch.samples, event.batch.processes);
            context.emit({ kind: 'samples', samples: event.batch.samples, processes: event.batch.processes });
          } else context.emit({ kind: 'problem', text: event.kind === 'problem' ? event.text : event.message });
        },
      });
      return report;
    } finally {
      // Held again at its final size, so the bound counts it.
      if (heldId && live) this.held!.holdSamples(heldId, live);
      this.running.delete(id);
    }
  }

  /** Ends the session of that id (it answers its report); false when none runs by that name. */
  stop(id: string): boolean {
    const session = this.running.get(id);
    session?.abort();
    return session !== undefined;
  }

  /** Ends every session (the host is closing). */
  stopAll(): void {
    for (const s of this.running.values()) s.abort();
  }

  private async openSource(): Promise<NvmlSource> {
    this.source ??= this.open();
    try {
      return await this.source;
    } catch (error) {
      this.source = null; // tried again next time: the driver may have come back
      if (error instanceof NvmlUnavailableError)
        throw new ApiError(`${error.problem.title}. ${error.problem.detail} What to do: ${error.problem.remedy}`, 'NO_NVML');
      throw error;
    }
  }
}
