import { useEffect, useRef } from 'react';
import { useStore } from 'zustand';

import { tabLabels } from '../../core/workspace/tab-labels';
import { onTablistKeyDown, rovingTabIndex } from '../layout/tablist-keys';
import type { WorkbenchStore } from '../store/store';

export function Tabs({ store }: { store: WorkbenchStore }) {
  const documents = useStore(store, (s) => s.documents);
  const activeId = useStore(store, (s) => s.activeId);
  const { activate, close } = store.getState();
  const list = useRef<HTMLDivElement>(null);
  const selected = () => list.current?.querySelector<HTMLElement>('[role="tab"][aria-selected="true"]') ?? null;
  // The file on screen has its tab in view, however many are open (the row scrolls sideways). After the panels have
  // their sizes: coming back from another view, the row is laid out again once they do.
  useEffect(() => {
    const row = list.current;
    if (!row) return;
    // The row alone scrolls, sideways (scrollIntoView would scroll every panel around it too).
    const show = () => {
      const tab = selected()?.getBoundingClientRect();
      const box = row.getBoundingClientRect();
      if (!tab) return;
      if (tab.left < box.left) row.scrollLeft -= box.left - tab.left;
      else if (tab.right > box.right) row.scrollLeft += Math.min(tab.right - box.right, tab.left - box.left);
    };
    show();
    const resized = new ResizeObserver(show);
    resized.observe(row);
    return () => resized.disconnect();
  }, [activeId, documents.length]);
  const closeAsking = (d: (typeof documents)[number]) => {
    if (d.dirty && !window.confirm(`${d.name} has unsaved changes. Close it and discard them?`)) return;
    void close(d.id);
    // The closed tab took the focus with it: it goes to the tab now in front (the next one), or to Open… when none is left.
    requestAnimationFrame(() => (selected() ?? document.querySelector<HTMLElement>('[data-testid="open-file"]'))?.focus());
  };
  const labels = tabLabels(documents);
  return (
    <div className="tabs" role="tablist" aria-label="Open files" onKeyDown={onTablistKeyDown} ref={list}>
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
