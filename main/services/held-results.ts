import { randomUUID } from 'node:crypto';

import { ApiError, type HeldOutcome } from '../../core/api/channels';
import { approxBytes } from '../../core/approx-bytes';
import { BoundedCache } from '../../core/bounded-cache';
import type { SampleSeries } from '../../core/memory/samples';
import type { TimelineWire } from '../../core/memory/timeline-wire';
import type { RunOutcome } from '../../core/runner/run-outcome';

/**
 * What the host holds for this session, newest first, within these bytes for each kind: opening large snapshots (a
 * timeline can take hundreds of MiB) never pushes out the run result on screen, which Save and Export name.
 */
export const HELD_BYTES: Record<'outcome' | 'timeline' | 'samples', number> = { outcome: 128 * 2 ** 20, timeline: 320 * 2 ** 20, samples: 64 * 2 ** 20 };

/** A monitoring session's samples as they stream (the UI's series: core/memory/sample-batches.ts), replaced batch by batch. */
export interface LiveSeries {
  series: SampleSeries;
}

export type Held = { kind: 'outcome'; outcome: RunOutcome } | { kind: 'timeline'; wire: TimelineWire } | { kind: 'samples'; live: LiveSeries };

/** Each kind's ids begin so (a monitoring session's is monitorTimelineId of its own): an id that is gone still says what it named. */
const PREFIX: Record<Held['kind'], string> = { outcome: 'run-', timeline: 'timeline-', samples: 'monitor:' };
const kindOf = (id: string): Held['kind'] => (Object.keys(PREFIX) as Held['kind'][]).find((k) => id.startsWith(PREFIX[k])) ?? 'timeline';

/** What was asked for, in words for the message when it is gone: what it is, and what brings it back. */
const GONE: Record<Held['kind'], { what: string; again: string }> = {
  outcome: { what: 'this run’s result', again: 'run it again (or open its result file again)' },
  timeline: { what: 'this memory timeline', again: 'open its file again' },
  samples: { what: 'this monitoring session’s samples', again: 'start monitoring again' },
};

/** The id names something the host no longer holds (evicted, or from before the host restarted): what happened, what to do. */
export class HeldGoneError extends ApiError {
  constructor(kind: Held['kind'], doing: string) {
    super(
      `The workbench no longer holds ${GONE[kind].what} (it keeps the newest it made or opened, within ${HELD_BYTES[kind] / 2 ** 20} MiB, only while it runs): ${GONE[kind].again}, then ${doing}.`,
      'HELD_GONE',
    );
    this.name = 'HeldGoneError';
  }
}

/**
 * The results the host made or read for the UI (a run's outcome, an opened timeline, a monitor's samples), held by
 * an id it gives out with them, so that save and export calls name them instead of sending the host its own data
 * back. An LRU for each kind, bounded by bytes: the oldest go first, and an id that is gone is said in words, never a crash.
 */
export class HeldResults {
  private readonly held: Record<Held['kind'], BoundedCache<string, { entry: Held; bytes: number }>>;

  constructor(capacityBytes: Record<Held['kind'], number> = HELD_BYTES) {
    const cache = (kind: Held['kind']) => new BoundedCache<string, { entry: Held; bytes: number }>(capacityBytes[kind], (v) => v.bytes);
    this.held = { outcome: cache('outcome'), timeline: cache('timeline'), samples: cache('samples') };
  }

  /** The outcome with the id it is now held under. */
  holdOutcome(outcome: RunOutcome): HeldOutcome {
    return { ...outcome, outcomeId: this.hold({ kind: 'outcome', outcome }) };
  }

  /** Each timeline's id, in order. */
  holdTimelines(wires: readonly TimelineWire[]): string[] {
    return wires.map((wire) => this.hold({ kind: 'timeline', wire }));
  }

  /** A monitoring session's samples under its own id, as they stream; call again once it ends, to count its final size. */
  holdSamples(id: string, live: LiveSeries): void {
    this.held.samples.set(id, { entry: { kind: 'samples', live }, bytes: approxBytes(live.series) });
  }

  /** The outcome under that id, else why not (HeldGoneError) — `doing`: what the user was doing, to say what to do. */
  outcome(id: string, doing: string): RunOutcome {
    const entry = this.entry(id, doing);
    if (entry.kind !== 'outcome') throw new ApiError(`That id names ${GONE[entry.kind].what}, not a run’s result.`, 'HELD_KIND');
    return entry.outcome;
  }

  /** Whatever is held under that id; HeldGoneError, saying what the id named, when nothing is. */
  entry(id: string, doing: string): Held {
    const kind = kindOf(id);
    const entry = this.held[kind].get(id)?.entry;
    if (!entry) throw new HeldGoneError(kind, doing);
    return entry;
  }

  private hold(entry: Held): string {
    const id = `${PREFIX[entry.kind]}${randomUUID()}`;
    this.held[entry.kind].set(id, { entry, bytes: approxBytes(entry) });
    return id;
  }
}
