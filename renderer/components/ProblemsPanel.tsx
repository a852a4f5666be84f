import type { CompileResult } from '../../core/compile/compile-result';
import { diagnosticPosition } from '../editor/markers';
import type { WorkbenchStore } from '../store/store';
import { revealPosition } from './EditorPane';
import { Prose } from './Prose';

/** The latest compile's diagnostics for the file on screen; each one shows (and marks) its line. */
export function ProblemsPanel({ result, store }: { result: CompileResult | null; store: WorkbenchStore }) {
  if (!result) return <p className="muted">No compile yet.</p>;
  if (result.diagnostics.length === 0) return <p className="muted">{result.ok ? 'No problems.' : 'The compiler failed without a message: see the log.'}</p>;
  const show = (at: { line: number; column: number } | null) => {
    const id = store.getState().activeId;
    if (!at || !id) return;
    store.getState().revealInDocument(id, at.line, at.column);
    revealPosition(at.line, at.column); // the document is on screen already: at once, so the next key lands there
  };
  return (
    <ul className="problems" data-testid="problems">
      {result.diagnostics.map((d, i) => {
        const at = diagnosticPosition(d, result);
        return (
          <li
            key={i}
            className={`problem-${d.severity}`}
            data-line={at?.line ?? 0}
            data-column={at?.column ?? 0}
            onClick={() => show(at)}
            tabIndex={0}
            onKeyDown={(e) => {
              const row = e.currentTarget;
              if (e.key === 'Enter' || e.key === ' ') show(at);
              else if (e.key === 'ArrowDown') (row.nextElementSibling as HTMLElement | null)?.focus();
              else if (e.key === 'ArrowUp') (row.previousElementSibling as HTMLElement | null)?.focus();
              else return;
              e.preventDefault();
            }}
          >
            <span className={`status-${d.severity === 'error' ? 'fail' : d.severity === 'warning' ? 'warn' : 'ok'}`}>{d.severity}</span>{' '}
            {at ? <span className="mono">{`${at.line}:${at.column}`}</span> : <span className="mono">{d.source}</span>} <Prose text={d.message} />
            {d.code && <span className="muted"> ({d.code})</span>}
          </li>
        );
      })}
    </ul>
  );
}
