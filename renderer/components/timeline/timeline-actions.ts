import type { TimelineTarget } from '../../../core/memory/timeline-describe';
import type { TimelineAction } from '../../../core/memory/timeline-keys';
import { allocationAt, lowerBound, positionOf, stackNeighbour, upperBound } from '../../../core/memory/timeline-layout';
import { centreWindow, fullWindow, panWindow, zoomWindow } from '../../../core/memory/timeline-viewport';
import type { TimelineEngine } from './timeline-engine';

/** The last index whose element passes (Array.prototype.findLastIndex is ES2023, past this project's lib). */
function lastIndex<T>(xs: T[], pass: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (pass(xs[i]!)) return i;
  return -1;
}

export interface ActionCallbacks {
  /** A target in the engine's (display) time. */
  onSelect(target: TimelineTarget | null): void;
  onPeak(): void;
}

/**
 * What a key or a toolbar button does to the view: the window moved, or the next allocation, span or marker
 * selected and brought into view. Times are the engine's (display) times; `selection` too.
 */
export function performAction(e: TimelineEngine, action: TimelineAction, selection: TimelineTarget | null, cb: ActionCallbacks): void {
  const t = e.timeline;
  const layout = e.layout;
  if (!t || !layout) return;
  const w = e.window;
  const extent = e.extentUs;
  const centre = (w.startUs + w.endUs) / 2;
  /** Selects and brings into view. */
  const show = (target: TimelineTarget, atUs: number) => {
    if (atUs < w.startUs || atUs > w.endUs) e.setWindow(centreWindow(e.window, atUs, extent));
    cb.onSelect(target);
  };
  switch (action.kind) {
    case 'zoom':
      return e.setWindow(zoomWindow(w, action.factor, 0.5, extent));
    case 'pan':
      return e.setWindow(panWindow(w, action.share, extent));
    case 'reset':
      return e.setWindow(fullWindow(extent));
    case 'edge':
      return e.setWindow(centreWindow(w, action.to === 'start' ? 0 : t.durationUs, extent));
    case 'step-allocation': {
      if (layout.count === 0) return;
      const current = selection?.kind === 'allocation' ? positionOf(layout, selection.index) : -1;
      // from the selection; with none, the first made in view (or, going back, the last)
      let p = current >= 0 ? current + action.by : action.by > 0 ? lowerBound(layout.start, w.startUs) : upperBound(layout.start, w.endUs) - 1;
      p = Math.max(0, Math.min(layout.count - 1, p));
      return show({ kind: 'allocation', index: allocationAt(layout, p) }, layout.start[p]!);
    }
    case 'stack-neighbour': {
      if (selection?.kind !== 'allocation') return performAction(e, { kind: 'step-allocation', by: 1 }, selection, cb);
      const p = stackNeighbour(layout, positionOf(layout, selection.index), centre, action.by);
      if (p >= 0) cb.onSelect({ kind: 'allocation', index: allocationAt(layout, p) });
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
      else if (Number.isFinite(layout.peakUs)) e.setWindow(centreWindow(w, layout.peakUs, extent));
      return cb.onPeak();
    }
    case 'range':
      return cb.onSelect({ kind: 'range', startUs: Math.max(0, w.startUs), endUs: Math.min(t.durationUs, w.endUs) });
    case 'clear':
      return cb.onSelect(null);
  }
}
