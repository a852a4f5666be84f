/**
 * Two timelines side by side ("compare two snapshots"): how the peak moved, what is alive at the end of b that
 * was not at the end of a, and which groups (user frame, else buffer, else step) grew the most.
 *
 * A block alive at both ends is the same block when it has the same address and size and b's copy began no later
 * than a ended (on the wall clock): two snapshots of one process share their long-lived blocks, while a later run
 * that reuses an address holds a new block. A block b holds from its time 0 (one that predates b's recording)
 * may have begun any time before: it matches on address and size alone.
 */
import type { Timeline } from './timeline';
import { aliveAtEnd, groupAllocations, peakOf, sumBytes, type AllocationGroup, type GroupBy } from './timeline-model';

const LIST = 50;

export interface GroupGrowth {
  key: string;
  title: string;
  a: { count: number; bytes: number };
  b: { count: number; bytes: number };
  bytes: number;
  count: number;
}

export interface TimelineComparison {
  groupedBy: GroupBy;
  peak: { a: number; b: number; diff: number; aTimeUs: number | null; bTimeUs: number | null };
  atEnd: { a: { count: number; bytes: number }; b: { count: number; bytes: number } };
  /** Alive at the end of b, and not (as the same block) at the end of a. */
  newInB: { count: number; bytes: number; groups: AllocationGroup[] };
  /** Alive at the end of a, and gone by the end of b. */
  goneFromA: { count: number; bytes: number; groups: AllocationGroup[] };
  /** Groups by how much more they held at the end of b than of a, most growth first (then the most shrinkage last). */
  growth: GroupGrowth[];
}

const sameBlockKey = (t: Timeline, i: number) => `${t.allocations.address[i]}:${t.allocations.size[i]}`;

export function compareTimelines(a: Timeline, b: Timeline, by: GroupBy = 'origin'): TimelineComparison {
  const peakA = peakOf(a);
  const peakB = peakOf(b);
  const endA = aliveAtEnd(a);
  const endB = aliveAtEnd(b);
  const aEndsUs = a.originUs + a.durationUs;

  const inA = new Map<string, number>();
  for (const i of endA) inA.set(sameBlockKey(a, i), (inA.get(sameBlockKey(a, i)) ?? 0) + 1);
  const newInB: number[] = [];
  const keptFromA = new Map<string, number>();
  for (const i of endB) {
    const key = sameBlockKey(b, i);
    // A block b holds from its time 0 began then or earlier (it may predate b's recording): it may be a's.
    const began = b.allocations.start[i] === 0 ? -Infinity : b.originUs + b.allocations.start[i]!;
    const available = (inA.get(key) ?? 0) - (keptFromA.get(key) ?? 0);
    if (available > 0 && began <= aEndsUs) keptFromA.set(key, (keptFromA.get(key) ?? 0) + 1);
    else newInB.push(i);
  }
  const goneFromA: number[] = [];
  const used = new Map<string, number>();
  for (const i of endA) {
    const key = sameBlockKey(a, i);
    const kept = keptFromA.get(key) ?? 0;
    const n = used.get(key) ?? 0;
    if (n < kept) used.set(key, n + 1);
    else goneFromA.push(i);
  }

  const groupsA = new Map(groupAllocations(a, endA, by).map((g) => [g.key, g]));
  const groupsB = new Map(groupAllocations(b, endB, by).map((g) => [g.key, g]));
  const growth: GroupGrowth[] = [...new Set([...groupsA.keys(), ...groupsB.keys()])].map((key) => {
    const ga = groupsA.get(key);
    const gb = groupsB.get(key);
    const sa = { count: ga?.count ?? 0, bytes: ga?.bytes ?? 0 };
    const sb = { count: gb?.count ?? 0, bytes: gb?.bytes ?? 0 };
    return { key, title: (gb ?? ga)!.title, a: sa, b: sb, bytes: sb.bytes - sa.bytes, count: sb.count - sa.count };
  });
  growth.sort((x, y) => y.bytes - x.bytes || y.count - x.count || (x.key < y.key ? -1 : 1));
  const changed = growth.filter((g) => g.bytes !== 0 || g.count !== 0);

  return {
    groupedBy: by,
    peak: {
      a: peakA?.bytes ?? 0,
      b: peakB?.bytes ?? 0,
      diff: (peakB?.bytes ?? 0) - (peakA?.bytes ?? 0),
      aTimeUs: peakA?.timeUs ?? null,
      bTimeUs: peakB?.timeUs ?? null,
    },
    atEnd: { a: { count: endA.length, bytes: sumBytes(a, endA) }, b: { count: endB.length, bytes: sumBytes(b, endB) } },
    newInB: { count: newInB.length, bytes: sumBytes(b, newInB), groups: groupAllocations(b, newInB, by).slice(0, LIST) },
    goneFromA: { count: goneFromA.length, bytes: sumBytes(a, goneFromA), groups: groupAllocations(a, goneFromA, by).slice(0, LIST) },
    growth: changed.length > LIST ? [...changed.slice(0, LIST / 2), ...changed.slice(-LIST / 2)] : changed,
  };
}
