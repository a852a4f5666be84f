import { useStore } from 'zustand';

import type { Timeline, TimelineMarker } from '../../../core/memory/timeline';
import { summarySentences, type TimelineTarget } from '../../../core/memory/timeline-describe';
import { formatDuration } from '../../../core/memory/timeline-viewport';
import type { WorkbenchStore } from '../../store/store';
import { ComparePanel } from './ComparePanel';
import { AliveAtPanel, MemoryDetails } from './MemoryDetails';
import { MemoryExport } from './MemoryExport';
import { TraceEvents } from './TraceEvents';
import type { ShownMemory } from './use-shown-memory';

const MARKER_WORDS: Record<TimelineMarker['kind'], string> = { oom: 'Out of memory', leak: 'Leak', error: 'Error', peak: 'Peak' };
/** Markers listed as buttons (the keyboard's and screen reader's way to each); the rest are counted. */
const LISTED_MARKERS = 40;

/** The timeline in words: its name and summary, and its markers as buttons. */
function MemorySummary({
  shown,
  timeline,
  selection,
  onSelect,
}: {
  shown: ShownMemory;
  timeline: Timeline;
  selection: TimelineTarget | null;
  onSelect(t: TimelineTarget): void;
}) {
  return (
    <section data-testid="memory-summary" className="memory-summary" aria-label="Summary">
      <p className="memory-summary">
        <strong>{shown.name}</strong>
        {timeline.title && timeline.title !== shown.name ? <span className="muted"> ({timeline.title})</span> : null} —{' '}
        {summarySentences(timeline, shown.summary!).join(' ')}
      </p>
      {timeline.markers.length > 0 && (
        <ul className="memory-markers" aria-label="Markers">
          {timeline.markers.slice(0, LISTED_MARKERS).map((m, i) => (
            <li key={i}>
              <button
                type="button"
                className={`marker-${m.kind}`}
                aria-pressed={selection?.kind === 'marker' && selection.index === i}
                onClick={() => onSelect({ kind: 'marker', index: i })}
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
    </section>
  );
}

/** What the Memory tab's two halves (the timelines, and what is beside them) are given. */
export interface MemoryPanelProps {
  store: WorkbenchStore;
  shown: ShownMemory;
  select(target: TimelineTarget | null): void;
  compareSelection: TimelineTarget | null;
  onCompareSelect(target: TimelineTarget | null): void;
}

/**
 * Beside the timeline on a wide screen, under it on a narrow one: what is selected (first, once something is),
 * what was alive at a moment, the summary and the markers, the comparison's figures, notes, and export.
 */
export function MemorySide({ store, shown, select, compareSelection, onCompareSelect }: MemoryPanelProps) {
  const source = useStore(store, (s) => s.memorySource);
  const selection = useStore(store, (s) => s.memorySelection);
  const aliveAt = useStore(store, (s) => s.memoryAliveAt);
  const file = useStore(store, (s) => s.memoryFile);
  const outcome = useStore(store, (s) => s.outcome);
  const monitor = useStore(store, (s) => s.monitor);
  const state = store.getState();
  const { timeline, other } = shown;
  if (!timeline || !shown.summary) return null;
  const series = source === 'monitor' ? monitor.series : source === 'run' ? (outcome?.samples ?? null) : null;
  return (
    <aside className="memory-side memory-details" aria-label="Details" data-testid="memory-side">
      {selection && (
        <MemoryDetails
          store={store}
          timeline={timeline}
          target={selection}
          sources={shown.sources}
          onAliveAt={(at) => state.showAliveAt(at)}
          onSelect={(target) => state.selectMemory(target)}
        />
      )}
      {aliveAt && <AliveAtPanel timeline={timeline} at={aliveAt} onSelect={(target) => state.selectMemory(target)} onClose={() => state.showAliveAt(null)} />}
      {other && compareSelection && (
        <MemoryDetails
          store={store}
          timeline={other.timeline}
          target={compareSelection}
          sources={other.sources}
          onAliveAt={() => undefined}
          onSelect={onCompareSelect}
        />
      )}
      <MemorySummary shown={shown} timeline={timeline} selection={selection} onSelect={select} />
      {!selection && !aliveAt && !other && (
        <p className="muted">
          Select an allocation, a kernel or a marker (click it, or use the keys: ] selects the next allocation), or a range (Shift+drag, or R for the time
          shown), to see what it is and where it came from.
        </p>
      )}
      {source === 'file' && file && file.notes.length > 0 && <p className="muted">{file.notes.join(' ')}</p>}
      {source === 'file' && file?.traceEvents && <TraceEvents rows={file.traceEvents.rows} more={file.traceEvents.more} />}
      {other && file && <ComparePanel a={timeline} b={other.timeline} aName={shown.name} bName={other.name} />}
      <MemoryExport store={store} timeline={timeline} series={series} offerCsv={source !== 'file'} />
    </aside>
  );
}
