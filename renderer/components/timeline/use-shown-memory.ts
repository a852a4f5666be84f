import { useEffect, useMemo } from 'react';
import { useStore } from 'zustand';

import type { Timeline } from '../../../core/memory/timeline';
import { summarizeTimeline, type TimelineSummary } from '../../../core/memory/timeline-model';
import { identityWarp, warpFor, type TimeWarp } from '../../../core/memory/time-warp';
import { basenameOf, dirnameOf } from '../../../core/workspace/paths';
import { EMPTY_SOURCE_CONTEXT, type SourceContext } from '../../../core/workspace/source-link';
import type { WorkbenchStore } from '../../store/store';
import { runTimeline } from './memory-timelines';

export interface ShownMemory {
  timeline: Timeline | null;
  /** Why there is no timeline, in words. */
  why: string | null;
  name: string;
  sources: SourceContext;
  summary: TimelineSummary | null;
  /** The second file of a comparison, drawn on the same axis. */
  other: { timeline: Timeline; name: string; sources: SourceContext } | null;
  /** The idle gaps broken on the axis (of both files, compared): none for the live monitor, or when turned off. */
  warp: TimeWarp;
  /** Whether the timeline has idle gaps to break (the option is offered only then). */
  hasGaps: boolean;
}

/**
 * What the Memory tab shows: the file opened (and the one compared with it), the monitor's live timeline, or the
 * run result's; its summary (a file's comes from the host, the others are small enough to summarise here); and
 * the time axis's breaks.
 */
export function useShownMemory(store: WorkbenchStore): ShownMemory {
  const source = useStore(store, (s) => s.memorySource);
  const file = useStore(store, (s) => s.memoryFile);
  const compare = useStore(store, (s) => s.memoryCompare);
  const outcome = useStore(store, (s) => s.outcome);
  const origin = useStore(store, (s) => s.outcomeOrigin);
  const monitor = useStore(store, (s) => s.monitor);
  const gapsOn = useStore(store, (s) => s.memoryGaps);
  // A run that just ended, or a result just opened: its timeline takes the place of what was shown.
  const seen = useStore(store, (s) => s.memoryRunSeen);
  useEffect(() => {
    if (outcome && outcome !== seen) store.getState().showNewRun(outcome);
  }, [outcome, seen, store]);

  const run = useMemo(() => runTimeline(outcome, monitor.series), [outcome, monitor.series]);
  const shown = useMemo(() => {
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
  const summary = useMemo(() => shown.summary ?? (timeline ? summarizeTimeline(timeline) : null), [shown.summary, timeline]);
  const other = useMemo(() => {
    if (!compare || source !== 'file' || !file) return null;
    return {
      timeline: compare.timelines[compare.index]!,
      name: compare.label ?? basenameOf(compare.path),
      sources: { ...EMPTY_SOURCE_CONTEXT, folders: [dirnameOf(compare.path)] },
    };
  }, [compare, source, file]);
  const found = useMemo(() => {
    if (!timeline || source === 'monitor') return identityWarp(timeline?.durationUs ?? 0);
    return warpFor(other ? [timeline, other.timeline] : [timeline]);
  }, [timeline, other, source]);
  const warp = useMemo(() => (gapsOn ? found : identityWarp(found.realDurationUs)), [found, gapsOn]);
  return { ...shown, summary, other, warp, hasGaps: found.breaks.length > 0 };
}
