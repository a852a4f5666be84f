import { useEffect, useState } from 'react';

import { formatBytes } from '../../core/format';
import { joinPath, resolveShownPath } from '../../core/workspace/paths';
import type { FolderListing } from '../store/diagnose-slice';
import { rememberFolderOf } from '../store/open-file';
import type { WorkbenchStore } from '../store/store';
import { Modal } from './Modal';
import { Prose } from './Prose';

/**
 * A file or a folder on the host (the GPU server, in serve mode), picked from its listing or typed: a name goes into
 * the folder shown, a full path stands as typed. `onChoose` answers null when it took the path, else why not (shown).
 */
export function FileBrowserDialog({
  store,
  title,
  mode,
  start,
  accept,
  chooseLabel,
  onChoose,
  onClose,
  testId,
}: {
  store: WorkbenchStore;
  title: string;
  mode: 'file' | 'folder';
  /** The folder to list first (the host's home folder for null). */
  start: string | null;
  /** Files that can be chosen (the others are not listed). */
  accept?: RegExp;
  chooseLabel: string;
  onChoose: (path: string) => Promise<string | null>;
  onClose: () => void;
  testId?: string;
}) {
  const [listing, setListing] = useState<FolderListing | null>(null);
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const browse = (dir: string | null, fallBack = false): Promise<void> =>
    store
      .getState()
      .listFolder(dir)
      .then(
        (l) => {
          setListing(l);
          setError(null);
        },
        // A start folder that is not there (a typo in the form): the home folder instead.
        (e: Error) => (fallBack && dir !== null ? browse(null) : setError(e.message)),
      );
  useEffect(() => {
    void browse(start, true); // listed once, from where the dialog starts
  }, []);

  const choose = async (path: string) => {
    setBusy(true);
    const failed = await onChoose(path);
    setBusy(false);
    if (failed) return setError(failed);
    if (mode === 'file') rememberFolderOf(path); // the next file box starts where this one found its file
    onClose();
  };
  const folder = listing?.dir ?? start ?? '/';
  const target = resolveShownPath(folder, typed);
  const entries = listing?.entries.filter((e) => e.kind === 'dir' || (mode === 'file' && (!accept || accept.test(e.name)))) ?? [];

  return (
    <Modal label={title} onClose={onClose} testId={testId}>
      <form
        className="file-browser"
        onSubmit={(e) => {
          e.preventDefault();
          if (!target) return;
          // A folder typed where a file is asked for is gone into, not opened.
          if (mode === 'file')
            void store
              .getState()
              .listFolder(target)
              .then(
                (l) => {
                  setListing(l);
                  setTyped('');
                  setError(null);
                },
                () => choose(target),
              );
          else void choose(target);
        }}
      >
        <h2>{title}</h2>
        <label className="field">
          {mode === 'file' ? 'File' : 'Folder'} (a name in the folder below, or a full path){' '}
          <input autoFocus value={typed} onChange={(e) => setTyped(e.target.value)} aria-label={mode === 'file' ? 'File path' : 'Folder path'} />
        </label>
        {target && typed.trim() !== target && <p className="muted shown-path">{target}</p>}
        <div className="file-browser-actions">
          <button type="submit" disabled={busy || !target}>
            {busy ? 'Opening…' : chooseLabel}
          </button>
          {mode === 'folder' && listing && (
            <button type="button" disabled={busy} onClick={() => void choose(listing.dir)}>
              Use the folder shown
            </button>
          )}
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
        {error && (
          <p className="status-fail" role="alert" data-testid="file-browser-error">
            <Prose text={error} />
          </p>
        )}
        {listing && (
          <>
            <h3 className="mono file-browser-folder">{listing.dir}</h3>
            <FolderEntries
              listing={listing}
              entries={entries}
              busy={busy}
              mode={mode}
              onFolder={(dir) => void browse(dir)}
              onFile={(path) => void choose(path)}
            />
          </>
        )}
      </form>
    </Modal>
  );
}

/** A folder's entries: its parent, its folders (to go into) and the files that can be chosen. */
function FolderEntries({
  listing,
  entries,
  busy,
  mode,
  onFolder,
  onFile,
}: {
  listing: FolderListing;
  entries: FolderListing['entries'];
  busy: boolean;
  mode: 'file' | 'folder';
  onFolder: (dir: string) => void;
  onFile: (path: string) => void;
}) {
  return (
    <ul className="file-list" aria-label={`In ${listing.dir}`}>
      {listing.parent && (
        <li>
          <button type="button" onClick={() => onFolder(listing.parent!)} aria-label="Up to the parent folder">
            ..
          </button>
        </li>
      )}
      {entries.map((e) => (
        <li key={e.name}>
          <button type="button" disabled={busy} onClick={() => (e.kind === 'dir' ? onFolder : onFile)(joinPath(listing.dir, e.name))}>
            {e.kind === 'dir' ? `${e.name}/` : e.name}
          </button>
          {e.kind === 'file' && <span className="muted"> {formatBytes(e.size)}</span>}
        </li>
      ))}
      {!entries.length && <li className="muted">{mode === 'file' ? 'No folder or file to open here.' : 'No folder in here.'}</li>}
    </ul>
  );
}
