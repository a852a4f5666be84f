import { thousands } from '../../../core/format';
import type { TraceEventRow } from '../../../core/memory/trace-timeline';
import { formatDuration } from '../../../core/memory/timeline-viewport';

/**
 * A Chrome trace's events that have a duration, by name: how many, their total and their longest time, the longest
 * in all first — what the trace holds in words, whatever its events are (the timeline draws them too).
 */
export function TraceEvents({ rows, more }: { rows: TraceEventRow[]; more: number }) {
  if (rows.length === 0) return null;
  return (
    <section className="trace-events" aria-label="Events in the trace" data-testid="trace-events">
      <table>
        <caption>Events in the trace, by total time</caption>
        <thead>
          <tr>
            <th scope="col">event</th>
            <th scope="col">category</th>
            <th scope="col" className="num">
              count
            </th>
            <th scope="col" className="num">
              total
            </th>
            <th scope="col" className="num">
              longest
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.cat}\u0000${r.name}`} data-testid="trace-event-row">
              <th scope="row" className="mono">
                {r.name || '(no name)'}
              </th>
              <td>{r.cat}</td>
              <td className="num">{thousands(r.count)}</td>
              <td className="num">{formatDuration(r.totalUs)}</td>
              <td className="num">{formatDuration(r.longestUs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {more > 0 && <p className="muted">…and {thousands(more)} more kinds of event, each shorter in all.</p>}
    </section>
  );
}
