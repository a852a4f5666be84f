import { useRef, useState } from 'react';
import { useStore } from 'zustand';

import {
  DIAGNOSIS_REDACT_LABEL,
  diagnosisBundleName,
  diagnosisExportAbout,
  diagnosisExportedText,
  diagnosisExporting,
  diagnosisRanHere,
} from '../../core/diagnose/diagnosis-bundle-text';
import type { ReportOrigin } from '../../core/diagnose/diagnosis-view-text';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { dirnameOf, resolveShownPath } from '../../core/workspace/paths';
import type { DiagnosisExport } from '../store/diagnose-slice';
import type { WorkbenchStore } from '../store/store';
import { FileBrowserDialog } from './FileBrowserDialog';
import { Modal } from './Modal';
import { Prose } from './Prose';

/**
 * Export bundle… for a diagnosis the host holds (by the id it gave the report): where to write it (a name in the
 * folder shown, a full path, or a folder picked), names hidden by default, then the export with a Cancel that leaves
 * nothing behind; what was written, or why not, in words.
 */
export function DiagnosisExportDialog({
  store,
  report,
  origin,
  onClose,
}: {
  store: WorkbenchStore;
  report: DiagnosisReport & { id: string };
  /** Where the report came from, when Export bundle… was pressed. */
  origin: ReportOrigin | null;
  onClose: () => void;
}) {
  const startDir = useStore(store, (s) => s.info?.startDir ?? '/');
  // A report opened from a file goes beside it by default; a run's, into the home folder (as a run's bundle does).
  const [folder, setFolder] = useState(origin?.kind === 'file' ? dirnameOf(origin.path) : startDir);
  const [path, setPath] = useState(() => diagnosisBundleName(report, new Date()));
  const [redact, setRedact] = useState(true);
  const [browsing, setBrowsing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<{ written: DiagnosisExport; redacted: boolean } | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const exporting = useRef<AbortController | null>(null);
  const target = resolveShownPath(folder, path);
  const ranHere = diagnosisRanHere(origin);

  const start = () => {
    if (!target || exporting.current) return;
    const controller = new AbortController();
    exporting.current = controller;
    setBusy(true);
    setDone(null);
    setFailure(null);
    void store
      .getState()
      .exportDiagnosis(report.id, target, redact, controller.signal)
      .then((answer) => {
        if (answer.ok) setDone({ written: answer.written, redacted: redact });
        else setFailure(answer.error);
      })
      .finally(() => {
        exporting.current = null;
        setBusy(false);
      });
  };

  return (
    <>
      <Modal
        label="Export the diagnosis as a bundle"
        onClose={() => (exporting.current ? exporting.current.abort() : onClose())}
        testId="diagnosis-export-dialog"
      >
        <form
          className="diagnosis-export"
          onSubmit={(e) => {
            e.preventDefault();
            start();
          }}
        >
          <h2>Export the diagnosis as a bundle</h2>
          <p className="diagnosis-export-verdict" data-testid="diagnosis-export-verdict">
            <Prose text={report.verdict.sentence} />
          </p>
          <p className="muted" data-testid="diagnosis-export-about">
            <Prose text={diagnosisExportAbout(ranHere)} />
          </p>
          <label className="check">
            <input type="checkbox" checked={redact} onChange={(e) => setRedact(e.target.checked)} disabled={busy} /> {DIAGNOSIS_REDACT_LABEL}
          </label>
          <div className="field">
            <label htmlFor="diagnosis-export-path">Save to</label>
            <span className="field-row">
              <input id="diagnosis-export-path" autoFocus value={path} onChange={(e) => setPath(e.target.value)} disabled={busy} />
              <button type="button" onClick={() => setBrowsing(true)} disabled={busy}>
                Choose folder…
              </button>
            </span>
          </div>
          <p className="muted shown-path" data-testid="diagnosis-export-target">
            {target ? `Writes ${target}` : 'Give a file name, or a full path.'}
          </p>
          <div className="dialog-actions">
            <button type="submit" className="primary" disabled={busy || !target} data-testid="diagnosis-export-submit">
              Export
            </button>
            {busy ? (
              <button type="button" onClick={() => exporting.current?.abort()} data-testid="diagnosis-export-cancel">
                Cancel
              </button>
            ) : (
              <button type="button" onClick={onClose}>
                Close
              </button>
            )}
          </div>
          <ExportOutcome busy={busy} ranHere={ranHere} done={done} failure={failure} />
        </form>
      </Modal>
      {/* Beside the dialog, not in it: its Escape closes the folder's dialog alone. */}
      {browsing && (
        <FileBrowserDialog
          store={store}
          title="The folder to write the bundle in"
          mode="folder"
          start={target ? dirnameOf(target) : folder}
          chooseLabel="Use the folder typed"
          onChoose={async (chosen) => {
            setFolder(chosen);
            // A full path typed before keeps only its file's name: the folder chosen is where it goes.
            setPath((p) => (p.includes('/') ? (p.split('/').pop() ?? '') : p) || diagnosisBundleName(report, new Date()));
            return null;
          }}
          onClose={() => setBrowsing(false)}
          testId="diagnosis-export-folder-dialog"
        />
      )}
    </>
  );
}

/** The export's progress and end: a polite line that is always there (so it speaks), what it lacks, or the refusal. */
function ExportOutcome({
  busy,
  ranHere,
  done,
  failure,
}: {
  busy: boolean;
  ranHere: boolean;
  done: { written: DiagnosisExport; redacted: boolean } | null;
  failure: string | null;
}) {
  return (
    <>
      <p role="status" className={done ? 'status-ok' : 'muted'} data-testid="diagnosis-export-status">
        {busy ? diagnosisExporting(ranHere) : done ? diagnosisExportedText(done.written, done.redacted) : ''}
      </p>
      {done && done.written.notes.length > 0 && (
        <>
          <h3>What it lacks</h3>
          <ul data-testid="diagnosis-export-notes">
            {done.written.notes.map((n) => (
              <li key={n}>
                <Prose text={n} />
              </li>
            ))}
          </ul>
        </>
      )}
      {failure && (
        <p className="status-fail" role="alert" data-testid="diagnosis-export-error">
          <Prose text={failure} />
        </p>
      )}
    </>
  );
}
