import type { ReactNode } from 'react';

import { formatBytes } from '../../../core/format';
import type { Track } from '../../../core/memory/timeline-tracks';
import type { EngineLayout } from './timeline-engine';

/** A counter's scale in words: against the device's memory when known, else its own largest value. */
function counterNote(track: Track): string | null {
  if (track.kind !== 'counter') return null;
  const c = track.counter;
  if (c.capacity !== undefined) return `of ${formatBytes(c.capacity)}`;
  let max = 0;
  for (let i = 0; i < c.value.length; i++) max = Math.max(max, c.value[i]!);
  return max > 0 ? `max ${formatBytes(max)}` : null;
}

/**
 * The label column over the canvas's left edge: each track's name as page text, whole (it wraps where its track
 * is tall enough, and is cut with an ellipsis where not, its whole text then its title), a counter's scale under
 * its name, and the view's own controls — zoom in the axis's corner, the allocations' options under their name.
 */
export function TrackLabels({ layout, corner, tools }: { layout: EngineLayout; corner: ReactNode; tools: ReactNode }) {
  const axis = layout.tracks.find((t) => t.kind === 'axis');
  const markers = layout.tracks.find((t) => t.kind === 'markers');
  return (
    <div className="track-labels" style={{ width: layout.gutter, height: layout.height }} data-testid="track-labels">
      {corner && axis && (
        <div className="track-corner" style={{ top: axis.y, height: axis.height + (markers?.height ?? 0) }}>
          {corner}
        </div>
      )}
      {layout.tracks.map((t) => {
        if (t.kind === 'axis' || (t.kind === 'markers' && corner && axis)) return null;
        const note = counterNote(t);
        const flagged = t.kind === 'counter' && !!t.counter.flag;
        const full = note ? `${t.label} (${note})` : t.label;
        return (
          <div
            key={`${t.kind}:${t.y}`}
            className={`track-label track-${t.kind}${flagged ? ' flagged' : ''}`}
            style={{ top: t.y, height: t.height }}
            title={full}
            data-testid="track-label"
          >
            <span className="track-name" style={{ WebkitLineClamp: Math.max(1, Math.floor((t.height - 4) / 15)) }}>
              {t.label}
            </span>
            {note && t.height >= 40 && <span className="track-note">{note}</span>}
            {t.kind === 'allocations' && tools}
          </div>
        );
      })}
    </div>
  );
}
