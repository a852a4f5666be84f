import { useMemo } from 'react';

import { formatBytes } from '../../../core/format';
import { hexAddress, type TimelineTarget } from '../../../core/memory/timeline-describe';
import { userFrameOf } from '../../../core/memory/timeline-model';
import { rangeAllocations } from '../../../core/memory/timeline-range';
import { formatDuration } from '../../../core/memory/timeline-viewport';
import type { Timeline } from '../../../core/memory/timeline';

/** Rows listed: a range over a million allocations lists these and counts the rest. */
const LISTED = 50;

const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** "0.2 ms – 3.4 ms", "0.2 ms – (never freed)". */
const when = (start: number, end: number) => `${formatDuration(start)} – ${Number.isFinite(end) ? formatDuration(end) : 'never freed'}`;

/**
 * The allocations a selected range holds (made in it, freed in it, or alive across it), largest first: size,
 * address, when, and the line of the user's code that made it (else its buffer or step). Each size selects its
 * allocation on the timeline.
 */
export function RangeAllocations({
  timeline,
  range,
  onSelect,
}: {
  timeline: Timeline;
  range: { startUs: number; endUs: number };
  onSelect(target: TimelineTarget): void;
}) {
  const list = useMemo(() => rangeAllocations(timeline, range.startUs, range.endUs, LISTED), [timeline, range.startUs, range.endUs]);
  if (list.count === 0) return <p className="muted">No allocation was alive in this range.</p>;
  const madeBy = (i: number) => {
    const frame = userFrameOf(timeline, i);
    if (frame) return `${basename(frame.file)}:${frame.line}${frame.name ? ` ${frame.name}` : ''}`;
    const label = timeline.labels[timeline.allocations.label[i]!];
    return label ?? '—';
  };
  return (
    <>
      <h3>
        Its allocations: {list.count.toLocaleString('en')}, {formatBytes(list.bytes)}
      </h3>
      <table className="memory-groups" data-testid="memory-range-allocations">
        <thead>
          <tr>
            <th scope="col">Size</th>
            <th scope="col">Address</th>
            <th scope="col">When</th>
            <th scope="col">Made by</th>
          </tr>
        </thead>
        <tbody>
          {list.rows.map((r) => (
            <tr key={r.index}>
              <td className="num">
                <button
                  type="button"
                  className="link"
                  onClick={() => onSelect({ kind: 'allocation', index: r.index })}
                  aria-label={`${formatBytes(r.size)} at ${hexAddress(r.address)}, made at ${formatDuration(r.start)}: select it on the timeline`}
                >
                  {formatBytes(r.size)}
                </button>
              </td>
              <td className="mono">{hexAddress(r.address)}</td>
              <td title={r.role}>{when(r.start, r.end)}</td>
              <td className="mono">{madeBy(r.index)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.count > list.rows.length && (
        <p className="muted" data-testid="memory-range-more">
          and {(list.count - list.rows.length).toLocaleString('en')} more, smaller.
        </p>
      )}
    </>
  );
}
