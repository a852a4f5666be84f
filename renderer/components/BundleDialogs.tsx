import { useEffect, useRef, useState } from 'react';
import { useStore } from 'zustand';

import { BUNDLE_PHASE_WORDS, type BundleExportEvent, type BundleExportResult, type BundlePreview } from '../../core/bundle/bundle-export';
import { formatBytes } from '../../core/format';
import type { Profile } from '../../core/kernel-profile/profile';
import { basenameOf, dirnameOf, resolveShownPath } from '../../core/workspace/paths';
import { exportSource, heldReportId, profileWithRun, type BundleChoices } from '../store/bundle-slice';
import { startFolder } from '../store/open-file';
import type { WorkbenchState, WorkbenchStore } from '../store/store';
import { FileBrowserDialog } from './FileBrowserDialog';
import { Modal } from './Modal';
import { Prose } from './Prose';

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Open a diagnostic bundle (a .zip someone sent): read on the host into memory, every view shown from it, nothing run or written. */
export function OpenBundleDialog({ store, onOpened }: { store: WorkbenchStore; onOpened: () => void }) {
  const startDir = useStore(store, (s) => s.info?.startDir ?? '/');
  const opened = useStore(store, (s) => s.bundle?.view.path ?? null);
  const opening = useStore(store, (s) => s.bundleOpening);
  const close = () => store.getState().showBundleDialog(null);
  const folder = opened ? dirnameOf(opened) : startDir;
  const [path, setPath] = useState('');
  const [error, setError] = useState<string | null>(null);
  const target = resolveShownPath(folder, path);
  const [browsing, setBrowsing] = useState(false);
  if (browsing)
    return (
      <FileBrowserDialog
        store={store}
        title="Open a diagnostic bundle"
        mode="file"
        start={startFolder(store)}
        accept={/\.zip$/i}
        chooseLabel="Open bundle"
        onChoose={async (p) => {
          const failed = await store.getState().openBundle(p);
          if (failed) return failed;
          close();
          onOpened();
          return null;
        }}
        onClose={() => setBrowsing(false)}
        testId="bundle-browse-dialog"
      />
    );
  return (
    <Modal label="Open a diagnostic bundle" onClose={close} testId="bundle-open-dialog">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!target) return setError('Give the bundle’s file: the .zip that Export bundle (or `gpu-workbench bundle export`) wrote.');
          setError(null);
          void store
            .getState()
            .openBundle(target)
            .then((failed) => {
              if (failed) return setError(failed);
              close();
              onOpened();
            });
        }}
      >
        <h2>Open a diagnostic bundle</h2>
        <p className="muted">
          A .zip that GPU Workbench exported, in{' '}
          <span className="mono" data-testid="bundle-open-folder">
            {folder}
          </span>{' '}
          (or give a full path). It opens read-only: nothing in it runs, is compiled or is written; every view shows the bundle’s own data.
        </p>
        <label className="field">
          Bundle (.zip) <input autoFocus value={path} onChange={(e) => setPath(e.target.value)} placeholder="bundle.zip" aria-label="Bundle file" />
        </label>{' '}
        <button type="button" onClick={() => setBrowsing(true)} aria-label="Browse… for a bundle">
          Browse…
        </button>
        {target && path.trim() !== target && <p className="muted shown-path">{target}</p>}
        <button type="submit" disabled={opening !== null || !target} data-testid="bundle-open-submit">
          {opening ? 'Reading…' : 'Open bundle'}
        </button>{' '}
        <button type="button" onClick={close}>
          Cancel
        </button>
        {error && (
          <p className="status-fail" role="alert" data-testid="bundle-open-error">
            <Prose text={error} />
          </p>
        )}
      </form>
    </Modal>
  );
}

const stamp = () =>
  new Date()
    .toISOString()
    .replace(/[:.]/g, '-')
    .replace(/-\d\d-\d{3}Z$/, '');

type PreviewState = { value: BundlePreview | null; error: string | null; busy: boolean };
type Progress = { phase: string; written: number };

/** The export under way: its progress, its result or failure, and a Cancel that leaves nothing behind. */
function useBundleExport(store: WorkbenchStore, choices: BundleChoices) {
  const [progress, setProgress] = useState<Progress | null>(null);
  const [done, setDone] = useState<BundleExportResult | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const exporting = useRef<AbortController | null>(null);
  const start = (target: string | null) => {
    if (!target) return setFailure('Give a file name or a full path for the bundle.');
    const controller = new AbortController();
    exporting.current = controller;
    setFailure(null);
    setDone(null);
    setProgress({ phase: BUNDLE_PHASE_WORDS.check, written: 0 });
    const onEvent = (e: BundleExportEvent) =>
      setProgress((p) =>
        e.kind === 'phase' ? { phase: BUNDLE_PHASE_WORDS[e.phase], written: p?.written ?? 0 } : { phase: p?.phase ?? '', written: e.written },
      );
    store
      .getState()
      .exportBundle(choices, target, { signal: controller.signal, onEvent })
      .then(
        (result) => setDone(result),
        (error: unknown) =>
          setFailure(controller.signal.aborted ? `Cancelled: nothing was written to ${target}.` : `The bundle was not exported: ${message(error)}`),
      )
      .finally(() => {
        if (exporting.current === controller) exporting.current = null;
        setProgress(null);
      });
  };
  return { progress, done, failure, exporting, start };
}

/** Exactly what would go in: every file with its size, the environment as it goes in, what the bundle will lack. */
function BundlePreviewSection({ preview }: { preview: PreviewState }) {
  const total = preview.value?.files.reduce((n, f) => n + f.bytes, 0) ?? 0;
  return (
    <section aria-label="What the bundle would hold" data-testid="bundle-preview" aria-busy={preview.busy}>
      {preview.error && (
        <p className="status-fail" role="alert" data-testid="bundle-preview-error">
          <Prose text={preview.error} />
        </p>
      )}
      {preview.value && (
        <>
          <h3>
            {preview.value.files.length} files, {formatBytes(total)} before compression{preview.busy ? ' (updating…)' : ''}
          </h3>
          <table className="bundle-files" data-testid="bundle-preview-files">
            <tbody>
              {preview.value.files.map((f) => (
                <tr key={f.name}>
                  <td className="mono">{f.name}</td>
                  <td>{formatBytes(f.bytes)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h3>The environment, exactly as it goes in ({preview.value.redacted ? 'redacted' : 'NOT redacted'})</h3>
          <pre className="mono" data-testid="bundle-preview-environment">
            {Object.entries(preview.value.environment)
              .map(([k, v]) => `${k}=${v}`)
              .join('\n') || '(none of the variables a bundle carries is set)'}
          </pre>
          {preview.value.notes.length > 0 && (
            <>
              <h3>It will lack</h3>
              <ul data-testid="bundle-preview-notes">
                {preview.value.notes.map((n) => (
                  <li key={n}>
                    <Prose text={n} />
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
      {!preview.value && !preview.error && <p className="muted">Gathering what would go in…</p>}
    </section>
  );
}

/** The choices: sources (with PTX and repro/), redaction, and the sanitizer report and kernel profile on screen when there are. */
function ExportChoices(props: {
  sources: [boolean, (on: boolean) => void];
  redact: [boolean, (on: boolean) => void];
  sanitizer: [boolean, (on: boolean) => void];
  report: WorkbenchState['sanitizeReport'];
  profile: [boolean, (on: boolean) => void];
  kernelProfile: Profile | null;
}) {
  const { report, kernelProfile } = props;
  return (
    <fieldset>
      <legend>What goes in</legend>
      <label>
        <input type="checkbox" checked={props.sources[0]} onChange={(e) => props.sources[1](e.target.checked)} aria-label="Include the kernels' sources" /> The
        kernels’ sources, their PTX and a standalone repro/
      </label>
      <label>
        <input type="checkbox" checked={props.redact[0]} onChange={(e) => props.redact[1](e.target.checked)} aria-label="Redact names" /> Hide user and host
        names, home folders and GPU serials (redact)
      </label>
      {report && (
        <label>
          <input
            type="checkbox"
            checked={props.sanitizer[0]}
            onChange={(e) => props.sanitizer[1](e.target.checked)}
            aria-label="Include the sanitizer report"
          />{' '}
          The sanitizer report on screen: <Prose text={report.headline} />
        </label>
      )}
      {kernelProfile && (
        <label>
          <input type="checkbox" checked={props.profile[0]} onChange={(e) => props.profile[1](e.target.checked)} aria-label="Include the kernel profile" /> The
          kernel profile made with this run: {kernelProfile.kernel.entry} on {kernelProfile.device.name}
        </label>
      )}
    </fieldset>
  );
}

/**
 * Export bundle…: exactly what would go in (every file with its size, the environment as it goes in, what it will
 * lack), the choice to leave sources out and to keep names unredacted, where to write it, then the export with
 * its progress and a Cancel that leaves nothing behind. A recorded result whose plan is not at hand exports what
 * there is, the preview saying what it lacks: there is always an Export button, or a reason and Close.
 */
export function ExportBundleDialog({ store }: { store: WorkbenchStore }) {
  const state = useStore(store);
  const close = () => store.getState().showBundleDialog(null);
  const source = exportSource(state);
  // A report goes in by the id the host holds it under: one without (a bundle's own) is not offered.
  const report = heldReportId(state.sanitizeReport) ? state.sanitizeReport : null;
  const [sources, setSources] = useState(true);
  const [redact, setRedact] = useState(true);
  const [withSanitizer, setWithSanitizer] = useState(report !== null && state.sanitizeOrigin?.kind !== 'program');
  const kernelProfile = profileWithRun(state);
  const [withProfile, setWithProfile] = useState(true);
  const [preview, setPreview] = useState<PreviewState>({ value: null, error: null, busy: false });
  const folder = state.outcomeOrigin?.file && !state.outcomeOrigin.bundle ? dirnameOf(state.outcomeOrigin.file) : (state.info?.startDir ?? '/');
  const label = state.outcome?.diagnosis.kernel?.entry ?? 'run';
  const [path, setPath] = useState(`gpu-workbench-bundle-${label}-${stamp()}.zip`);
  const target = resolveShownPath(folder, path);

  const choices: BundleChoices = { includeSources: sources, redact, sanitizer: withSanitizer, profile: withProfile };
  const { progress, done, failure, exporting, start } = useBundleExport(store, choices);

  // The preview follows the choices: each change asks again, and a late answer to an earlier choice is dropped.
  useEffect(() => {
    if (!source.ok) return;
    const controller = new AbortController();
    setPreview((p) => ({ ...p, busy: true, error: null }));
    store
      .getState()
      .previewBundle(choices, { signal: controller.signal })
      .then(
        (value) => !controller.signal.aborted && setPreview({ value, error: null, busy: false }),
        (error: unknown) => !controller.signal.aborted && setPreview({ value: null, error: message(error), busy: false }),
      );
    return () => controller.abort();
  }, [sources, redact, withSanitizer, withProfile, source.ok]);

  const closeButton = (
    <button type="button" onClick={close}>
      Close
    </button>
  );
  return (
    <Modal label="Export a diagnostic bundle" onClose={() => (exporting.current ? exporting.current.abort() : close())} testId="bundle-export-dialog">
      <div className="bundle-export">
        <h2>Export a diagnostic bundle</h2>
        {!source.ok ? (
          <>
            <p className="status-fail" role="alert" data-testid="bundle-export-unavailable">
              {source.why}
            </p>
            {closeButton}
          </>
        ) : (
          <>
            <p className="muted">
              One .zip with this run and what explains it, for a colleague to open in GPU Workbench (read-only, with no GPU needed): the plan ({source.origin}),
              the result and its diagnosis with the event log, what follows.
            </p>
            <ExportChoices
              sources={[sources, setSources]}
              redact={[redact, setRedact]}
              sanitizer={[withSanitizer, setWithSanitizer]}
              report={report}
              profile={[withProfile, setWithProfile]}
              kernelProfile={kernelProfile}
            />
            <BundlePreviewSection preview={preview} />
            <form
              onSubmit={(e) => {
                e.preventDefault();
                start(target);
              }}
            >
              <label className="field">
                Save to <input value={path} onChange={(e) => setPath(e.target.value)} aria-label="Save the bundle to" disabled={progress !== null} />
              </label>
              <p className="muted shown-path" data-testid="bundle-export-target">
                {target ? `Writes ${target}` : 'Give a file name.'}
              </p>
              <button type="submit" disabled={progress !== null || !target || !preview.value} data-testid="bundle-export-submit">
                Export
              </button>{' '}
              {progress ? (
                <button type="button" onClick={() => exporting.current?.abort()} data-testid="bundle-export-cancel">
                  Cancel
                </button>
              ) : (
                closeButton
              )}
            </form>
          </>
        )}
        {progress && (
          <p role="status" data-testid="bundle-export-progress">
            {progress.phase}…{progress.written ? ` ${formatBytes(progress.written)} written` : ''}
          </p>
        )}
        {done && (
          <p className="status-ok" role="status" data-testid="bundle-export-done">
            Wrote {done.path} ({formatBytes(done.bytes)}, {done.files.length} files{redact ? ', redacted' : ', NOT redacted'}). Send it as it is: it opens with
            Open bundle…, and <code className="inline-code">gpu-workbench bundle inspect {basenameOf(done.path)}</code> lists it.
          </p>
        )}
        {failure && (
          <p className="status-fail" role="alert" data-testid="bundle-export-error">
            <Prose text={failure} />
          </p>
        )}
      </div>
    </Modal>
  );
}
