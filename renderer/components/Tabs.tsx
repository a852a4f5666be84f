import { useStore } from 'zustand';

import { tabLabels } from '../../core/workspace/tab-labels';
import { onTablistKeyDown, rovingTabIndex } from '../layout/tablist-keys';
import type { WorkbenchStore } from '../store/store';

export function Tabs({ store }: { store: WorkbenchStore }) {
  const documents = useStore(store, (s) => s.documents);
  const activeId = useStore(store, (s) => s.activeId);
  const { activate, close } = store.getState();
  const closeAsking = (d: (typeof documents)[number]) => {
    if (!d.dirty || window.confirm(`${d.name} has unsaved changes. Close it and discard them?`)) void close(d.id);
  };
  const labels = tabLabels(documents);
  return (
    <div className="tabs" role="tablist" aria-label="Open files" onKeyDown={onTablistKeyDown}>
      {documents.map((d) => {
        // Files of the same name say their folder, as VS Code does.
        const folder = labels.get(d.id)?.folder ?? null;
        return (
          <div
            key={d.id}
            role="tab"
            aria-selected={d.id === activeId}
            tabIndex={rovingTabIndex(d.id === activeId)}
            className="tab"
            onClick={() => activate(d.id)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' || e.key === ' ') activate(d.id);
              else if (e.key === 'Delete') closeAsking(d);
              else return;
              e.preventDefault();
            }}
            title={`${d.path ?? 'not saved yet'} (Delete closes)`}
            data-testid="tab"
          >
            <span>{d.name}</span>
            {folder && (
              <span className="tab-folder" data-testid="tab-folder">
                {folder}
              </span>
            )}
            {d.dirty && (
              <span className="dirty" role="img" aria-label="unsaved changes" data-testid="dirty">
                ●
              </span>
            )}
            {/* For the mouse; the keyboard closes a focused tab with Delete (a button inside a tab is not allowed). */}
            <span
              className="close"
              aria-hidden="true"
              title={`Close ${d.name}${folder ? ` (${folder})` : ''}`}
              onClick={(e) => {
                e.stopPropagation();
                closeAsking(d);
              }}
            >
              ×
            </span>
          </div>
        );
      })}
    </div>
  );
}
