import { useRef, useState } from 'react';
import { useStore } from 'zustand';

import { formatBytes } from '../../../core/format';
import type { Timeline } from '../../../core/memory/timeline';
import type { TimelineTarget } from '../../../core/memory/timeline-describe';
import type { WorkbenchStore } from '../../store/store';
import { AllocationTools } from './AllocationTools';
import { CompareTimelines } from './CompareTimelines';
import { MemoryBar } from './MemoryBar';
import { MemorySide, type MemoryPanelProps } from './MemorySide';
import { OpenMemoryDialog } from './OpenMemoryDialog';
import { TimelineView } from './TimelineView';
import { useShownMemory } from './use-shown-memory';

/** Notes about what is shown that are not the timeline: a run that did not sample, the monitor's problems, a run under way. */
function MemoryNotes({ store }: { store: WorkbenchStore }) {
  const source = useStore(store, (s) => s.memorySource);
  const outcome = useStore(store, (s) => s.outcome);
  const running = useStore(store, (s) => s.running);
  const monitor = useStore(store, (s) => s.monitor);
  return (
    <>
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
      {source === 'run' && running && (
        <p className="muted" role="status">
          A run is under way: its timeline appears when its result arrives. Start monitoring to watch the device meanwhile.
        </p>
      )}
    </>
  );
}

/** The timeline (or two, compared on one axis), its allocations' options in its label column. */
function Timelines({ store, shown, select, compareSelection, onCompareSelect, onMinHeight }: MemoryPanelProps & { onMinHeight(px: number): void }) {
  const source = useStore(store, (s) => s.memorySource);
  const mode = useStore(store, (s) => s.memoryMode);
  const selection = useStore(store, (s) => s.memorySelection);
  const { timeline, summary, other } = shown;
  const state = store.getState();
  const peakAt = () => {
    if (summary?.peak) state.showAliveAt({ timeUs: summary.peak.timeUs, title: `The peak: ${formatBytes(summary.peak.bytes)}` });
  };
  const tools = <AllocationTools store={store} onPeak={peakAt} hasPeak={!!summary?.peak} hasGaps={shown.hasGaps} />;
  if (!timeline) return null;
  if (other)
    return (
      <CompareTimelines
        a={{ timeline, name: shown.name, selection, onSelect: select }}
        b={{ timeline: other.timeline, name: other.name, selection: compareSelection, onSelect: onCompareSelect }}
        warp={shown.warp}
        mode={mode}
        onPeak={peakAt}
        tools={tools}
        onClose={() => state.closeMemoryCompare()}
      />
    );
  return (
    <TimelineView
      timeline={timeline}
      warp={shown.warp}
      follow={source === 'monitor'}
      mode={mode}
      selection={selection}
      onSelect={select}
      onPeak={peakAt}
      label={`Memory timeline of ${shown.name}`}
      testId="memory-timeline"
      tools={tools}
      onMinHeight={onMinHeight}
    />
  );
}

/**
 * The Memory tab: the memory timeline of the run result, of a snapshot or result file opened, or of the monitor —
 * the timeline first, given the height of the panel (the bar above it holds only what applies to what is shown; a
 * panel too short for the timeline is asked to grow, onNeedHeight),
 * its summary, markers and the details of what is selected beside it on a wide screen and under it on a narrow
 * one; a second file compared on the same time axis.
 */
/**
 * The height the output panel needs for the timeline whole in it: from the panel's top to the canvas box, the box's
 * least height (its tracks with the allocations at their minimum) and its border, and the panel's padding below.
 */
function neededHeight(root: HTMLElement, minHeight: number): number | null {
  const box = root.querySelector<HTMLElement>('.timeline-canvas-box');
  const pane = root.closest<HTMLElement>('.output-pane');
  if (!box || !pane) return null;
  const top = box.getBoundingClientRect().top + root.scrollTop - pane.getBoundingClientRect().top;
  return Math.ceil(top + minHeight + 2 + 6);
}

export function MemoryView({ store, onNeedHeight }: { store: WorkbenchStore; onNeedHeight?: (px: number) => void }) {
  const shown = useShownMemory(store);
  const root = useRef<HTMLDivElement>(null);
  // Asked once per timeline shown (and when its tracks change): a panel the person makes smaller afterwards stays so.
  const asked = useRef<{ timeline: Timeline; px: number } | null>(null);
  const fit = (px: number) => {
    if (!shown.timeline || !root.current || (asked.current?.timeline === shown.timeline && asked.current.px === px)) return;
    asked.current = { timeline: shown.timeline, px };
    const need = neededHeight(root.current, px);
    if (need !== null) onNeedHeight?.(need);
  };
  const [dialog, setDialog] = useState<'file' | 'compare' | null>(null);
  const [compareSelection, setCompareSelection] = useState<TimelineTarget | null>(null);
  const { timeline, summary } = shown;
  const state = store.getState();
  /** A selection on the canvas; the peak's or an OOM's marker also lists what was alive then, anything else closes that list. */
  const select = (target: TimelineTarget | null) => {
    state.selectMemory(target);
    const marker = target?.kind === 'marker' ? timeline?.markers[target.index] : undefined;
    if (marker && (marker.kind === 'peak' || marker.kind === 'oom')) state.showAliveAt({ timeUs: marker.timeUs, title: marker.label });
    else if (target) state.showAliveAt(null);
  };
  const sideProps = { store, shown, select, compareSelection, onCompareSelect: setCompareSelection };
  return (
    <div className="memory-view" data-testid="memory-view" ref={root}>
      <div className={`memory-layout${shown.other ? ' comparing' : ''}`}>
        <div className="memory-top">
          <MemoryBar store={store} onOpen={setDialog} />
          <MemoryNotes store={store} />
          {!timeline || !summary ? <p data-testid="memory-empty">{shown.why}</p> : <Timelines {...sideProps} onMinHeight={fit} />}
        </div>
        <MemorySide {...sideProps} />
      </div>
      {dialog && <OpenMemoryDialog store={store} as={dialog} onClose={() => setDialog(null)} />}
    </div>
  );
}
