import { useEffect, useId, useLayoutEffect, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';

import { announce, describe, type TimelineTarget } from '../../../core/memory/timeline-describe';
import { TIMELINE_KEYS, timelineAction, type TimelineAction } from '../../../core/memory/timeline-keys';
import { allocationAt, lowerBound, positionOf, stackNeighbour, upperBound } from '../../../core/memory/timeline-layout';
import { centreWindow, formatDuration, fullWindow, panWindow, selectWindow, zoomWindow, type TimeWindow } from '../../../core/memory/timeline-viewport';
import type { Timeline } from '../../../core/memory/timeline';
import { TIMELINE_COLOURS } from '../../layout/chart-colours';
import { useTheme } from '../../layout/theme';
import { FloatingTip } from '../FloatingTip';
import { TimelineEngine, type AllocationMode } from './timeline-engine';

interface Props {
  timeline: Timeline;
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
}

/** The last index whose element passes (Array.prototype.findLastIndex is ES2023, past this project's lib). */
function lastIndex<T>(xs: T[], pass: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (pass(xs[i]!)) return i;
  return -1;
}

/** Pixels a press may move and still be a click. */
const CLICK_SLOP = 4;

type Drag = { kind: 'pan' | 'range'; x0: number; y0: number; win: TimeWindow; moved: boolean };

/**
 * The memory timeline on a canvas (timeline-engine.ts draws it), and everything a person does with it:
 * wheel zooms at the pointer (Shift+wheel pans), drag pans, Shift+drag or a drag on the time axis selects a
 * range to zoom to, double-click shows it all; a click selects; the keys in TIMELINE_KEYS do all of that and
 * more from the keyboard. What is selected, and the window after a key, are said in a live region.
 */
export function TimelineView({ timeline, follow = false, mode, selection, onSelect, onPeak, label, controlsOf, testId }: Props) {
  const wrapper = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const engine = useRef<TimelineEngine | null>(null);
  const { theme } = useTheme();
  const [hover, setHover] = useState<{ x: number; y: number; target: TimelineTarget } | null>(null);
  const [said, setSaid] = useState('');
  const [win, setWin] = useState<TimeWindow | null>(null);
  const drag = useRef<Drag | null>(null);
  const helpId = useId();
  const callbacks = useRef({ onSelect, onPeak });
  callbacks.current = { onSelect, onPeak };

  useLayoutEffect(() => {
    const e = new TimelineEngine(canvas.current!, TIMELINE_COLOURS[theme], setWin);
    engine.current = e;
    const resize = () => {
      const box = wrapper.current;
      if (box) e.resize(box.clientWidth, box.clientHeight, window.devicePixelRatio || 1);
    };
    const observer = new ResizeObserver(resize);
    observer.observe(wrapper.current!);
    // a window dragged to a screen of another pixel density
    let dpr: MediaQueryList | null = null;
    const watchDpr = () => {
      dpr?.removeEventListener('change', onDpr);
      dpr = matchMedia(`(resolution: ${window.devicePixelRatio || 1}dppx)`);
      dpr.addEventListener('change', onDpr);
    };
    const onDpr = () => {
      resize();
      watchDpr();
    };
    watchDpr();
    resize();
    return () => {
      observer.disconnect();
      dpr?.removeEventListener('change', onDpr);
      e.destroy();
      engine.current = null;
    };
    // made once: the theme, the timeline and the selection reach it through the effects below
  }, []);

  useEffect(() => engine.current?.setColours(TIMELINE_COLOURS[theme]), [theme]);
  useEffect(() => {
    engine.current?.setTimeline(timeline, follow);
    const box = wrapper.current;
    if (box) engine.current?.resize(box.clientWidth, box.clientHeight, window.devicePixelRatio || 1);
  }, [timeline, follow]);
  useEffect(() => engine.current?.setMode(mode), [mode]);
  useEffect(() => {
    engine.current?.setSelection(selection);
    setSaid(selection ? announce(timeline, selection) : '');
  }, [selection, timeline]);

  // The wheel must be a non-passive listener to keep the page from scrolling while it zooms.
  useEffect(() => {
    const el = canvas.current!;
    const onWheel = (ev: WheelEvent) => {
      const e = engine.current;
      if (!e?.timeline) return;
      ev.preventDefault();
      const box = el.getBoundingClientRect();
      const x = ev.clientX - box.left - e.plotLeft;
      const scale = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
      const dx = ev.deltaX * scale;
      const dy = ev.deltaY * scale;
      if (ev.shiftKey || Math.abs(dx) > Math.abs(dy)) {
        const d = ev.shiftKey && Math.abs(dx) < Math.abs(dy) ? dy : dx;
        e.setWindow(panWindow(e.window, d / e.plotWidth, e.timeline.durationUs));
      } else {
        const anchor = Math.max(0, Math.min(1, x / e.plotWidth));
        e.setWindow(zoomWindow(e.window, Math.exp(-dy * 0.002), anchor, e.timeline.durationUs));
      }
    };
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, []);

  const local = (ev: { clientX: number; clientY: number }) => {
    const box = canvas.current!.getBoundingClientRect();
    return { x: ev.clientX - box.left, y: ev.clientY - box.top };
  };

  const onPointerDown = (ev: PointerEvent<HTMLCanvasElement>) => {
    const e = engine.current;
    if (!e?.timeline || ev.button !== 0) return;
    const { x, y } = local(ev);
    const onAxis = e.trackAt(y)?.kind === 'axis';
    drag.current = { kind: ev.shiftKey || onAxis ? 'range' : 'pan', x0: x, y0: y, win: e.window, moved: false };
    canvas.current!.setPointerCapture(ev.pointerId);
  };

  const hoverFrame = useRef(0);
  const onPointerMove = (ev: PointerEvent<HTMLCanvasElement>) => {
    const e = engine.current;
    if (!e?.timeline) return;
    const { x, y } = local(ev);
    const d = drag.current;
    if (d) {
      if (Math.abs(x - d.x0) + Math.abs(y - d.y0) > CLICK_SLOP) d.moved = true;
      if (!d.moved) return;
      if (d.kind === 'pan') e.setWindow(panWindow(d.win, -(x - d.x0) / e.plotWidth, e.timeline.durationUs));
      else e.setRange({ from: d.x0 - e.plotLeft, to: x - e.plotLeft });
      setHover(null);
      return;
    }
    const { clientX, clientY } = ev;
    if (hoverFrame.current) return;
    hoverFrame.current = requestAnimationFrame(() => {
      hoverFrame.current = 0;
      const target = e.hitTest(x, y);
      e.setHover(target?.kind === 'allocation' || target?.kind === 'span' ? target : null);
      setHover(target ? { x: clientX, y: clientY, target } : null);
    });
  };

  const onPointerUp = (ev: PointerEvent<HTMLCanvasElement>) => {
    const e = engine.current;
    const d = drag.current;
    drag.current = null;
    if (!e?.timeline || !d) return;
    const { x, y } = local(ev);
    if (!d.moved) {
      const target = e.hitTest(x, y);
      callbacks.current.onSelect(target?.kind === 'counter' ? null : target);
      return;
    }
    if (d.kind === 'range') {
      e.setRange(null);
      const from = (d.x0 - e.plotLeft) / e.plotWidth;
      const to = (x - e.plotLeft) / e.plotWidth;
      if (Math.abs(to - from) * e.plotWidth > CLICK_SLOP) {
        const chosen = selectWindow(e.window, from, to, e.timeline.durationUs);
        e.setWindow(chosen);
        callbacks.current.onSelect({ kind: 'range', startUs: chosen.startUs, endUs: chosen.endUs });
      }
    }
  };

  const perform = (action: TimelineAction) => {
    const e = engine.current;
    const t = e?.timeline;
    const layout = e?.layout;
    if (!e || !t || !layout) return;
    const w = e.window;
    const duration = t.durationUs;
    const centre = (w.startUs + w.endUs) / 2;
    /** Selects and brings into view. */
    const show = (target: TimelineTarget, atUs: number) => {
      if (atUs < w.startUs || atUs > w.endUs) e.setWindow(centreWindow(e.window, atUs, duration));
      callbacks.current.onSelect(target);
    };
    switch (action.kind) {
      case 'zoom':
        return e.setWindow(zoomWindow(w, action.factor, 0.5, duration));
      case 'pan':
        return e.setWindow(panWindow(w, action.share, duration));
      case 'reset':
        return e.setWindow(fullWindow(duration));
      case 'edge':
        return e.setWindow(centreWindow(w, action.to === 'start' ? 0 : duration, duration));
      case 'step-allocation': {
        if (layout.count === 0) return;
        const current = selection?.kind === 'allocation' ? positionOf(layout, selection.index) : -1;
        // from the selection; with none, the first made in view (or, going back, the last)
        let p = current >= 0 ? current + action.by : action.by > 0 ? lowerBound(layout.start, w.startUs) : upperBound(layout.start, w.endUs) - 1;
        p = Math.max(0, Math.min(layout.count - 1, p));
        return show({ kind: 'allocation', index: allocationAt(layout, p) }, layout.start[p]!);
      }
      case 'stack-neighbour': {
        if (selection?.kind !== 'allocation') return perform({ kind: 'step-allocation', by: 1 });
        const p = stackNeighbour(layout, positionOf(layout, selection.index), centre, action.by);
        if (p >= 0) callbacks.current.onSelect({ kind: 'allocation', index: allocationAt(layout, p) });
        return;
      }
      case 'step-span': {
        const n = t.spans.count;
        if (n === 0) return;
        const byStart = Array.from({ length: n }, (_, i) => i).sort((a, b) => t.spans.start[a]! - t.spans.start[b]! || a - b);
        const current = selection?.kind === 'span' ? byStart.indexOf(selection.index) : -1;
        let k =
          current >= 0
            ? current + action.by
            : action.by > 0
              ? byStart.findIndex((s) => t.spans.start[s]! >= w.startUs)
              : lastIndex(byStart, (s) => t.spans.start[s]! <= w.endUs);
        if (k < 0) k = action.by > 0 ? n - 1 : 0;
        k = Math.max(0, Math.min(n - 1, k));
        return show({ kind: 'span', index: byStart[k]! }, t.spans.start[byStart[k]!]!);
      }
      case 'step-marker': {
        const n = t.markers.length;
        if (n === 0) return;
        const byTime = t.markers.map((_, i) => i).sort((a, b) => t.markers[a]!.timeUs - t.markers[b]!.timeUs || a - b);
        const current = selection?.kind === 'marker' ? byTime.indexOf(selection.index) : -1;
        const k = current >= 0 ? (current + action.by + n) % n : action.by > 0 ? 0 : n - 1;
        return show({ kind: 'marker', index: byTime[k]! }, t.markers[byTime[k]!]!.timeUs);
      }
      case 'peak': {
        const peak = t.markers.findIndex((m) => m.kind === 'peak');
        if (peak >= 0) show({ kind: 'marker', index: peak }, t.markers[peak]!.timeUs);
        else if (Number.isFinite(layout.peakUs)) e.setWindow(centreWindow(w, layout.peakUs, duration));
        return callbacks.current.onPeak();
      }
      case 'range':
        return callbacks.current.onSelect({ kind: 'range', startUs: w.startUs, endUs: w.endUs });
      case 'clear':
        return callbacks.current.onSelect(null);
    }
  };

  const onKeyDown = (ev: KeyboardEvent<HTMLCanvasElement>) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const action = timelineAction(ev.key, ev.shiftKey);
    if (!action) return;
    ev.preventDefault();
    perform(action);
    if (action.kind === 'zoom' || action.kind === 'pan' || action.kind === 'reset' || action.kind === 'edge') sayWindow.current = true;
  };

  // After a key moved the window, say where it is now.
  const sayWindow = useRef(false);
  useEffect(() => {
    if (!win || !sayWindow.current) return;
    sayWindow.current = false;
    setSaid(`Showing ${formatDuration(Math.max(0, win.startUs))} to ${formatDuration(Math.min(timeline.durationUs, win.endUs))}.`);
  }, [win, timeline.durationUs]);

  const described = hover ? describe(timeline, hover.target) : null;
  const of = controlsOf ? ` (${controlsOf})` : '';
  return (
    <div className="timeline-view" data-testid={testId}>
      <div className="timeline-toolbar" role="toolbar" aria-label={`Zoom${of}`}>
        <button type="button" onClick={() => perform({ kind: 'zoom', factor: 2 })} title="Zoom in (+)" aria-label={`Zoom in${of}`}>
          Zoom in
        </button>
        <button type="button" onClick={() => perform({ kind: 'zoom', factor: 0.5 })} title="Zoom out (−)" aria-label={`Zoom out${of}`}>
          Zoom out
        </button>
        <button type="button" onClick={() => perform({ kind: 'reset' })} title="The whole timeline (0)" aria-label={`Whole timeline${of}`}>
          Whole timeline
        </button>
        {win && (
          <span className="muted" data-testid="timeline-window">
            {formatDuration(Math.max(0, win.startUs))} – {formatDuration(Math.min(timeline.durationUs, win.endUs))}
          </span>
        )}
      </div>
      <div className="timeline-canvas-box" ref={wrapper}>
        <canvas
          ref={canvas}
          tabIndex={0}
          role="application"
          aria-roledescription="memory timeline"
          aria-label={label}
          aria-describedby={helpId}
          data-testid="timeline-canvas"
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={onPointerUp}
          onPointerCancel={() => {
            drag.current = null;
            engine.current?.setRange(null);
          }}
          onPointerLeave={() => {
            if (drag.current) return;
            engine.current?.setHover(null);
            setHover(null);
          }}
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
