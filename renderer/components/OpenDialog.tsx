import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import type { RecentFile } from '../../core/api/workspace';
import { basenameOf, dirnameOf, resolveShownPath } from '../../core/workspace/paths';
import { kindWords, openAnyFile, recentFiles, startFolder } from '../store/open-file';
import type { WorkbenchStore } from '../store/store';
import { FileBrowserDialog } from './FileBrowserDialog';
import { Modal } from './Modal';
import { Prose } from './Prose';

/**
 * Open…: a path typed (a relative one against the folder the host runs in), a file picked in the file browser, a
 * recent file or a sample. What the file is comes from its content (files.sniff), and it opens where it belongs:
 * a source in the editor, a result in the Run tab, a kernel profile in the Profile tab, a snapshot in the Memory tab, a bundle in its view, and so on.
 */
export function OpenDialog({
  store,
  onClose,
  onBundleOpened,
  onDiagnosisOpened,
}: {
  store: WorkbenchStore;
  onClose: () => void;
  onBundleOpened?: () => void;
  onDiagnosisOpened?: () => void;
}) {
  const listSamples = useStore(store, (s) => s.listSamples);
  const work = useStore(store, (s) => s.info?.workDir ?? s.info?.startDir ?? '/');
  const [samples, setSamples] = useState<{ name: string; path: string }[]>([]);
  const [recent, setRecent] = useState<RecentFile[]>([]);
  const [browsing, setBrowsing] = useState(false);
  const [path, setPath] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const target = resolveShownPath(work, path);

  useEffect(() => {
    void listSamples().then(setSamples, (e: Error) => setError(e.message));
    void recentFiles(store).then(setRecent);
  }, [listSamples]);

  const open = async (p: string): Promise<string | null> => {
    setBusy(true);
    setError(null);
    const failed = await openAnyFile(store, p, { onBundle: onBundleOpened, onDiagnosis: onDiagnosisOpened });
    setBusy(false);
    if (failed) setError(failed);
    else onClose();
    return failed;
  };

  if (browsing)
    return (
      <FileBrowserDialog
        store={store}
        title="Open a file"
        mode="file"
        start={startFolder(store)}
        chooseLabel="Open"
        onChoose={open}
        onClose={() => setBrowsing(false)}
        testId="open-browse-dialog"
      />
    );
  return (
    <Modal label="Open a file" onClose={onClose} testId="open-dialog">
      <div>
        <h2>Open</h2>
        <p className="muted">
          A source, launch plan, run result, sanitizer report, kernel profile, PyTorch snapshot, bundle or diagnosis: what it is is read from the file, and it
          opens where it belongs. A relative path is in{' '}
          <span className="mono" data-testid="open-work-folder">
            {work}
          </span>
          .
        </p>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (target) void open(target);
          }}
        >
          <input
            autoFocus
            placeholder="/path/to/kernel.cu, result.json, snapshot.pickle, bundle.zip"
            value={path}
            onChange={(e) => setPath(e.target.value)}
            aria-label="Path"
          />
          <button type="submit" disabled={busy}>
            Open
          </button>
          <button type="button" onClick={() => setBrowsing(true)}>
            Browse…
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </form>
        {target && path.trim() !== target && <p className="muted shown-path">{target}</p>}
        {error && (
          <p className="status-fail" role="alert" data-testid="open-error">
            <Prose text={error} />
          </p>
        )}
        {recent.length > 0 && (
          <>
            <h3>Recent</h3>
            <ul className="file-list" data-testid="recent-files" aria-label="Recent files">
              {recent.map((r) => (
                <li key={r.path}>
                  <button onClick={() => void open(r.path)} title={r.path}>
                    {basenameOf(r.path)}
                  </button>
                  <span className="muted">
                    {' '}
                    {kindWords(r.kind)} · <span className="mono">{dirnameOf(r.path)}</span>
                  </span>
                </li>
              ))}
            </ul>
          </>
        )}
        <h3>Samples</h3>
        <ul className="file-list" data-testid="samples">
          {samples.map((s) => (
            <li key={s.path}>
              <button onClick={() => void open(s.path)}>{s.name}</button>
            </li>
          ))}
        </ul>
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
