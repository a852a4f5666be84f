import { useState } from 'react';

import type { RunOutcome } from '../../core/runner/run-outcome';
import { dirnameOf, resolveShownPath } from '../../core/workspace/paths';
import type { OutcomeOrigin } from '../store/run-slice';
import { rememberFolderOf, startFolder, workFolder } from '../store/open-file';
import type { WorkbenchStore } from '../store/store';
import { FileBrowserDialog } from './FileBrowserDialog';

/** Browse… for a result: the same file browser as every open dialog, starting where the last file was found. */
function BrowseResult({ store }: { store: WorkbenchStore }) {
  const [browsing, setBrowsing] = useState(false);
  return (
    <>
      <button onClick={() => setBrowsing(true)} aria-label="Browse… for a saved result">
        Browse…
      </button>
      {browsing && (
        <FileBrowserDialog
          store={store}
          title="Open a run result"
          mode="file"
          start={startFolder(store)}
          accept={/\.json$/i}
          chooseLabel="Open result"
          onChoose={(p) =>
            store
              .getState()
              .openOutcome(p)
              .then(() => store.getState().runError)
          }
          onClose={() => setBrowsing(false)}
          testId="result-open-dialog"
        />
      )}
    </>
  );
}

/**
 * The Run tab's file actions: open or save a result by name or path (shown in full when typed short), Browse…, a
 * sanitizer report, export or open a bundle; where the result on screen came from; where it was saved.
 */
export function ResultFileActions({
  store,
  outcome: o,
  origin,
  onOpenReport,
}: {
  store: WorkbenchStore;
  outcome: RunOutcome | null;
  origin: OutcomeOrigin | null;
  onOpenReport: () => void;
}) {
  const [path, setPath] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const s = store.getState();
  // Typed names are shown against a folder, and the full path is what is read or written.
  // Before any result, a relative name is where the host resolves it: the folder serve runs in.
  const folder = origin?.file ? dirnameOf(origin.file) : workFolder(store);
  const target = resolveShownPath(folder, path);
  const save = () => {
    setSaved(null);
    void s.saveResult(target).then(setSaved);
  };
  return (
    <>
      <div className="run-actions">
        <input aria-label="Result file" placeholder="result.json or /path/to/result.json" value={path} onChange={(e) => setPath(e.target.value)} />
        <button onClick={() => target && void s.openOutcome(target).then(() => !store.getState().runError && rememberFolderOf(target))}>Open result</button>
        <BrowseResult store={store} />
        <button disabled={!o} onClick={save}>
          Save result
        </button>
        <button onClick={onOpenReport}>Open sanitizer report…</button>
        <button
          disabled={!o}
          onClick={() => s.showBundleDialog('export')}
          data-testid="run-export-bundle"
          title="This result, its plan and what explains it, as one .zip"
        >
          Export bundle…
        </button>
        <button onClick={() => s.showBundleDialog('open')} data-testid="open-bundle">
          Open bundle…
        </button>
        {origin?.file && (
          <span className="muted">
            {origin.bundle ? 'from the bundle' : 'opened from'} {origin.file}
          </span>
        )}
        {origin?.profiled && <span className="muted">The run Profile made (its launch under Nsight Compute when the counters could be read).</span>}
      </div>
      {target && path.trim() && target !== path.trim() && (
        <p className="muted shown-path" data-testid="result-path-shown">
          {target}
        </p>
      )}
      {saved && (
        <p className="status-ok" role="status" data-testid="result-saved">
          Result saved to {saved}
        </p>
      )}
    </>
  );
}
