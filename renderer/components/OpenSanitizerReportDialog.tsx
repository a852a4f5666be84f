import { useState } from 'react';
import { useStore } from 'zustand';

import { dirnameOf, resolveShownPath } from '../../core/workspace/paths';
import { startFolder } from '../store/open-file';
import type { WorkbenchStore } from '../store/store';
import { FileBrowserDialog } from './FileBrowserDialog';
import { Modal } from './Modal';
import { Prose } from './Prose';

/**
 * Open a report compute-sanitizer saved (`--xml --save report.xml`), with the text it printed when there is
 * one (it alone says how far past an allocation an access went, and whether findings were cut): read on the
 * host, never run. Names go into the folder shown; a full path stands as typed.
 */
export function OpenSanitizerReportDialog({ store, onClose }: { store: WorkbenchStore; onClose: () => void }) {
  const startDir = useStore(store, (s) => s.info?.startDir ?? '/');
  const shown = useStore(store, (s) =>
    s.sanitizeOrigin?.kind === 'file' ? (s.sanitizeOrigin.xmlPath ?? s.sanitizeOrigin.textPath) : (s.outcomeOrigin?.file ?? null),
  );
  const folder = shown ? dirnameOf(shown) : startDir;
  const [xml, setXml] = useState('');
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const xmlTarget = resolveShownPath(folder, xml);
  // The text sits beside the report in the usual case: a bare name goes into the report's folder.
  const textTarget = resolveShownPath(xmlTarget ? dirnameOf(xmlTarget) : folder, text);
  // Browse… fills the field it was pressed for with the file picked.
  const [browsing, setBrowsing] = useState<'xml' | 'text' | null>(null);
  if (browsing)
    return (
      <FileBrowserDialog
        store={store}
        title={browsing === 'xml' ? 'The sanitizer report (.xml)' : 'What compute-sanitizer printed'}
        mode="file"
        start={xmlTarget && browsing === 'text' ? dirnameOf(xmlTarget) : startFolder(store)}
        accept={browsing === 'xml' ? /\.xml$/i : /\.(txt|log)$/i}
        chooseLabel="Choose"
        onChoose={async (p) => {
          (browsing === 'xml' ? setXml : setText)(p);
          return null;
        }}
        onClose={() => setBrowsing(null)}
        testId="sanitizer-browse-dialog"
      />
    );
  return (
    <Modal label="Open a compute-sanitizer report" onClose={onClose} testId="sanitizer-open-dialog">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!xmlTarget && !textTarget)
            return setError('Give the report’s file (the .xml that compute-sanitizer --xml --save wrote), or what the tool printed, or both.');
          setBusy(true);
          setError(null);
          void store
            .getState()
            .openSanitizerReport(xmlTarget, textTarget)
            .then((failed) => {
              setBusy(false);
              if (failed) setError(failed);
              else onClose();
            });
        }}
      >
        <h2>Open a compute-sanitizer report</h2>
        <p className="muted">
          The XML that <span className="mono">compute-sanitizer --xml --save report.xml</span> wrote, in{' '}
          <span className="mono" data-testid="sanitizer-open-folder">
            {folder}
          </span>{' '}
          (or give a full path). It is read, never run.
        </p>
        <label className="field">
          Report (.xml) <input autoFocus value={xml} onChange={(e) => setXml(e.target.value)} placeholder="report.xml" aria-label="Sanitizer report (XML)" />
        </label>{' '}
        <button type="button" onClick={() => setBrowsing('xml')} aria-label="Browse… for the report">
          Browse…
        </button>
        {xmlTarget && xml.trim() !== xmlTarget && <p className="muted shown-path">{xmlTarget}</p>}
        <label className="field">
          What the tool printed (optional beside the report, enough alone){' '}
          <input value={text} onChange={(e) => setText(e.target.value)} placeholder="report.xml.txt" aria-label="Sanitizer text output (optional)" />
        </label>{' '}
        <button type="button" onClick={() => setBrowsing('text')} aria-label="Browse… for the printed text">
          Browse…
        </button>
        {textTarget && text.trim() !== textTarget && <p className="muted shown-path">{textTarget}</p>}
        <p className="muted">
          The text adds what the XML leaves out: how far an access was from the nearest allocation, and whether --print-limit cut findings (without it, the
          counts are what the XML holds). Given alone, its findings are read from it: files by their base name, and only the host frames it printed.
        </p>
        <button type="submit" disabled={busy || (!xmlTarget && !text.trim())}>
          {busy ? 'Reading…' : 'Open report'}
        </button>{' '}
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        {error && (
          <p className="status-fail" role="alert" data-testid="sanitizer-open-error">
            <Prose text={error} />
          </p>
        )}
      </form>
    </Modal>
  );
}
