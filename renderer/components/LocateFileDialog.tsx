import { useState } from 'react';
import { useStore } from 'zustand';

import { basenameOf, resolveShownPath } from '../../core/workspace/paths';
import { tabLabels } from '../../core/workspace/tab-labels';
import type { WorkbenchStore } from '../store/store';
import { Modal } from './Modal';

/**
 * Asks where a file is when the workbench cannot tell: the file a result names that is neither open nor
 * beside the result, or the file of a recorded launch's kernel. Offers the open files that fit, and a path.
 */
export function LocateFileDialog({ store }: { store: WorkbenchStore }) {
  const request = useStore(store, (s) => s.locate);
  const documents = useStore(store, (s) => s.documents);
  const compiles = useStore(store, (s) => s.compiles);
  const startDir = useStore(store, (s) => s.info?.startDir ?? '/');
  const [path, setPath] = useState('');
  const [busy, setBusy] = useState(false);
  if (!request) return null;

  const labels = tabLabels(documents);
  const fits =
    request.kind === 'line'
      ? documents.filter((d) => d.name === basenameOf(request.ref.file))
      : documents.filter((d) => (compiles[d.id]?.lastGood ?? compiles[d.id]?.result)?.kernels.some((k) => k.name === request.entry));
  const target = resolveShownPath(startDir, path);
  const title = request.kind === 'line' ? `Where is ${request.ref.file}?` : `Which file defines ${request.entry}?`;
  const why =
    request.kind === 'line'
      ? `This names ${request.ref.file}, line ${request.ref.line}, and the workbench cannot tell which file that is${request.tried.length ? ` (it is not at ${request.tried.join(', ')})` : ''}.`
      : `The result records a launch of ${request.entry}; its launch goes into the launch panel of the file that defines it.`;
  const close = () => store.getState().cancelLocate();

  return (
    <Modal label={title} onClose={close} testId="locate-dialog">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!target) return;
          setBusy(true);
          void store
            .getState()
            .locateAt(target)
            .finally(() => setBusy(false));
        }}
      >
        <h2>{title}</h2>
        <p>{why}</p>
        {fits.length > 0 && (
          <>
            <h3>Open files that fit</h3>
            <ul className="file-list locate-choices">
              {fits.map((d) => {
                const label = labels.get(d.id);
                return (
                  <li key={d.id}>
                    <button type="button" onClick={() => store.getState().locateDocument(d.id)} title={d.path ?? 'not saved yet'}>
                      {d.name}
                      {d.path ? <span className="muted"> {d.path}</span> : <span className="muted"> {label?.folder ?? 'not saved'}</span>}
                    </button>
                  </li>
                );
              })}
            </ul>
          </>
        )}
        <h3>Or give its path</h3>
        <input
          autoFocus
          value={path}
          onChange={(e) => setPath(e.target.value)}
          placeholder={`/path/to/${request.kind === 'line' ? basenameOf(request.ref.file) : 'kernel.cu'}`}
          aria-label="Path of the file"
        />
        <button type="submit" disabled={!target || busy}>
          Open
        </button>
        <button type="button" onClick={close}>
          Cancel
        </button>
        {target && path.trim() && <p className="muted shown-path">{target}</p>}
      </form>
    </Modal>
  );
}
