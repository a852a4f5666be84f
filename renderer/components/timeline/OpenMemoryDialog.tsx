import { useState } from 'react';
import { useStore } from 'zustand';

import { dirnameOf, resolveShownPath } from '../../../core/workspace/paths';
import { startFolder } from '../../store/open-file';
import type { WorkbenchStore } from '../../store/store';
import { FileBrowserDialog } from '../FileBrowserDialog';
import { Modal } from '../Modal';
import { Prose } from '../Prose';

const PHASES = { read: 'Reading the file…', parse: 'Reading the pickle…', model: 'Replaying the trace…', timeline: 'Building the timeline…' } as const;

/**
 * Open a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot) or a run result the workbench saved, to see
 * its memory timeline; or, as `compare`, a second one to compare with the first. Read on the host by the
 * whitelist unpickler, never run. A bare name goes into the folder shown; a full path stands as typed.
 */
export function OpenMemoryDialog({ store, as, onClose }: { store: WorkbenchStore; as: 'file' | 'compare'; onClose: () => void }) {
  const startDir = useStore(store, (s) => s.info?.startDir ?? '/');
  const shown = useStore(store, (s) => s.memoryFile?.path ?? s.outcomeOrigin?.file ?? null);
  const opening = useStore(store, (s) => s.memoryOpening);
  const folder = shown ? dirnameOf(shown) : startDir;
  const [path, setPath] = useState('');
  const [error, setError] = useState<string | null>(null);
  const target = resolveShownPath(folder, path);
  const title = as === 'compare' ? 'Compare with a memory snapshot' : 'Open a memory snapshot';
  const [browsing, setBrowsing] = useState(false);
  if (browsing)
    return (
      <FileBrowserDialog
        store={store}
        title={title}
        mode="file"
        start={startFolder(store)}
        accept={/\.(pickle|pkl|json)$/i}
        chooseLabel={as === 'compare' ? 'Compare' : 'Open snapshot'}
        onChoose={async (p) => {
          const failed = await store.getState().openMemoryFile(p, as);
          if (!failed) onClose();
          return failed;
        }}
        onClose={() => setBrowsing(false)}
        testId="memory-browse-dialog"
      />
    );
  return (
    <Modal label={title} onClose={onClose} testId="memory-open-dialog">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!target) return setError('Give the file: a snapshot pickle (torch.cuda.memory._dump_snapshot) or a result the workbench saved (.json).');
          setError(null);
          void store
            .getState()
            .openMemoryFile(target, as)
            .then((failed) => {
              if (failed) setError(failed);
              else onClose();
            });
        }}
      >
        <h2>{title}</h2>
        <p className="muted">
          A PyTorch memory snapshot (<span className="mono">torch.cuda.memory._dump_snapshot(&quot;snapshot.pickle&quot;)</span>), a run result the workbench
          saved, or a Chrome trace (<span className="mono">run --trace</span>, Export trace), in{' '}
          <span className="mono" data-testid="memory-open-folder">
            {folder}
          </span>{' '}
          (or give a full path). It is read, never run.
        </p>
        <label className="field">
          File{' '}
          <input autoFocus value={path} onChange={(e) => setPath(e.target.value)} placeholder="snapshot.pickle" aria-label="Memory snapshot or result file" />
        </label>{' '}
        <button type="button" onClick={() => setBrowsing(true)} disabled={!!opening} aria-label="Browse… for a snapshot">
          Browse…
        </button>
        {target && path.trim() !== target && <p className="muted shown-path">{target}</p>}
        {opening && (
          <p role="status" data-testid="memory-open-progress">
            {opening.phase ? PHASES[opening.phase] : 'Asking the host…'}
          </p>
        )}
        <button type="submit" disabled={!!opening || !target}>
          {opening ? 'Opening…' : as === 'compare' ? 'Compare' : 'Open snapshot'}
        </button>{' '}
        {opening ? (
          <button type="button" onClick={() => store.getState().cancelMemoryOpen()}>
            Stop reading
          </button>
        ) : (
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        )}
        {error && (
          <p className="status-fail" role="alert" data-testid="memory-open-error">
            <Prose text={error} />
          </p>
        )}
      </form>
    </Modal>
  );
}
