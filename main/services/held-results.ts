import { randomUUID } from 'node:crypto';

import { ApiError, type HeldOutcome, type HeldSanitizeReport } from '../../core/api/channels';
import { approxBytes } from '../../core/approx-bytes';
import { BoundedCache } from '../../core/bounded-cache';
import type { Profile } from '../../core/kernel-profile/profile';
import type { SampleSeries } from '../../core/memory/samples';
import type { TimelineWire } from '../../core/memory/timeline-wire';
import type { RunOutcome } from '../../core/runner/run-outcome';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';

/**
 * What the host holds for this session, newest first, within these bytes for each kind: opening large snapshots (a
 * timeline can take hundreds of MiB) never pushes out the run result on screen, which Save and Export name.
 */
export const HELD_BYTES: Record<Held['kind'], number> = {
  outcome: 128 * 2 ** 20,
  timeline: 320 * 2 ** 20,
  samples: 64 * 2 ** 20,
  sanitizer: 64 * 2 ** 20,
  profile: 16 * 2 ** 20,
};

/** A monitoring session's samples as they stream (the UI's series: core/memory/sample-batches.ts), replaced batch by batch. */
export interface LiveSeries {
  series: SampleSeries;
}

export type Held =
  | { kind: 'outcome'; outcome: RunOutcome }
  | { kind: 'timeline'; wire: TimelineWire }
  | { kind: 'samples'; live: LiveSeries }
  | { kind: 'sanitizer'; report: SanitizeReport }
  | { kind: 'profile'; profile: Profile };
type Kind = Held['kind'];
type Of<K extends Kind> = Extract<Held, { kind: K }>;

/** Each kind's ids begin so (a monitoring session's is monitorTimelineId of its own): an id that is gone still says what it named. */
const PREFIX: Record<Kind, string> = { outcome: 'run-', timeline: 'timeline-', samples: 'monitor:', sanitizer: 'sanitizer-', profile: 'profile-' };
const capitalised = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);
const kindOf = (id: string): Kind => (Object.keys(PREFIX) as Kind[]).find((k) => id.startsWith(PREFIX[k])) ?? 'timeline';

/** What was asked for, in words for the message when it is gone: what it is, and what brings it back. */
const GONE: Record<Kind, { what: string; again: string }> = {
  outcome: { what: 'this run’s result', again: 'run it again (or open its result file again)' },
  timeline: { what: 'this memory timeline', again: 'open its file again' },
  samples: { what: 'this monitoring session’s samples', again: 'start monitoring again' },
  sanitizer: { what: 'this sanitizer report', again: 'run the sanitizer again (or open its report again)' },
  profile: { what: 'this kernel profile', again: 'profile the kernel again' },
};

/** The id names something the host no longer holds (evicted, or from before the host restarted): what happened, what to do. */
export class HeldGoneError extends ApiError {
  constructor(kind: Kind, doing: string) {
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
  private readonly held: Record<Kind, BoundedCache<string, { entry: Held; bytes: number }>>;
  /** Ids given out for results larger than their kind's bound (never held), newest 64, with their sizes. */
  private readonly tooLarge = new Map<string, number>();

  constructor(private readonly capacityBytes: Record<Kind, number> = HELD_BYTES) {
    const cache = (kind: Kind) => new BoundedCache<string, { entry: Held; bytes: number }>(capacityBytes[kind], (v) => v.bytes);
    this.held = { outcome: cache('outcome'), timeline: cache('timeline'), samples: cache('samples'), sanitizer: cache('sanitizer'), profile: cache('profile') };
  }

  /** The outcome with the id it is now held under. */
  holdOutcome(outcome: RunOutcome): HeldOutcome {
    return { ...outcome, outcomeId: this.hold({ kind: 'outcome', outcome }) };
  }

  /** The sanitizer report with the id it is now held under. */
  holdReport(report: SanitizeReport): HeldSanitizeReport {
    return { ...report, reportId: this.hold({ kind: 'sanitizer', report }) };
  }

  /** The id a kernel profile is now held under. */
  holdProfile(profile: Profile): string {
    return this.hold({ kind: 'profile', profile });
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
    return this.of('outcome', id, doing).outcome;
  }

  /** The sanitizer report under that id, else why not. */
  report(id: string, doing: string): SanitizeReport {
    return this.of('sanitizer', id, doing).report;
  }

  /** The kernel profile under that id, else why not. */
  profile(id: string, doing: string): Profile {
    return this.of('profile', id, doing).profile;
  }

  /** A monitoring session's samples so far under that id (monitorTimelineId), else why not. */
  samples(id: string, doing: string): SampleSeries {
    return this.of('samples', id, doing).live.series;
  }

  /** Whatever is held under that id; HeldGoneError, saying what the id named, when nothing is. */
  entry(id: string, doing: string): Held {
    const kind = kindOf(id);
    const entry = this.held[kind].get(id)?.entry;
    const large = this.tooLarge.get(id);
    if (!entry && large !== undefined)
      throw new ApiError(
        `${capitalised(GONE[kind].what)} is too large for the workbench to keep (about ${Math.ceil(large / 2 ** 20)} MiB; it keeps ${Math.round(this.capacityBytes[kind] / 2 ** 20)} MiB of them), so it cannot be named to ${doing}. Make it smaller (fewer or smaller buffers read back, a shorter run), then ${doing}.`,
        'HELD_TOO_LARGE',
      );
    if (!entry) throw new HeldGoneError(kind, doing);
    return entry;
  }

  /** What is held under that id when it is of that kind; a refusal naming both kinds when it is another. */
  private of<K extends Kind>(kind: K, id: string, doing: string): Of<K> {
    const entry = this.entry(id, doing);
    const a = (k: Kind) => GONE[k].what.replace(/^this /, 'a ');
    if (entry.kind !== kind) throw new ApiError(`That id names ${a(entry.kind)}, not ${a(kind)}.`, 'HELD_KIND');
    return entry as Of<K>;
  }

  private hold(entry: Held): string {
    const id = `${PREFIX[entry.kind]}${randomUUID()}`;
    const bytes = approxBytes(entry);
    // Larger than its kind's whole bound, it is not held at all: a later call naming it is told so, not "gone".
    if (!this.held[entry.kind].set(id, { entry, bytes })) {
      this.tooLarge.set(id, bytes);
      if (this.tooLarge.size > 64) this.tooLarge.delete(this.tooLarge.keys().next().value!);
    }
    return id;
  }
}
