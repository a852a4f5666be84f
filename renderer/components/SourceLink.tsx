import type { SourceContext, SourceRef } from '../../core/workspace/source-link';
import type { WorkbenchStore } from '../store/store';

/** A file and line a result or diagnostic names: opens that file (asking where, when it cannot be found) and marks the line. */
export function SourceLink({ store, at, context, testId }: { store: WorkbenchStore; at: SourceRef; context: SourceContext; testId?: string }) {
  const place = `${at.file}:${at.line}${at.column ? `:${at.column}` : ''}`;
  return (
    <button
      className="link mono source-link"
      onClick={() => void store.getState().revealSource(at, context)}
      title={`Open ${at.file} and show line ${at.line}`}
      data-testid={testId}
    >
      {place}
    </button>
  );
}
