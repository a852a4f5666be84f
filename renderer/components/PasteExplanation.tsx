import type { Ref } from 'react';

import type { OomBreakdown, PasteExplanation as Explained } from '../../core/explain/explain-paste';
import { formatBytes } from '../../core/format';
import { Prose } from './Prose';

/** The rows of an out-of-memory message's figures: those the message gave, in this order, then each process listed. */
function oomRows(o: OomBreakdown): { label: string; bytes: number }[] {
  const rows: { label: string; bytes: number | null }[] = [
    { label: 'Requested', bytes: o.requestedBytes },
    { label: `GPU ${o.gpu ?? ''} total`, bytes: o.totalBytes },
    { label: 'Free', bytes: o.freeBytes },
    { label: 'Allowed (limit the program set)', bytes: o.allowedBytes },
    { label: "Held by CuPy's pool", bytes: o.framework === 'cupy' ? o.reservedByFrameworkBytes : null },
    { label: 'Held by PyTorch tensors', bytes: o.allocatedByFrameworkBytes },
    { label: 'Cached by PyTorch, unused', bytes: o.reservedUnallocatedBytes },
    { label: 'This process in all', bytes: o.thisProcessBytes },
    ...o.processes.map((p) => ({ label: `Process ${p.pid}`, bytes: p.bytes })),
  ];
  return rows.filter((r): r is { label: string; bytes: number } => r.bytes !== null);
}

/** An out-of-memory message's figures, as a table. */
function OomTable({ o }: { o: OomBreakdown }) {
  return (
    <table className="oom" data-testid="oom">
      <tbody>
        {oomRows(o).map((r) => (
          <tr key={r.label}>
            <td>{r.label}</td>
            <td className="num">{formatBytes(r.bytes)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What an error means, its likely causes and what to do; an error without an explanation of its own, its documentation. */
function ExplanationText({ e }: { e: Explained }) {
  if (!e.explanation) return e.error ? <p>{e.error.doc}</p> : null;
  return (
    <>
      <p>
        <Prose text={e.explanation.summary} />
      </p>
      <h3>Likely causes</h3>
      <ul>
        {e.explanation.causes.map((c) => (
          <li key={c}>
            <Prose text={c} />
          </li>
        ))}
      </ul>
      <h3>What to do</h3>
      <ul>
        {e.explanation.next.map((n) => (
          <li key={n}>
            <Prose text={n} />
          </li>
        ))}
      </ul>
    </>
  );
}

/** A paste explained: its title (which Explain focuses), the error it names, an OOM's figures, the paste's specifics, the explanation. */
export function PasteExplanation({ e, titleRef }: { e: Explained; titleRef: Ref<HTMLHeadingElement> }) {
  return (
    <section className="explanation" data-testid="explanation">
      <h2 className={e.recognized ? '' : 'muted'} ref={titleRef} tabIndex={-1} data-testid="explanation-title">
        {e.title}
      </h2>
      {e.error && (
        <div className="mono muted">
          {e.error.name} ({e.error.code}){e.error.runtimeName && e.error.runtimeName !== e.error.name ? ` · ${e.error.runtimeName}` : ''}
          {e.error.sticky ? ' · sticky: the context is dead' : ''}
        </div>
      )}
      {e.oom && <OomTable o={e.oom} />}
      {e.specifics.length > 0 && (
        <ul className="specifics">
          {e.specifics.map((s, i) => (
            <li key={i}>
              <Prose text={s} />
            </li>
          ))}
        </ul>
      )}
      <ExplanationText e={e} />
    </section>
  );
}
