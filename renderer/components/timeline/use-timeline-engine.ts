import { useEffect, useLayoutEffect, useRef, useState, type PointerEvent, type RefObject } from 'react';

import type { TimelineTarget } from '../../../core/memory/timeline-describe';
import type { Timeline } from '../../../core/memory/timeline';
import type { TimeWarp } from '../../../core/memory/time-warp';
import type { TrackOptions } from '../../../core/memory/timeline-tracks';
import { panWindow, selectWindow, zoomWindow, type TimeWindow } from '../../../core/memory/timeline-viewport';
import type { Theme } from '../../../core/ui/theme';
import { TIMELINE_COLOURS } from '../../layout/chart-colours';
import { TimelineEngine, type AllocationMode, type EngineLayout } from './timeline-engine';

/** Pixels a press may move and still be a click. */
const CLICK_SLOP = 4;

export interface EngineSettings {
  /** The timeline in display time (its idle gaps broken by `warp`). */
  display: Timeline;
  warp: TimeWarp;
  follow: boolean;
  mode: AllocationMode;
  theme: Theme;
  /** Display time: the engine's selection. */
  selection: TimelineTarget | null;
  extentUs: number;
  minGutter: number;
  tracks: TrackOptions;
  /** A window set from outside (the other view of a comparison), display time. */
  window: TimeWindow | null;
}

/**
 * The canvas's engine, made once and kept in step with the settings: sized to its box (and to the screen's pixel
 * density), its timeline, mode, colours, selection, axis and window. Returns the engine, the window it shows and
 * where its tracks are.
 */
export function useTimelineEngine(
  canvas: RefObject<HTMLCanvasElement | null>,
  box: RefObject<HTMLDivElement | null>,
  s: EngineSettings,
  onWindow?: (w: TimeWindow) => void,
) {
  const engine = useRef<TimelineEngine | null>(null);
  const [win, setWin] = useState<TimeWindow | null>(null);
  const [layout, setLayout] = useState<EngineLayout | null>(null);
  const windowOut = useRef(onWindow);
  windowOut.current = onWindow;

  useLayoutEffect(() => {
    const e = new TimelineEngine(canvas.current!, TIMELINE_COLOURS[s.theme], (w) => {
      setWin(w);
      windowOut.current?.(w);
    });
    e.onLayout = setLayout;
    engine.current = e;
    const resize = () => {
      const b = box.current;
      if (b) e.resize(b.clientWidth, b.clientHeight, window.devicePixelRatio || 1);
    };
    const observer = new ResizeObserver(resize);
    observer.observe(box.current!);
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
    // made once: the settings reach it through the effects below
  }, []);

  const { display, warp, follow, mode, theme, selection, extentUs, minGutter, tracks } = s;
  useEffect(() => engine.current?.setColours(TIMELINE_COLOURS[theme]), [theme]);
  useLayoutEffect(() => {
    engine.current?.setAxis({ extentUs, warp, minGutter, tracks });
    // tracks is an object made per render: compared by what it holds
  }, [extentUs, warp, minGutter, tracks.axis, tracks.minAllocations]);
  useLayoutEffect(() => {
    engine.current?.setTimeline(display, follow);
    const b = box.current;
    if (b) engine.current?.resize(b.clientWidth, b.clientHeight, window.devicePixelRatio || 1);
  }, [display, follow]);
  useEffect(() => engine.current?.setMode(mode), [mode]);
  useEffect(() => engine.current?.setSelection(selection), [selection]);
  useEffect(() => {
    if (s.window) engine.current?.setWindow(s.window);
  }, [s.window]);
  return { engine, win, layout };
}

type Drag = { kind: 'pan' | 'range'; x0: number; y0: number; win: TimeWindow; moved: boolean };

/**
 * The canvas's pointer: wheel zooms at the pointer (Shift+wheel pans), drag pans, Shift+drag or a drag on the
 * time axis selects a range to zoom to, a click selects, hovering says what is there.
 */
export function usePointer(
  canvas: RefObject<HTMLCanvasElement | null>,
  engine: RefObject<TimelineEngine | null>,
  onSelect: (target: TimelineTarget | null) => void,
  onHover: (hover: { x: number; y: number; target: TimelineTarget } | null) => void,
) {
  const drag = useRef<Drag | null>(null);
  const hoverFrame = useRef(0);
  const select = useRef(onSelect);
  select.current = onSelect;

  // The wheel must be a non-passive listener to keep the page from scrolling while it zooms.
  useEffect(() => {
    const el = canvas.current!;
    const onWheel = (ev: WheelEvent) => {
      const e = engine.current;
      if (!e?.timeline) return;
      ev.preventDefault();
      const x = ev.clientX - el.getBoundingClientRect().left - e.plotLeft;
      const scale = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
      const dx = ev.deltaX * scale;
      const dy = ev.deltaY * scale;
      if (ev.shiftKey || Math.abs(dx) > Math.abs(dy)) {
        const d = ev.shiftKey && Math.abs(dx) < Math.abs(dy) ? dy : dx;
        e.setWindow(panWindow(e.window, d / e.plotWidth, e.extentUs));
      } else e.setWindow(zoomWindow(e.window, Math.exp(-dy * 0.002), Math.max(0, Math.min(1, x / e.plotWidth)), e.extentUs));
    };
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, [canvas, engine]);

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

  const onPointerMove = (ev: PointerEvent<HTMLCanvasElement>) => {
    const e = engine.current;
    if (!e?.timeline) return;
    const { x, y } = local(ev);
    const d = drag.current;
    if (d) {
      if (Math.abs(x - d.x0) + Math.abs(y - d.y0) > CLICK_SLOP) d.moved = true;
      if (!d.moved) return;
      if (d.kind === 'pan') e.setWindow(panWindow(d.win, -(x - d.x0) / e.plotWidth, e.extentUs));
      else e.setRange({ from: d.x0 - e.plotLeft, to: x - e.plotLeft });
      onHover(null);
      return;
    }
    const { clientX, clientY } = ev;
    if (hoverFrame.current) return;
    hoverFrame.current = requestAnimationFrame(() => {
      hoverFrame.current = 0;
      const target = e.hitTest(x, y);
      e.setHover(target?.kind === 'allocation' || target?.kind === 'span' ? target : null);
      onHover(target ? { x: clientX, y: clientY, target } : null);
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
      select.current(target?.kind === 'counter' ? null : target);
      return;
    }
    if (d.kind !== 'range') return;
    e.setRange(null);
    const from = (d.x0 - e.plotLeft) / e.plotWidth;
    const to = (x - e.plotLeft) / e.plotWidth;
    if (Math.abs(to - from) * e.plotWidth <= CLICK_SLOP) return;
    const chosen = selectWindow(e.window, from, to, e.extentUs);
    e.setWindow(chosen);
    const t = e.timeline;
    select.current({ kind: 'range', startUs: Math.max(0, chosen.startUs), endUs: Math.min(t.durationUs, chosen.endUs) });
  };

  const onPointerCancel = () => {
    drag.current = null;
    engine.current?.setRange(null);
  };
  const onPointerLeave = () => {
    if (drag.current) return;
    engine.current?.setHover(null);
    onHover(null);
  };
  return { onPointerDown, onPointerMove, onPointerUp, onPointerCancel, onPointerLeave };
}
