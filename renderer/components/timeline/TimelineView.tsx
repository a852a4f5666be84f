import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';

import { announce, describe, type TimelineTarget } from '../../../core/memory/timeline-describe';
import { TIMELINE_KEYS, timelineAction, type TimelineAction } from '../../../core/memory/timeline-keys';
import { identityWarp, toDisplay, toReal, warpTimeline, type TimeWarp } from '../../../core/memory/time-warp';
import { formatDuration, type TimeWindow } from '../../../core/memory/timeline-viewport';
import type { Timeline } from '../../../core/memory/timeline';
import { useTheme } from '../../layout/theme';
import { FloatingTip } from '../FloatingTip';
import { performAction } from './timeline-actions';
import type { AllocationMode } from './timeline-engine';
import { TrackLabels } from './TrackLabels';
import { usePointer, useTimelineEngine } from './use-timeline-engine';

interface Props {
  timeline: Timeline;
  /** Idle gaps broken on the axis (core/memory/time-warp.ts); none when not given. */
  warp?: TimeWarp;
  /** A newer version of the same timeline (monitoring): keep the window, follow the end. */
  follow?: boolean;
  mode: AllocationMode;
  selection: TimelineTarget | null;
  onSelect(target: TimelineTarget | null): void;
  /** The peak was asked for (P, or its marker): show what was alive then. */
  onPeak(): void;
  /** What the view shows, for its accessible name: "Memory timeline of oom.pickle, device 0". */
  label: string;
  /** When two views are on screen: what tells this one's buttons from the other's ("leak.pickle"). */
  controlsOf?: string;
  testId?: string;
  /** The allocations' options (drawn how, the peak, the gaps), shown under their name in the label column. */
  tools?: ReactNode;
  /** The least height its tracks need without scrolling (the allocations at their minimum), each time it changes. */
  onMinHeight?(px: number): void;
  /** One of several views on one time axis (a comparison): the first draws the axis, all share the window and the label column's width. */
  shared?: {
    axis: boolean;
    extentUs: number;
    minGutter: number;
    minAllocations: number;
    window: TimeWindow | null;
    onWindow(w: TimeWindow): void;
    onGutter(px: number): void;
  };
}

/** A target from display time (the engine's) to real time (the timeline's), and back. */
function mapTarget(t: TimelineTarget | null, map: (us: number) => number): TimelineTarget | null {
  if (t?.kind === 'counter') return { ...t, timeUs: map(t.timeUs) };
  if (t?.kind === 'range') return { ...t, startUs: map(t.startUs), endUs: map(t.endUs) };
  return t;
}

const NO_WARP = identityWarp(0);

/** Zoom in, out and to the whole timeline, and the window shown (in real time): in the axis's corner of the label column. */
function ZoomControls({ perform, real, of }: { perform(action: TimelineAction): void; real: TimeWindow | null; of: string }) {
  return (
    <>
      <span role="toolbar" aria-label={`Zoom${of}`} className="zoom-buttons">
        <button type="button" onClick={() => perform({ kind: 'zoom', factor: 2 })} title="Zoom in (+)" aria-label={`Zoom in${of}`}>
          +
        </button>
        <button type="button" onClick={() => perform({ kind: 'zoom', factor: 0.5 })} title="Zoom out (−)" aria-label={`Zoom out${of}`}>
          −
        </button>
        <button type="button" onClick={() => perform({ kind: 'reset' })} title="The whole timeline (0)" aria-label={`Whole timeline${of}`}>
          Whole
        </button>
      </span>
      {real && (
        <span className="muted timeline-window" data-testid="timeline-window">
          {formatDuration(real.startUs)} – {formatDuration(real.endUs)}
        </span>
      )}
    </>
  );
}

/**
 * The memory timeline on a canvas (timeline-engine.ts draws it), and everything a person does with it: the
 * pointer (use-timeline-engine.ts), the keys in TIMELINE_KEYS, zoom buttons in the axis's corner. The canvas
 * draws in display time, where long idle gaps are broken; everything said — tooltips, the window, selections
 * handed out — is in the timeline's real time. What is selected, and the window after a key, are said in a live region.
 */
export function TimelineView(props: Props) {
  const { timeline, follow = false, mode, selection, onSelect, onPeak, label, controlsOf, testId, tools, shared, onMinHeight } = props;
  const warp = props.warp ?? NO_WARP;
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const { theme } = useTheme();
  const [hover, setHover] = useState<{ x: number; y: number; target: TimelineTarget } | null>(null);
  const [said, setSaid] = useState('');
  const helpId = useId();
  const display = useMemo(() => warpTimeline(timeline, warp), [timeline, warp]);
  const displaySelection = useMemo(() => mapTarget(selection, (us) => toDisplay(warp, us)), [selection, warp]);
  const tracks = useMemo(() => ({ axis: shared ? shared.axis : true, minAllocations: shared?.minAllocations }), [shared?.axis, shared?.minAllocations]);
  const { engine, win, layout } = useTimelineEngine(
    canvas,
    box,
    {
      display,
      warp,
      follow,
      mode,
      theme,
      selection: displaySelection,
      extentUs: shared?.extentUs ?? 0,
      minGutter: shared?.minGutter ?? 0,
      tracks,
      window: shared?.window ?? null,
    },
    shared?.onWindow,
  );
  const select = (target: TimelineTarget | null) => onSelect(mapTarget(target, (us) => toReal(warp, us)));
  const pointer = usePointer(canvas, engine, select, setHover);

  useEffect(() => setSaid(selection ? announce(timeline, selection) : ''), [selection, timeline]);
  useEffect(() => {
    if (layout) shared?.onGutter(engine.current?.naturalGutter ?? layout.gutter);
  }, [layout]);
  useEffect(() => {
    if (layout?.minHeight) onMinHeight?.(layout.minHeight);
  }, [layout?.minHeight]);

  const perform = (action: TimelineAction) => {
    if (engine.current) performAction(engine.current, action, displaySelection, { onSelect: select, onPeak });
  };
  // After a key moved the window, say where it is now.
  const sayWindow = useRef(false);
  // the window in real time, within what the axis covers (a comparison's longer file)
  const realEnd = toReal(warp, Math.max(display.durationUs, shared?.extentUs ?? 0));
  const real = win ? { startUs: Math.max(0, toReal(warp, win.startUs)), endUs: Math.min(realEnd, toReal(warp, win.endUs)) } : null;
  useEffect(() => {
    if (!real || !sayWindow.current) return;
    sayWindow.current = false;
    setSaid(`Showing ${formatDuration(real.startUs)} to ${formatDuration(real.endUs)}.`);
  }, [win]);
  const onKeyDown = (ev: KeyboardEvent<HTMLCanvasElement>) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const action = timelineAction(ev.key, ev.shiftKey);
    if (!action) return;
    ev.preventDefault();
    perform(action);
    if (action.kind === 'zoom' || action.kind === 'pan' || action.kind === 'reset' || action.kind === 'edge') sayWindow.current = true;
  };

  const described = hover
    ? describe(
        timeline,
        mapTarget(hover.target, (us) => toReal(warp, us))!,
      )
    : null;
  const corner = (!shared || shared.axis) && <ZoomControls perform={perform} real={real} of={controlsOf ? ` (${controlsOf})` : ''} />;
  return (
    <div className="timeline-view" data-testid={testId}>
      <div className="timeline-canvas-box" ref={box} style={{ minHeight: layout?.minHeight || undefined }}>
        {layout && <TrackLabels layout={layout} corner={corner} tools={tools} />}
        <canvas
          ref={canvas}
          tabIndex={0}
          role="application"
          aria-roledescription="memory timeline"
          aria-label={label}
          aria-describedby={helpId}
          data-testid="timeline-canvas"
          data-window-start={real?.startUs}
          data-window-end={real?.endUs}
          data-gutter={layout?.gutter}
          {...pointer}
          onDoubleClick={() => perform({ kind: 'reset' })}
          onKeyDown={onKeyDown}
        />
      </div>
      <p id={helpId} className="visually-hidden">
        Keys: {TIMELINE_KEYS.map((k) => `${k.keys}: ${k.what}`).join('; ')}.
      </p>
      <p className="visually-hidden" aria-live="polite" data-testid="timeline-said">
        {said}
      </p>
      {hover && described && (
        <FloatingTip x={hover.x} y={hover.y} testId="timeline-tooltip">
          <strong>{described.title}</strong>
          {described.facts.map((f) => (
            <div key={f.name}>
              {f.name}: {f.value}
            </div>
          ))}
        </FloatingTip>
      )}
    </div>
  );
}
