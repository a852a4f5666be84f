import { useEffect, useMemo, useState } from 'react';

import { MemoryExport } from './MemoryExport';
import { useStore } from 'zustand';

import { monitorUnavailable } from '../../../core/availability';
import { formatBytes } from '../../../core/format';
import type { Timeline, TimelineMarker } from '../../../core/memory/timeline';
import type { TimelineTarget } from '../../../core/memory/timeline-describe';
import { summarySentences } from '../../../core/memory/timeline-describe';
import { summarizeTimeline, type TimelineSummary } from '../../../core/memory/timeline-model';
import { formatDuration } from '../../../core/memory/timeline-viewport';
import { basenameOf, dirnameOf } from '../../../core/workspace/paths';
import { EMPTY_SOURCE_CONTEXT, type SourceContext } from '../../../core/workspace/source-link';
import type { MemorySource } from '../../store/memory-slice';
import type { WorkbenchStore } from '../../store/store';
import { ComparePanel } from './ComparePanel';
import { AliveAtPanel, MemoryDetails } from './MemoryDetails';
import { runTimeline } from './memory-timelines';
import { OpenMemoryDialog } from './OpenMemoryDialog';
import { TimelineView } from './TimelineView';

const MARKER_WORDS: Record<TimelineMarker['kind'], string> = { oom: 'Out of memory', leak: 'Leak', error: 'Error', peak: 'Peak' };
/** Markers listed as buttons beside the timeline (the keyboard's and screen reader's way to each); the rest are counted. */
const LISTED_MARKERS = 40;

/**
 * The Memory tab: the memory timeline of the run result, of a snapshot or result file opened, or of the
 * monitor, with its summary in words, its markers as buttons, and the details of what is selected; a second
 * file to compare with; the monitor started and stopped here.
 */
export function MemoryView({ store }: { store: WorkbenchStore }) {
  const source = useStore(store, (s) => s.memorySource);
  const file = useStore(store, (s) => s.memoryFile);
  const compare = useStore(store, (s) => s.memoryCompare);
  const outcome = useStore(store, (s) => s.outcome);
  const origin = useStore(store, (s) => s.outcomeOrigin);
  const running = useStore(store, (s) => s.running);
  const monitor = useStore(store, (s) => s.monitor);
  const selection = useStore(store, (s) => s.memorySelection);
  const aliveAt = useStore(store, (s) => s.memoryAliveAt);
  const mode = useStore(store, (s) => s.memoryMode);
  const sampleRuns = useStore(store, (s) => s.sampleRunsMs);
  // Without NVML there is nothing to monitor or sample: the controls are off and say why (the host's discovery says it).
  const noMonitor = useStore(store, (s) => monitorUnavailable(s.discovery));
  const [dialog, setDialog] = useState<'file' | 'compare' | null>(null);
  const [interval, setIntervalText] = useState(String(monitor.intervalMs));
  const [compareSelection, setCompareSelection] = useState<TimelineTarget | null>(null);
  const state = store.getState();
  // A run that just ended, or a result just opened: its timeline takes the place of what was shown.
  const seen = useStore(store, (s) => s.memoryRunSeen);
  useEffect(() => {
    if (outcome && outcome !== seen) store.getState().showNewRun(outcome);
  }, [outcome, seen, store]);

  const run = useMemo(() => runTimeline(outcome, monitor.series), [outcome, monitor.series]);
  const shown = useMemo((): { timeline: Timeline | null; why: string | null; name: string; sources: SourceContext; summary: TimelineSummary | null } => {
    if (source === 'file' && file) {
      const timeline = file.timelines[file.index]!;
      return {
        timeline,
        why: null,
        name: `${file.label ?? basenameOf(file.path)}${file.timelines.length > 1 ? `, ${timeline.title}` : ''}`,
        sources: { ...EMPTY_SOURCE_CONTEXT, folders: [dirnameOf(file.path)] },
        summary: file.summaries[file.index] ?? null,
      };
    }
    if (source === 'monitor')
      return {
        timeline: monitor.timeline,
        why: monitor.timeline ? null : 'Start monitoring to see each GPU’s memory, and each process’s, live.',
        name: 'the monitor',
        sources: EMPTY_SOURCE_CONTEXT,
        summary: null,
      };
    return {
      timeline: run.timeline,
      why: run.why,
      name: origin?.file ? basenameOf(origin.file) : 'this run',
      sources: origin?.sources ?? EMPTY_SOURCE_CONTEXT,
      summary: null,
    };
  }, [source, file, monitor.timeline, run, origin]);
  const timeline = shown.timeline;
  // Files come with their summary from the host; a run's or the monitor's timeline is small enough to summarise here.
  const summary = useMemo(() => shown.summary ?? (timeline ? summarizeTimeline(timeline) : null), [shown.summary, timeline]);
  const other = compare && source === 'file' ? compare.timelines[compare.index]! : null;

  const sourceButton = (value: MemorySource, label: string, disabled = false) => (
    <button
      type="button"
      aria-pressed={source === value}
      disabled={disabled}
      onClick={() => state.showMemorySource(value)}
      data-testid={`memory-source-${value}`}
    >
      {label}
    </button>
  );
  const intervalMs = Number(interval);
  const intervalOk = Number.isInteger(intervalMs) && intervalMs >= 10 && intervalMs <= 60_000;
  /** A selection on the canvas; the peak's or an OOM's marker also lists what was alive then, anything else closes that list. */
  const select = (target: TimelineTarget | null) => {
    state.selectMemory(target);
    const marker = target?.kind === 'marker' ? timeline?.markers[target.index] : undefined;
    if (marker && (marker.kind === 'peak' || marker.kind === 'oom')) state.showAliveAt({ timeUs: marker.timeUs, title: marker.label });
    else if (target) state.showAliveAt(null);
  };
  const peakAt = () => {
    if (!timeline || !summary) return;
    if (summary.peak) state.showAliveAt({ timeUs: summary.peak.timeUs, title: `The peak: ${formatBytes(summary.peak.bytes)}` });
  };

  return (
    <div className="memory-view" data-testid="memory-view">
      <div className="memory-bar">
        <div role="group" aria-label="Timeline shown" className="memory-bar">
          {sourceButton('run', 'Run result')}
          {sourceButton('file', file ? `File: ${basenameOf(file.path)}` : 'File', !file)}
          {sourceButton('monitor', monitor.running ? 'Monitor (live)' : 'Monitor')}
        </div>
        <button type="button" onClick={() => setDialog('file')}>
          Open memory snapshot…
        </button>
        <button type="button" onClick={() => setDialog('compare')} disabled={!file} title={file ? undefined : 'Open a snapshot first'}>
          Compare with…
        </button>
        {compare && (
          <button type="button" onClick={() => state.closeMemoryCompare()}>
            Close comparison
          </button>
        )}
        <label>
          Allocations{' '}
          <select value={mode} onChange={(e) => state.setMemoryMode(e.target.value as 'active' | 'address')} aria-label="How allocations are drawn">
            <option value="active">stacked (active memory)</option>
            <option value="address">by address (fragmentation)</option>
          </select>
        </label>
        <button type="button" onClick={peakAt} disabled={!summary?.peak}>
          Peak
        </button>
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
        </span>
        {noMonitor && !monitor.running && (
          <span id="monitor-unavailable" className="muted" data-testid="monitor-unavailable">
            {noMonitor}
          </span>
        )}
      </div>
      <MemoryExport store={store} timeline={timeline} series={source === 'monitor' ? monitor.series : source === 'run' ? (outcome?.samples ?? null) : null} />
      {!intervalOk && !monitor.running && <p className="status-fail">The sampling interval is a whole number of milliseconds from 10 to 60000.</p>}
      {source === 'run' && outcome?.samplingProblem && (
        <p className="muted" data-testid="memory-sampling-problem">
          The device&apos;s memory was not sampled during this run: {outcome.samplingProblem}
        </p>
      )}
      {source === 'monitor' && monitor.error && (
        <p className="status-fail" role="alert">
          {monitor.error}
        </p>
      )}
      {source === 'monitor' && monitor.problems.length > 0 && <p className="muted">{monitor.problems[monitor.problems.length - 1]}</p>}
      {source === 'file' && file && file.timelines.length > 1 && (
        <label>
          Device{' '}
          <select value={file.index} onChange={(e) => state.chooseMemoryTimeline('file', Number(e.target.value))}>
            {file.timelines.map((t, i) => (
              <option key={i} value={i}>
                {t.title}
              </option>
            ))}
          </select>
        </label>
      )}
      {source === 'file' && file && file.notes.length > 0 && <p className="muted">{file.notes.join(' ')}</p>}
      {source === 'run' && running && (
        <p className="muted" role="status">
          A run is under way: its timeline appears when its result arrives. Start monitoring to watch the device meanwhile.
        </p>
      )}
      {!timeline || !summary ? (
        <p data-testid="memory-empty">{shown.why}</p>
      ) : (
        <>
          <div data-testid="memory-summary" className="memory-summary">
            <p className="memory-summary">
              <strong>{shown.name}</strong>
              {timeline.title && timeline.title !== shown.name ? <span className="muted"> ({timeline.title})</span> : null} —{' '}
              {summarySentences(timeline, summary).join(' ')}
            </p>
            {timeline.markers.length > 0 && (
              <ul className="memory-markers" aria-label="Markers">
                {timeline.markers.slice(0, LISTED_MARKERS).map((m, i) => (
                  <li key={i}>
                    <button
                      type="button"
                      className={`marker-${m.kind}`}
                      aria-pressed={selection?.kind === 'marker' && selection.index === i}
                      onClick={() => select({ kind: 'marker', index: i })}
                      data-testid="memory-marker"
                    >
                      {MARKER_WORDS[m.kind]} at {formatDuration(m.timeUs)}: {m.label}
                    </button>
                  </li>
                ))}
                {timeline.markers.length > LISTED_MARKERS && (
                  <li className="muted">and {timeline.markers.length - LISTED_MARKERS} more (M steps through all of them)</li>
                )}
              </ul>
            )}
          </div>
          <div className="memory-main">
            <div className="memory-timelines">
              <TimelineView
                timeline={timeline}
                follow={source === 'monitor'}
                mode={mode}
                selection={selection}
                onSelect={select}
                onPeak={peakAt}
                label={`Memory timeline of ${shown.name}`}
                testId="memory-timeline"
              />
              {other && (
                <TimelineView
                  timeline={other}
                  mode={mode}
                  selection={compareSelection}
                  onSelect={setCompareSelection}
                  onPeak={() => undefined}
                  label={`Memory timeline of ${basenameOf(compare!.path)}, to compare`}
                  controlsOf={`${basenameOf(compare!.path)}, compared`}
                  testId="memory-timeline-compare"
                />
              )}
            </div>
            <aside className="memory-details" aria-label="Details">
              {selection && (
                <MemoryDetails store={store} timeline={timeline} target={selection} sources={shown.sources} onAliveAt={(at) => state.showAliveAt(at)} />
              )}
              {aliveAt && (
                <AliveAtPanel timeline={timeline} at={aliveAt} onSelect={(target) => state.selectMemory(target)} onClose={() => state.showAliveAt(null)} />
              )}
              {!selection && !aliveAt && !other ? (
                <p className="muted">
                  Select an allocation, a kernel or a marker (click it, or use the keys: ] selects the next allocation) to see what it is and where it came
                  from.
                </p>
              ) : null}
              {other && compareSelection && (
                <MemoryDetails
                  store={store}
                  timeline={other}
                  target={compareSelection}
                  sources={{ ...EMPTY_SOURCE_CONTEXT, folders: [dirnameOf(compare!.path)] }}
                  onAliveAt={() => undefined}
                />
              )}
              {other && file && <ComparePanel a={timeline} b={other} aName={basenameOf(file.path)} bName={basenameOf(compare!.path)} />}
            </aside>
          </div>
        </>
      )}
      {dialog && <OpenMemoryDialog store={store} as={dialog} onClose={() => setDialog(null)} />}
    </div>
  );
}
