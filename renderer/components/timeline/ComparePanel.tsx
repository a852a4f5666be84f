import { useMemo } from 'react';

import { formatBytes } from '../../../core/format';
import { compareTimelines } from '../../../core/memory/timeline-compare';
import type { Timeline } from '../../../core/memory/timeline';

const signed = (bytes: number) => `${bytes > 0 ? '+' : bytes < 0 ? '−' : '±'}${formatBytes(Math.abs(bytes))}`;

/** Two timelines compared (core/memory/timeline-compare.ts): how the peak moved, what the second holds that the first did not, which groups grew. */
export function ComparePanel({ a, b, aName, bName }: { a: Timeline; b: Timeline; aName: string; bName: string }) {
  const c = useMemo(() => compareTimelines(a, b), [a, b]);
  const grew = c.growth.filter((g) => g.bytes > 0).slice(0, 20);
  const shrank = c.growth
    .filter((g) => g.bytes < 0)
    .slice(-10)
    .reverse();
  return (
    <section aria-label="Comparison" data-testid="memory-compare">
      <h3>Compared</h3>
      <p data-testid="memory-compare-peak">
        Peak {formatBytes(c.peak.a)} in {aName}, {formatBytes(c.peak.b)} in {bName}: <strong>{signed(c.peak.diff)}</strong>.
      </p>
      <p>
        Alive at the end: {formatBytes(c.atEnd.a.bytes)} ({c.atEnd.a.count.toLocaleString('en')}) in {aName}, {formatBytes(c.atEnd.b.bytes)} (
        {c.atEnd.b.count.toLocaleString('en')}) in {bName}; {c.newInB.count.toLocaleString('en')} block{c.newInB.count === 1 ? '' : 's'} (
        {formatBytes(c.newInB.bytes)}) in {bName} that {aName} did not hold.
      </p>
      <h3>Grew the most</h3>
      {grew.length === 0 ? (
        <p className="muted">
          No group holds more at the end of {bName} than at the end of {aName}.
        </p>
      ) : (
        <table className="memory-groups" data-testid="memory-compare-growth">
          <thead>
            <tr>
              <th scope="col">Made by</th>
              <th scope="col">Change</th>
              <th scope="col">{aName}</th>
              <th scope="col">{bName}</th>
            </tr>
          </thead>
          <tbody>
            {grew.map((g) => (
              <tr key={g.key}>
                <td className="mono">{g.title}</td>
                <td className="num">{signed(g.bytes)}</td>
                <td className="num">{formatBytes(g.a.bytes)}</td>
                <td className="num">{formatBytes(g.b.bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {shrank.length > 0 && (
        <>
          <h3>Shrank the most</h3>
          <ul>
            {shrank.map((g) => (
              <li key={g.key}>
                <span className="mono">{g.title}</span>: {signed(g.bytes)}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
