import type { CompileResult } from '../../core/compile/compile-result';
import { diagnosticPosition } from '../editor/markers';
import { revealPosition } from './EditorPane';

export function ProblemsPanel({ result }: { result: CompileResult | null }) {
  if (!result) return <p className="muted">No compile yet.</p>;
  if (result.diagnostics.length === 0) return <p className="muted">{result.ok ? 'No problems.' : 'The compiler failed without a message: see the log.'}</p>;
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
            onClick={() => at && revealPosition(at.line, at.column)}
            tabIndex={0}
            onKeyDown={(e) => {
              const row = e.currentTarget;
              if ((e.key === 'Enter' || e.key === ' ') && at) revealPosition(at.line, at.column);
              else if (e.key === 'ArrowDown') (row.nextElementSibling as HTMLElement | null)?.focus();
              else if (e.key === 'ArrowUp') (row.previousElementSibling as HTMLElement | null)?.focus();
              else return;
              e.preventDefault();
            }}
          >
            <span className={`status-${d.severity === 'error' ? 'fail' : d.severity === 'warning' ? 'warn' : 'ok'}`}>{d.severity}</span>{' '}
            {at ? <span className="mono">{`${at.line}:${at.column}`}</span> : <span className="mono">{d.source}</span>} {d.message}
            {d.code && <span className="muted"> ({d.code})</span>}
          </li>
        );
      })}
    </ul>
  );
}
