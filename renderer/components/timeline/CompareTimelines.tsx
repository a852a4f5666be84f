import { useMemo, useState, type ReactNode } from 'react';

import type { TimelineTarget } from '../../../core/memory/timeline-describe';
import { toDisplay, type TimeWarp } from '../../../core/memory/time-warp';
import type { TimeWindow } from '../../../core/memory/timeline-viewport';
import type { Timeline } from '../../../core/memory/timeline';
import type { AllocationMode } from './timeline-engine';
import { TimelineView } from './TimelineView';

/** The allocations area's least height in each of two compared views: both fit a laptop's screen with little scrolling. */
const COMPARE_MIN_ALLOCATIONS = 160;

interface Lane {
  timeline: Timeline;
  name: string;
  selection: TimelineTarget | null;
  onSelect(target: TimelineTarget | null): void;
}

/**
 * Two timelines on one time axis: each file a lane group under its name, the axis drawn once at the top, one
 * window for both (zoom or pan either, both follow), the label columns the same width so that a moment is at the
 * same x in both. Each timeline is drawn from its own start; the breaks of idle time are the union of both's.
 */
export function CompareTimelines({
  a,
  b,
  warp,
  mode,
  onPeak,
  tools,
  onClose,
}: {
  a: Lane;
  b: Lane;
  warp: TimeWarp;
  mode: AllocationMode;
  onPeak(): void;
  tools: ReactNode;
  /** Ends the comparison: its button sits by the second file's name. */
  onClose(): void;
}) {
  const [win, setWin] = useState<TimeWindow | null>(null);
  const [gutters, setGutters] = useState<[number, number]>([0, 0]);
  const extentUs = useMemo(() => Math.max(toDisplay(warp, a.timeline.durationUs), toDisplay(warp, b.timeline.durationUs)), [warp, a.timeline, b.timeline]);
  const minGutter = Math.max(...gutters);
  const sharedOf = (k: 0 | 1) => ({
    axis: k === 0,
    extentUs,
    minGutter,
    minAllocations: COMPARE_MIN_ALLOCATIONS,
    window: win,
    onWindow: setWin,
    onGutter: (px: number) => setGutters((g) => (g[k] === px ? g : k === 0 ? [px, g[1]] : [g[0], px])),
  });
  return (
    <div className="compare-timelines" role="group" aria-label={`${a.name} and ${b.name} on one time axis`} data-testid="memory-compare-lanes">
      {[a, b].map((lane, k) => (
        <section key={k} className="lane-group" aria-label={lane.name}>
          <h3 className="lane-group-title">
            <span data-testid="lane-group-title">{lane.name}</span>
            {k === 1 && (
              <button type="button" onClick={onClose}>
                Close comparison
              </button>
            )}
          </h3>
          <TimelineView
            timeline={lane.timeline}
            warp={warp}
            mode={mode}
            selection={lane.selection}
            onSelect={lane.onSelect}
            onPeak={k === 0 ? onPeak : () => undefined}
            label={k === 0 ? `Memory timeline of ${lane.name}` : `Memory timeline of ${lane.name}, to compare`}
            controlsOf={k === 0 ? undefined : `${lane.name}, compared`}
            testId={k === 0 ? 'memory-timeline' : 'memory-timeline-compare'}
            tools={k === 0 ? tools : undefined}
            shared={sharedOf(k as 0 | 1)}
          />
        </section>
      ))}
    </div>
  );
}
