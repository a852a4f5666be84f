import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import { formatBytes } from '../../core/format';
import { basenameOf, dirnameOf, resolveShownPath } from '../../core/workspace/paths';
import type { WorkbenchStore } from '../store/store';
import { Modal } from './Modal';

type Listing = { dir: string; parent: string | null; entries: { name: string; kind: 'file' | 'dir'; size: number }[] };

/** Open a sample or any .cu file on the host (the GPU server, in serve mode), or a diagnostic bundle (.zip). */
export function OpenDialog({ store, onClose, onBundleOpened }: { store: WorkbenchStore; onClose: () => void; onBundleOpened?: () => void }) {
  const api = useStore(store, (s) => s.api);
  const openPath = useStore(store, (s) => s.openPath);
  const [samples, setSamples] = useState<{ name: string; path: string }[]>([]);
  const [listing, setListing] = useState<Listing | null>(null);
  const [path, setPath] = useState('');
  const [error, setError] = useState<string | null>(null);

  const browse = (dir: string | null) =>
    api.invoke('files.list', { dir }).then(
      (l) => {
        setListing(l);
        setError(null);
      },
      (e: Error) => setError(e.message),
    );
  useEffect(() => {
    void api.invoke('samples.list', {}).then(setSamples, (e: Error) => setError(e.message));
    void browse(null);
  }, [api]);

  const openBundle = useStore(store, (s) => s.openBundle);
  const open = async (p: string) => {
    // A .zip is a diagnostic bundle: opened read-only, every view from it.
    if (/\.zip$/i.test(p)) {
      const failed = await openBundle(p);
      if (failed) return setError(failed);
      onClose();
      return onBundleOpened?.();
    }
    await openPath(p);
    onClose();
  };

  return (
    <Modal label="Open a file" onClose={onClose} testId="open-dialog">
      <div>
        <h2>Open</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (path.trim()) void open(path.trim());
          }}
        >
          <input autoFocus placeholder="/path/to/kernel.cu or bundle.zip" value={path} onChange={(e) => setPath(e.target.value)} aria-label="Path" />
          <button type="submit">Open</button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </form>
        {error && <p className="status-fail">{error}</p>}
        <h3>Samples</h3>
        <ul className="file-list" data-testid="samples">
          {samples.map((s) => (
            <li key={s.path}>
              <button onClick={() => void open(s.path)}>{s.name}</button>
            </li>
          ))}
        </ul>
        {listing && (
          <>
            <h3 className="mono">{listing.dir}</h3>
            <ul className="file-list">
              {listing.parent && (
                <li>
                  <button onClick={() => void browse(listing.parent)}>..</button>
                </li>
              )}
              {listing.entries.map((e) => (
                <li key={e.name}>
                  <button onClick={() => void (e.kind === 'dir' ? browse(`${listing.dir}/${e.name}`) : open(`${listing.dir}/${e.name}`))}>
                    {e.kind === 'dir' ? `${e.name}/` : e.name}
                  </button>
                  {e.kind === 'file' && <span className="muted"> {formatBytes(e.size)}</span>}
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    </Modal>
  );
}

/** Save as: a name goes into the folder shown (the file's own, or the home folder); the full path written is shown before and after. */
export function SaveAsDialog({ store, onClose }: { store: WorkbenchStore; onClose: () => void }) {
  const activeId = useStore(store, (s) => s.activeId);
  const doc = useStore(store, (s) => s.documents.find((d) => d.id === s.activeId));
  const startDir = useStore(store, (s) => s.info?.startDir ?? '/');
  const save = useStore(store, (s) => s.save);
  const folder = doc?.path ? dirnameOf(doc.path) : startDir;
  const [path, setPath] = useState(doc?.path ? basenameOf(doc.path) : (doc?.name ?? 'kernel.cu'));
  const target = resolveShownPath(folder, path);
  return (
    <Modal label="Save as" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (activeId && target) void save(activeId, target).then((ok) => ok && onClose());
        }}
      >
        <h2>Save as</h2>
        <p className="muted">
          In{' '}
          <span className="mono" data-testid="save-folder">
            {folder}
          </span>{' '}
          (or give a full path)
        </p>
        <input autoFocus value={path} onChange={(e) => setPath(e.target.value)} aria-label="Save to path" />
        <button type="submit" disabled={!target}>
          Save
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <p className="shown-path" data-testid="save-target">
          {target ? `Saves to ${target}` : 'Give a file name.'}
        </p>
      </form>
    </Modal>
  );
}
