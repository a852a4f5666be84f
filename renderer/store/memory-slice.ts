import type { StateCreator } from 'zustand';

import { monitorTimelineId, type ChannelRequest, type ChannelResponse } from '../../core/api/channels';
import { fail, ok, type Result } from '../../core/result';
import type { MemoryFileKind, MemoryOpenEvent, MemoryOpenResult } from '../../core/memory/memory-open';
import { addSamples } from '../../core/memory/sample-batches';
import type { SampleSeries } from '../../core/memory/samples';
import { timelineFromSamples } from '../../core/memory/samples-timeline';
import type { Timeline } from '../../core/memory/timeline';
import type { TimelineTarget } from '../../core/memory/timeline-describe';
import type { TimelineSummary } from '../../core/memory/timeline-model';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { decodeTimeline } from '../../core/memory/timeline-wire';
import { heldOutcomeId, NOT_HELD } from './run-slice';
import type { WorkbenchState } from './store';

/** Which timeline the Memory tab shows: the run result's, a file opened (a snapshot, a saved result, a Chrome trace), or the monitor's. */
export type MemorySource = 'run' | 'file' | 'monitor';

export interface OpenedMemory {
  path: string;
  kind: MemoryFileKind;
  /** One per device that has data (a snapshot), or the run's one. */
  timelines: Timeline[];
  /** The id the host holds each under (memory.export), in the same order. */
  timelineIds: string[];
  summaries: TimelineSummary[];
  notes: string[];
  /** The one shown. */
  index: number;
  /** What to call it, where its file's name says nothing (a bundle's snapshot, kept under a name of its content). */
  label?: string;
  /** A Chrome trace's events that have a duration, in a table. */
  traceEvents?: MemoryOpenResult['traceEvents'];
}

export interface MonitorState {
  running: boolean;
  /** The session's id, as the host made it (monitor.start's first event): what memory.export and bundle.export name its samples by. Null until it comes. */
  id: string | null;
  intervalMs: number;
  /** The samples so far (the oldest dropped past MAX_MONITOR_SAMPLES). */
  series: SampleSeries | null;
  timeline: Timeline | null;
  /** What the sampler said as it went (a device that stopped answering, …). */
  problems: string[];
  /** Why monitoring stopped or could not start. */
  error: string | null;
}

export interface MemorySlice {
  memorySource: MemorySource;
  memoryFile: OpenedMemory | null;
  /** The second file of a comparison (the first is memoryFile). */
  memoryCompare: OpenedMemory | null;
  /** A file being read: for the dialog's progress and Cancel. */
  memoryOpening: { path: string; phase: MemoryOpenEvent['phase'] | null } | null;
  memorySelection: TimelineTarget | null;
  /** The panel of what was alive at a moment (the peak, an OOM): its time, or null when closed. */
  memoryAliveAt: { timeUs: number; title: string } | null;
  memoryMode: 'active' | 'address';
  /** Long idle stretches drawn as breaks in the time axis (core/memory/time-warp.ts), not to scale. */
  memoryGaps: boolean;
  setMemoryGaps(on: boolean): void;
  monitor: MonitorState;
  /** Goes up when the Memory tab has news to show (a file opened): the tab comes forward. */
  memorySeq: number;
  /** The run outcome the Memory tab last took in: a newer one (a run just ended, a result opened) is shown in its place. */
  memoryRunSeen: RunOutcome | null;
  /** Shows a run outcome that arrived since (see memoryRunSeen). */
  showNewRun(outcome: RunOutcome): void;
  /** Runs started from the UI sample device memory this often (ms), for their timeline's device and process tracks; null: they do not. */
  sampleRunsMs: number | null;
  setSampleRuns(ms: number | null): void;
  showMemorySource(source: MemorySource): void;
  /** Reads a snapshot or a saved run result; null when shown, else what went wrong. */
  openMemoryFile(path: string, as: 'file' | 'compare', label?: string): Promise<string | null>;
  cancelMemoryOpen(): void;
  closeMemoryCompare(): void;
  chooseMemoryTimeline(which: 'file' | 'compare', index: number): void;
  selectMemory(target: TimelineTarget | null): void;
  showAliveAt(at: { timeUs: number; title: string } | null): void;
  setMemoryMode(mode: 'active' | 'address'): void;
  startMonitor(intervalMs: number): Promise<void>;
  stopMonitor(): void;
  /**
   * Writes the timeline the Memory tab shows (a trace), or its samples (CSV), to `path` (a full path): the host writes
   * what it holds under the shown timeline's id. What it wrote, or the host's words.
   */
  exportMemory(format: 'trace' | 'csv', path: string): Promise<Result<ChannelResponse<'memory.export'>>>;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

let openAbort: AbortController | null = null;
let monitorAbort: AbortController | null = null;

type Set = Parameters<StateCreator<WorkbenchState, [], [], MemorySlice>>[0];
type Get = Parameters<StateCreator<WorkbenchState, [], [], MemorySlice>>[1];

export const createMemorySlice: StateCreator<WorkbenchState, [], [], MemorySlice> = (set, get) => ({
  memorySource: 'run',
  memoryFile: null,
  memoryCompare: null,
  memoryOpening: null,
  memorySelection: null,
  memoryAliveAt: null,
  memoryMode: 'active',
  memoryGaps: true,
  monitor: { running: false, id: null, intervalMs: 100, series: null, timeline: null, problems: [], error: null },
  memorySeq: 0,
  memoryRunSeen: null,

  sampleRunsMs: null,
  setSampleRuns: (ms) => set({ sampleRunsMs: ms }),

  showNewRun: (outcome) => set({ memoryRunSeen: outcome, memorySource: 'run', memorySelection: null, memoryAliveAt: null }),

  showMemorySource: (source) => set({ memorySource: source, memorySelection: null, memoryAliveAt: null }),

  ...fileActions(set, get),

  selectMemory: (target) => set({ memorySelection: target }),

  showAliveAt: (at) => set({ memoryAliveAt: at }),

  setMemoryMode: (mode) => set({ memoryMode: mode }),

  setMemoryGaps: (on) => set({ memoryGaps: on }),

  ...monitorActions(set, get),

  exportMemory: async (format, path) => {
    const shown = shownTimelineId(get());
    if (!shown.ok) return shown;
    try {
      return ok(await get().api.invoke('memory.export', { format, path, ...shown.value }));
    } catch (error) {
      return fail(message(error));
    }
  },
});

/**
 * The id of what the Memory tab shows, as the host holds it: the file's timeline, the monitor's samples, or the run's
 * outcome (with the monitor whose samples its timeline is drawn with, when the run took none of its own).
 */
function shownTimelineId(s: WorkbenchState): Result<Pick<ChannelRequest<'memory.export'>, 'timelineId' | 'monitorId'>> {
  if (s.memorySource === 'file') {
    const id = s.memoryFile?.timelineIds[s.memoryFile.index];
    return id ? ok({ timelineId: id }) : fail('There is no timeline to export: open a file first.');
  }
  if (s.memorySource === 'monitor')
    return s.monitor.id ? ok({ timelineId: monitorTimelineId(s.monitor.id) }) : fail('There is nothing to export: start monitoring first.');
  const id = heldOutcomeId(s.outcome);
  if (!id) return fail(NOT_HELD('export its memory'));
  return ok({ timelineId: id, ...(s.monitor.id && !s.outcome?.samples ? { monitorId: s.monitor.id } : {}) });
}

/** Files opened into the Memory tab: read on the host (a snapshot, a saved result), one shown, a second to compare. */
function fileActions(set: Set, get: Get): Pick<MemorySlice, 'openMemoryFile' | 'cancelMemoryOpen' | 'closeMemoryCompare' | 'chooseMemoryTimeline'> {
  return {
    openMemoryFile: async (path, as, label) => {
      openAbort?.abort();
      const controller = new AbortController();
      openAbort = controller;
      set({ memoryOpening: { path, phase: null } });
      try {
        const result = await get().api.invoke(
          'memory.open',
          { path },
          {
            signal: controller.signal,
            onEvent: (event) => set((s) => (s.memoryOpening && openAbort === controller ? { memoryOpening: { ...s.memoryOpening, phase: event.phase } } : {})),
          },
        );
        const timelines = result.timelines.map((wire) => decodeTimeline(wire));
        if (timelines.length === 0) return `${path} holds no memory timeline: ${result.notes.join(' ') || 'no device has allocations or segments in it.'}`;
        const opened: OpenedMemory = {
          path: result.path,
          kind: result.kind,
          timelines,
          timelineIds: result.timelineIds,
          summaries: result.summary,
          notes: result.notes,
          index: 0,
          label,
          ...(result.traceEvents ? { traceEvents: result.traceEvents } : {}),
        };
        if (as === 'compare') set({ memoryCompare: opened, memoryAliveAt: null });
        else
          set((s) => ({
            memoryFile: opened,
            memorySource: 'file',
            memorySelection: null,
            memoryAliveAt: null,
            memorySeq: s.memorySeq + 1,
            memoryRunSeen: s.outcome,
          }));
        return null;
      } catch (error) {
        return controller.signal.aborted ? 'Cancelled: nothing was opened.' : message(error);
      } finally {
        if (openAbort === controller) {
          openAbort = null;
          set({ memoryOpening: null });
        }
      }
    },

    cancelMemoryOpen: () => openAbort?.abort(),

    closeMemoryCompare: () => set({ memoryCompare: null }),

    chooseMemoryTimeline: (which, index) =>
      set((s) => {
        const opened = which === 'file' ? s.memoryFile : s.memoryCompare;
        if (!opened || !opened.timelines[index]) return {};
        const next = { ...opened, index };
        return which === 'file' ? { memoryFile: next, memorySelection: null, memoryAliveAt: null } : { memoryCompare: next };
      }),
  };
}

/** The monitor: NVML sampled on the host, each batch of samples added to a timeline drawn live, until stopped. */
function monitorActions(set: Set, get: Get): Pick<MemorySlice, 'startMonitor' | 'stopMonitor'> {
  return {
    startMonitor: async (intervalMs) => {
      if (get().monitor.running) return;
      const controller = new AbortController();
      monitorAbort = controller;
      const devices = get().devices;
      const known = devices?.ok ? devices.devices.map((d) => ({ index: d.ordinal, name: d.name, uuid: d.uuid, totalBytes: d.totalMemBytes })) : [];
      const series: SampleSeries = { intervalMs, devices: known, processes: [], samples: [], dropped: 0 };
      set((s) => ({
        monitor: { running: true, id: null, intervalMs, series, timeline: timelineFromSamples(series, 'Monitor'), problems: [], error: null },
        memorySource: 'monitor',
        memorySelection: null,
        memoryAliveAt: null,
        memorySeq: s.memorySeq + 1,
        memoryRunSeen: s.outcome,
      }));
      try {
        await get().api.invoke(
          'monitor.start',
          { intervalMs },
          {
            signal: controller.signal,
            onEvent: (event) => {
              if (monitorAbort !== controller) return;
              // The id the host made for this session: what its samples are exported and bundled by.
              if (event.kind === 'started') return set((s) => ({ monitor: { ...s.monitor, id: event.id } }));
              if (event.kind === 'problem') return set((s) => ({ monitor: { ...s.monitor, problems: [...s.monitor.problems.slice(-9), event.text] } }));
              set((s) => {
                const next = addSamples(s.monitor.series ?? series, event.samples, event.processes);
                return { monitor: { ...s.monitor, series: next, timeline: timelineFromSamples(next, 'Monitor') } };
              });
            },
          },
        );
      } catch (error) {
        if (!controller.signal.aborted)
          set((s) => ({
            monitor: {
              ...s.monitor,
              error: `Monitoring stopped: ${message(error)}`,
              // nothing was sampled: no empty timeline, just the reason
              timeline: s.monitor.series?.samples.length ? s.monitor.timeline : null,
            },
          }));
      } finally {
        if (monitorAbort === controller) monitorAbort = null;
        set((s) => ({ monitor: { ...s.monitor, running: false } }));
      }
    },

    stopMonitor: () => monitorAbort?.abort(),
  };
}
