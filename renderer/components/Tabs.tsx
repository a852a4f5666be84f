import { useStore } from 'zustand';

import type { WorkbenchStore } from '../store/store';

export function Tabs({ store }: { store: WorkbenchStore }) {
  const documents = useStore(store, (s) => s.documents);
  const activeId = useStore(store, (s) => s.activeId);
  const { activate, close } = store.getState();
  return (
    <div className="tabs" role="tablist">
      {documents.map((d) => (
        <div
          key={d.id}
          role="tab"
          aria-selected={d.id === activeId}
          className="tab"
          onClick={() => activate(d.id)}
          title={d.path ?? 'not saved yet'}
          data-testid="tab"
        >
          <span>{d.name}</span>
          {d.dirty && (
            <span className="dirty" aria-label="unsaved changes" data-testid="dirty">
              ●
            </span>
          )}
          <button
            className="close"
            aria-label={`Close ${d.name}`}
            onClick={(e) => {
              e.stopPropagation();
              if (!d.dirty || window.confirm(`${d.name} has unsaved changes. Close it and discard them?`)) void close(d.id);
            }}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
