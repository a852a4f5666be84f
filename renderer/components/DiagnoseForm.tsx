import { useState } from 'react';
import { useStore } from 'zustand';

import { sanitizerUnavailable } from '../../core/availability';
import { DIAGNOSE_PROGRAMS_OFF } from '../../core/diagnose/diagnosis-view-text';
import { resolveShownPath } from '../../core/workspace/paths';
import { startFolder } from '../store/open-file';
import type { WorkbenchStore } from '../store/store';
import { FileBrowserDialog } from './FileBrowserDialog';
import { Prose } from './Prose';

/**
 * What to diagnose: the command line (split into words as a shell would, never given to one), the folder, the
 * environment, the sanitizer passes after a clean exit, the time budget. Diagnose and, while it runs, Cancel; a host
 * that runs no programs says so, and a saved diagnosis opens either way.
 */
export function DiagnoseForm({ store }: { store: WorkbenchStore }) {
  const info = useStore(store, (s) => s.info);
  const form = useStore(store, (s) => s.diagnoseForm);
  const running = useStore(store, (s) => s.diagnoseRunning);
  // The sanitizer passes need compute-sanitizer: off, and why, where this machine lacks it.
  const noTool = useStore(store, (s) => sanitizerUnavailable(s.discovery));
  const { setDiagnoseForm, startDiagnosis, cancelDiagnosis } = store.getState();
  const [error, setError] = useState<string | null>(null);
  const startDir = info?.startDir ?? '/';
  const off = info !== null && !info.runsPrograms;
  const cwd = resolveShownPath(startDir, form.folder || startDir);
  const why = info === null ? 'Asking the host whether it runs programs…' : off ? 'This host does not run programs: see above' : undefined;
  return (
    <>
      <form
        className="diagnose-form"
        aria-labelledby="diagnose-heading"
        onSubmit={(e) => {
          e.preventDefault();
          void startDiagnosis().then(setError);
        }}
      >
        <h2 id="diagnose-heading">Diagnose a program</h2>
        <p className="muted">
          Runs it as it is, watched, then each re-run the evidence calls for — with CUDA_LAUNCH_BLOCKING=1, under compute-sanitizer, with Python’s fault
          handler, with PyTorch’s allocator history — and says what went wrong, where, and what to do. The line is split into words as a shell would, but no
          shell sees it: nothing is expanded.
        </p>
        {off && (
          <p role="note" className="programs-off" id="diagnose-programs-off" data-testid="diagnose-programs-off">
            <strong>Programs are off on this host.</strong> <Prose text={DIAGNOSE_PROGRAMS_OFF} />
          </p>
        )}
        <label className="field">
          Command line
          <textarea
            value={form.line}
            onChange={(e) => setDiagnoseForm({ line: e.target.value })}
            onKeyDown={(e) => {
              // Enter runs it, as in a terminal; Shift+Enter breaks a long line (a line break is a space between words).
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                e.currentTarget.form?.requestSubmit();
              }
            }}
            rows={3}
            spellCheck={false}
            placeholder="python3 train.py --epochs 1"
            aria-label="Command line"
            className="mono"
          />
        </label>
        <FolderField store={store} startDir={startDir} cwd={cwd} />
        {cwd && form.folder.trim() !== cwd && <p className="muted shown-path">Runs in {cwd}</p>}
        <label className="field">
          Environment (NAME=value, one a line)
          <textarea
            value={form.envText}
            onChange={(e) => setDiagnoseForm({ envText: e.target.value })}
            rows={3}
            spellCheck={false}
            aria-label="Environment"
            placeholder="PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
            className="mono"
          />
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={form.thorough && !noTool}
            disabled={noTool !== null}
            aria-describedby={noTool ? 'diagnose-no-sanitizer' : undefined}
            onChange={(e) => setDiagnoseForm({ thorough: e.target.checked })}
          />{' '}
          Run the sanitizer passes after a clean exit
        </label>
        {noTool && (
          <p className="muted" id="diagnose-no-sanitizer" data-testid="diagnose-no-sanitizer">
            <Prose text={noTool} />
          </p>
        )}
        <label className="field budget">
          Time budget (minutes){' '}
          <input
            type="number"
            min={1}
            max={1440}
            step={1}
            value={form.budgetMinutes}
            onChange={(e) => setDiagnoseForm({ budgetMinutes: e.target.value })}
            aria-label="Time budget (minutes)"
          />
        </label>
        <div className="diagnose-actions">
          <button
            type="submit"
            className="primary"
            disabled={off || info === null || running || !form.line.trim()}
            title={why}
            aria-describedby={off ? 'diagnose-programs-off' : undefined}
          >
            {running ? 'Diagnosing…' : 'Diagnose'}
          </button>
          {running && (
            <button type="button" onClick={cancelDiagnosis} data-testid="diagnose-cancel">
              Cancel
            </button>
          )}
        </div>
        {error && (
          <p className="status-fail" role="alert" data-testid="diagnose-form-error">
            <Prose text={error} />
          </p>
        )}
      </form>
      <OpenSavedDiagnosis store={store} />
    </>
  );
}

/** The folder to run in: typed (a name goes into the home folder), or picked in the file browser. */
function FolderField({ store, startDir, cwd }: { store: WorkbenchStore; startDir: string; cwd: string | null }) {
  const folder = useStore(store, (s) => s.diagnoseForm.folder);
  const [browsing, setBrowsing] = useState(false);
  const set = (path: string) => store.getState().setDiagnoseForm({ folder: path });
  return (
    <div className="field">
      <label htmlFor="diagnose-folder">Folder to run it in</label>
      <span className="field-row">
        <input id="diagnose-folder" value={folder} onChange={(e) => set(e.target.value)} placeholder={startDir} />
        <button type="button" onClick={() => setBrowsing(true)}>
          Browse…
        </button>
      </span>
      {browsing && (
        <FileBrowserDialog
          store={store}
          title="The folder to run it in"
          mode="folder"
          start={cwd}
          chooseLabel="Use the folder typed"
          onChoose={async (path) => {
            set(path);
            return null;
          }}
          onClose={() => setBrowsing(false)}
          testId="diagnose-folder-dialog"
        />
      )}
    </div>
  );
}

/** A diagnosis saved as JSON, opened through the file browser: works whether or not this host runs programs. */
function OpenSavedDiagnosis({ store }: { store: WorkbenchStore }) {
  const [browsing, setBrowsing] = useState(false);
  return (
    <div className="diagnose-open">
      <button type="button" onClick={() => setBrowsing(true)}>
        Open a saved diagnosis…
      </button>
      <p className="muted">
        A report <span className="mono">gpu-workbench diagnose --json</span> wrote, here or on another machine: read, never run.
      </p>
      {browsing && (
        <FileBrowserDialog
          store={store}
          title="Open a saved diagnosis"
          mode="file"
          start={startFolder(store)}
          accept={/\.json$/i}
          chooseLabel="Open"
          onChoose={(path) => store.getState().openDiagnosis(path)}
          onClose={() => setBrowsing(false)}
          testId="diagnose-open-dialog"
        />
      )}
    </div>
  );
}
