import { useMemo, useState } from 'react';

import { formatBytes } from '../../../core/format';
import { describeInternalRun, stackRows } from '../../../core/memory/stack-rows';
import { describe, frameText, type TimelineTarget } from '../../../core/memory/timeline-describe';
import { aliveAt, groupAllocations, groupingsFor, type GroupBy } from '../../../core/memory/timeline-model';
import { formatDuration } from '../../../core/memory/timeline-viewport';
import type { Timeline, TimelineFrame } from '../../../core/memory/timeline';
import type { SourceContext } from '../../../core/workspace/source-link';
import type { WorkbenchStore } from '../../store/store';
import { RangeAllocations } from './RangeAllocations';

/** Frames that are nobody's code to open: the allocator's own C++ ("??", no line). */
const openable = (f: TimelineFrame) => f.line > 0 && f.file !== '??' && f.file !== '';

/** What is selected on the timeline: its facts, its stack (each frame opens its line), its step, a marker's detail. */
export function MemoryDetails({
  store,
  timeline,
  target,
  sources,
  onAliveAt,
  onSelect,
}: {
  store: WorkbenchStore;
  timeline: Timeline;
  target: TimelineTarget;
  sources: SourceContext;
  onAliveAt(at: { timeUs: number; title: string }): void;
  /** Select something else on the timeline (an allocation of a range's list). */
  onSelect(target: TimelineTarget): void;
}) {
  const d = describe(timeline, target);
  const open = (f: TimelineFrame) => void store.getState().revealSource({ file: f.file, line: f.line }, sources);
  const user = d.userFrame >= 0 ? d.frames[d.userFrame] : undefined;
  const marker = target.kind === 'marker' ? timeline.markers[target.index] : undefined;
  return (
    <section aria-label="Selected on the timeline" data-testid="memory-details">
      <h3>Selected</h3>
      <p>
        <strong data-testid="memory-details-title">{d.title}</strong>
      </p>
      <dl data-testid="memory-details-facts">
        {d.facts.map((f) => (
          <div key={f.name} style={{ display: 'contents' }}>
            <dt>{f.name}</dt>
            <dd>{f.value}</dd>
          </div>
        ))}
      </dl>
      {user && openable(user) && (
        <button type="button" onClick={() => open(user)} data-testid="memory-open-source">
          Open source line {basename(user.file)}:{user.line}
        </button>
      )}
      {!user && timeline.sourceFile && (target.kind === 'allocation' || target.kind === 'span') && (
        <button
          type="button"
          onClick={() => void store.getState().revealSource({ file: timeline.sourceFile!, line: 1 }, sources)}
          data-testid="memory-open-source"
        >
          Open {basename(timeline.sourceFile)}
        </button>
      )}
      {d.detail && <p className="memory-detail-text">{d.detail}</p>}
      {marker && (
        <button type="button" onClick={() => onAliveAt({ timeUs: marker.timeUs, title: marker.label })}>
          What was alive then
        </button>
      )}
      {target.kind === 'range' && <RangeAllocations timeline={timeline} range={target} onSelect={onSelect} />}
      {d.frames.length > 0 && (
        <StackList key={'index' in target ? `${target.kind}:${target.index}` : target.kind} frames={d.frames} userFrame={d.userFrame} onOpen={open} />
      )}
    </section>
  );
}

const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/**
 * A stack, innermost first, with the user's own frames leading the eye: each run of internal frames (PyTorch,
 * Python, the C++ runtime) is one line that opens to show them all, never dropped.
 */
function StackList({ frames, userFrame, onOpen }: { frames: TimelineFrame[]; userFrame: number; onOpen(f: TimelineFrame): void }) {
  const rows = useMemo(() => stackRows(frames, userFrame), [frames, userFrame]);
  const [opened, setOpened] = useState<ReadonlySet<number>>(new Set());
  const toggle = (first: number) =>
    setOpened((was) => {
      const next = new Set(was);
      if (!next.delete(first)) next.add(first);
      return next;
    });
  const frameItem = (i: number) => {
    const f = frames[i]!;
    return (
      <li key={i} value={i + 1} className={i === userFrame ? 'user-frame' : undefined}>
        {openable(f) ? (
          <button type="button" className="link mono" onClick={() => onOpen(f)} title={`Open ${f.file} at line ${f.line}`}>
            {frameText(f)}
          </button>
        ) : (
          <span className="mono muted">{frameText(f)}</span>
        )}
        {i === userFrame && <span className="muted"> — your code</span>}
      </li>
    );
  };
  return (
    <>
      <h3>Stack (innermost first)</h3>
      <ol data-testid="memory-stack">
        {rows.map((row) => {
          if (row.kind === 'frame') return frameItem(row.index);
          const open = opened.has(row.first);
          const id = `stack-run-${row.first}`;
          return (
            <li key={`run-${row.first}`} className="stack-run">
              <button type="button" className="link muted" aria-expanded={open} aria-controls={id} onClick={() => toggle(row.first)}>
                {open ? '▾' : '▸'} {describeInternalRun(frames, row.first, row.count)}
              </button>
              {open && (
                <ol id={id} start={row.first + 1} className="stack-run-frames">
                  {Array.from({ length: row.count }, (_, k) => frameItem(row.first + k))}
                </ol>
              )}
            </li>
          );
        })}
      </ol>
    </>
  );
}

const GROUPING_WORDS: Record<GroupBy, string> = { stack: 'whole stack', origin: 'line of your code', step: 'plan step', label: 'buffer' };

/**
 * What was alive at one moment (the peak, an OOM), grouped: by the whole stack that made it, or by the line
 * of the user's code, the step, or the buffer. Each group's bytes, count and largest allocation, which
 * selects on the timeline.
 */
export function AliveAtPanel({
  timeline,
  at,
  onSelect,
  onClose,
}: {
  timeline: Timeline;
  at: { timeUs: number; title: string };
  onSelect(target: TimelineTarget): void;
  onClose(): void;
}) {
  const offered = useMemo(() => groupingsFor(timeline), [timeline]);
  const [chosen, setBy] = useState<GroupBy>(offered[0] ?? 'origin');
  const by = offered.includes(chosen) ? chosen : (offered[0] ?? 'origin');
  const alive = useMemo(() => aliveAt(timeline, at.timeUs), [timeline, at.timeUs]);
  const groups = useMemo(() => groupAllocations(timeline, alive, by), [timeline, alive, by]);
  let bytes = 0;
  for (const i of alive) bytes += timeline.allocations.size[i]!;
  const shown = groups.slice(0, 50);
  return (
    <section aria-label="What was alive" data-testid="memory-alive-at">
      <h3>Alive at {formatDuration(at.timeUs)}</h3>
      <p>
        <strong>{at.title}</strong>
      </p>
      <p data-testid="memory-alive-total">
        {alive.length.toLocaleString('en')} allocation{alive.length === 1 ? '' : 's'}, {formatBytes(bytes)}, in {groups.length.toLocaleString('en')} group
        {groups.length === 1 ? '' : 's'}.
      </p>
      {offered.length > 1 && (
        <label className="field">
          Group by{' '}
          <select value={by} onChange={(e) => setBy(e.target.value as GroupBy)}>
            {offered.map((g) => (
              <option key={g} value={g}>
                {GROUPING_WORDS[g]}
              </option>
            ))}
          </select>
        </label>
      )}
      <table className="memory-groups" data-testid="memory-groups">
        <thead>
          <tr>
            <th scope="col">Made by</th>
            <th scope="col">Bytes</th>
            <th scope="col">Count</th>
            <th scope="col">Largest</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((g, k) => (
            <tr key={g.key}>
              <td className="mono">{g.title}</td>
              <td className="num">{formatBytes(g.bytes)}</td>
              <td className="num">{g.count.toLocaleString('en')}</td>
              <td className="num">
                <button
                  type="button"
                  className="link"
                  onClick={() => onSelect({ kind: 'allocation', index: g.largestIndex })}
                  aria-label={`${formatBytes(g.largest)}: select the largest allocation of group ${k + 1} (${g.title}) on the timeline`}
                >
                  {formatBytes(g.largest)}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {groups.length > shown.length && <p className="muted">and {(groups.length - shown.length).toLocaleString('en')} smaller groups.</p>}
      <button type="button" onClick={onClose}>
        Close
      </button>
    </section>
  );
}
