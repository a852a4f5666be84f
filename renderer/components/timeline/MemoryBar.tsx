import { monitorUnavailable } from '../../../core/availability';
import { useState } from 'react';
import { useStore } from 'zustand';

import { basenameOf } from '../../../core/workspace/paths';
import type { MemorySource, OpenedMemory } from '../../store/memory-slice';
import type { WorkbenchStore } from '../../store/store';

/**
 * The Memory tab's one bar: which timeline is shown (the run result, a file, the monitor), open a file or a
 * second one to compare, and the controls that apply to what is shown — a file's device when it has several;
 * the monitor's interval, sampling during runs and start/stop only for the monitor and runs, never for a file.
 */
export function MemoryBar({ store, onOpen }: { store: WorkbenchStore; onOpen(as: 'file' | 'compare'): void }) {
  const source = useStore(store, (s) => s.memorySource);
  const file = useStore(store, (s) => s.memoryFile);
  const compare = useStore(store, (s) => s.memoryCompare);
  const monitor = useStore(store, (s) => s.monitor);
  const state = store.getState();
  const sourceButton = (value: MemorySource, label: string, disabled = false, title?: string) => (
    <button
      type="button"
      aria-pressed={source === value}
      disabled={disabled}
      title={title}
      onClick={() => state.showMemorySource(value)}
      data-testid={`memory-source-${value}`}
      className={value === 'file' ? 'memory-file-button' : undefined}
    >
      {label}
    </button>
  );
  return (
    <div className="memory-bar" data-testid="memory-bar">
      <div role="group" aria-label="Timeline shown" className="memory-bar">
        {sourceButton('run', 'Run result')}
        {sourceButton('file', file ? `File: ${file.label ?? basenameOf(file.path)}` : 'File', !file, file?.path)}
        {sourceButton('monitor', monitor.running ? 'Monitor (live)' : 'Monitor')}
      </div>
      <button type="button" onClick={() => onOpen('file')}>
        Open memory snapshot…
      </button>
      {source === 'file' && file && (
        <button type="button" onClick={() => onOpen('compare')}>
          Compare with…
        </button>
      )}
      {source === 'file' && file && <DeviceChoice store={store} which="file" opened={file} />}
      {source === 'file' && compare && <DeviceChoice store={store} which="compare" opened={compare} />}
      {source !== 'file' && <MonitorControls store={store} />}
    </div>
  );
}

/** A snapshot with several devices (a trace with several processes): which one is drawn. */
function DeviceChoice({ store, which, opened }: { store: WorkbenchStore; which: 'file' | 'compare'; opened: OpenedMemory }) {
  if (opened.timelines.length < 2) return null;
  return (
    <label>
      {`${which === 'compare' ? 'Compared ' : ''}${opened.kind === 'trace' ? 'process' : 'device'} `.replace(/^./, (c) => c.toUpperCase())}
      <select value={opened.index} onChange={(e) => store.getState().chooseMemoryTimeline(which, Number(e.target.value))}>
        {opened.timelines.map((t, i) => (
          <option key={i} value={i}>
            {t.title}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The monitor's interval, whether runs sample device memory, and start/stop. */
function MonitorControls({ store }: { store: WorkbenchStore }) {
  const monitor = useStore(store, (s) => s.monitor);
  const sampleRuns = useStore(store, (s) => s.sampleRunsMs);
  // Without NVML there is nothing to monitor or sample: the controls are off and say why (the host's discovery says it).
  const noMonitor = useStore(store, (s) => monitorUnavailable(s.discovery));
  const [interval, setIntervalText] = useState(String(monitor.intervalMs));
  const state = store.getState();
  const intervalMs = Number(interval);
  const intervalOk = Number.isInteger(intervalMs) && intervalMs >= 10 && intervalMs <= 60_000;
  return (
    <span className="memory-bar" role="group" aria-label="Monitor">
      <label>
        every{' '}
        <input
          value={interval}
          onChange={(e) => setIntervalText(e.target.value)}
          size={5}
          inputMode="numeric"
          aria-label="Sampling interval (ms)"
          aria-invalid={!intervalOk}
          disabled={monitor.running}
        />{' '}
        ms
      </label>
      <label title="Runs started here sample each GPU's and each process's memory (at the interval, up to 1000 ms), drawn beside the run's allocations">
        <input
          type="checkbox"
          checked={sampleRuns !== null}
          disabled={!intervalOk || noMonitor !== null}
          aria-describedby={noMonitor ? 'monitor-unavailable' : undefined}
          onChange={(e) => state.setSampleRuns(e.target.checked ? Math.min(1000, intervalMs) : null)}
        />{' '}
        sample during runs
      </label>
      {monitor.running ? (
        <button type="button" onClick={() => state.stopMonitor()} data-testid="monitor-stop">
          Stop monitoring
        </button>
      ) : (
        <button
          type="button"
          onClick={() => void state.startMonitor(intervalMs)}
          disabled={!intervalOk || noMonitor !== null}
          title={noMonitor ?? undefined}
          aria-describedby={noMonitor ? 'monitor-unavailable' : undefined}
          data-testid="monitor-start"
        >
          Start monitoring
        </button>
      )}
      {!intervalOk && !monitor.running && <span className="status-fail">The sampling interval is a whole number of milliseconds from 10 to 60000.</span>}
      {noMonitor && !monitor.running && (
        <span id="monitor-unavailable" className="muted" data-testid="monitor-unavailable">
          {noMonitor}
        </span>
      )}
    </span>
  );
}
