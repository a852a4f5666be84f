import { useEffect, useRef, useState } from 'react';
import { useStore } from 'zustand';

import { sanitizerUnavailable } from '../../core/availability';
import { diagnosisExportBlocker } from '../../core/diagnose/diagnosis-bundle-text';
import {
  environmentChecksText,
  MISLEADING_LINE_NOTE,
  offeredText,
  oomPictureText,
  ranText,
  reportOriginText,
  SNAPSHOT_NOT_HERE,
  type ReportOrigin,
} from '../../core/diagnose/diagnosis-view-text';
import type { RunEvidence } from '../../core/diagnose/evidence';
import { STEP_TITLES, type DiagnosisReport } from '../../core/diagnose/report';
import { stepRuns } from '../../core/diagnose/streamed-diagnosis';
import { verdictSeverity, type SourcePlace } from '../../core/diagnose/verdict';
import { formatBytes, thousands } from '../../core/format';
import { basenameOf } from '../../core/workspace/paths';
import type { WorkbenchStore } from '../store/store';
import { DiagnoseSteps, CommandWords, type StepOutput } from './DiagnoseSteps';
import { DiagnosisExportDialog } from './DiagnosisExportDialog';
import { DoctorChecks } from './DoctorChecks';
import { Prose } from './Prose';

type Open = (at: { file: string; line: number }) => void;

/** A file and line the report names, as a link that opens it in the editor; its full path under it. */
function PlaceLink({ file, line, onOpen, testId }: { file: string; line: number; onOpen: Open; testId?: string }) {
  return (
    <button
      type="button"
      className="link mono source-link"
      onClick={() => onOpen({ file, line })}
      title={`Open ${file} and show line ${line}`}
      data-testid={testId}
    >
      {basenameOf(file)}:{line}
    </button>
  );
}

function Place({ place, onOpen, testId }: { place: SourcePlace; onOpen: Open; testId: string }) {
  return (
    <>
      <PlaceLink file={place.file} line={place.line} onOpen={onOpen} testId={testId} />
      {place.code && <code className="inline-code place-code">{place.code}</code>}
      <span className="muted place-path mono">{place.file}</span>
    </>
  );
}

/** The verdict's facts: your line, the line the first run blamed, the kernel, the cause, what to do. */
function VerdictFacts({ report, onOpen }: { report: DiagnosisReport; onOpen: Open }) {
  const v = report.verdict;
  return (
    <dl className="verdict-facts">
      {v.userLine && (
        <>
          <dt>Your line</dt>
          <dd data-testid="diagnosis-your-line">
            <Place place={v.userLine} onOpen={onOpen} testId="diagnosis-your-line-link" />
          </dd>
        </>
      )}
      {v.misleadingLine && (
        <>
          <dt>The first run blamed</dt>
          <dd data-testid="diagnosis-misleading-line">
            <Place place={v.misleadingLine} onOpen={onOpen} testId="diagnosis-misleading-line-link" />
            <span className="muted"> {MISLEADING_LINE_NOTE}</span>
          </dd>
        </>
      )}
      {v.kernel && (
        <>
          <dt>Kernel</dt>
          <dd data-testid="diagnosis-kernel">
            <code className="inline-code">{v.kernel.name}</code>
            {v.kernel.file && v.kernel.line !== null && (
              <>
                {' '}
                <PlaceLink file={v.kernel.file} line={v.kernel.line} onOpen={onOpen} />
                <span className="muted place-path mono">{v.kernel.file}</span>
              </>
            )}
            {v.kernel.file && v.kernel.line === null && <span className="muted place-path mono">{v.kernel.file}</span>}
          </dd>
        </>
      )}
      <dt>Cause</dt>
      <dd data-testid="diagnosis-cause">
        <Prose text={v.cause} />
      </dd>
      {v.whatToDo.length > 0 && (
        <>
          <dt>What to do</dt>
          <dd>
            <ul className="what-to-do" data-testid="diagnosis-what-to-do">
              {v.whatToDo.map((todo, i) => (
                <li key={i}>
                  <Prose text={todo} />
                </li>
              ))}
            </ul>
          </dd>
        </>
      )}
    </dl>
  );
}

/** The allocator's picture of an out-of-memory: its totals, what was alive by line, and the snapshot to open. */
function OomPictureSection({ run, onOpen, onSnapshot }: { run: RunEvidence; onOpen: Open; onSnapshot: (path: string) => Promise<string | null> }) {
  const p = run.oomPicture!;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const snapshot = p.snapshotPath;
  return (
    <section className="oom-picture" aria-labelledby="diagnosis-oom-heading" data-testid="diagnosis-oom">
      <h3 id="diagnosis-oom-heading">At the out-of-memory: {STEP_TITLES[run.kind]}</h3>
      <p>
        <Prose text={oomPictureText(p)} />
      </p>
      {p.aliveByLine.length > 0 && (
        <table className="alive-by-line" data-testid="diagnosis-alive-by-line">
          <caption className="visually-hidden">Alive at the failure, by the line that allocated it</caption>
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col" className="num">
                Bytes
              </th>
              <th scope="col" className="num">
                Blocks
              </th>
            </tr>
          </thead>
          <tbody>
            {p.aliveByLine.map((a, i) => (
              <tr key={i}>
                <td>
                  {a.frame ? <PlaceLink file={a.frame.file} line={a.frame.line} onOpen={onOpen} /> : <span className="muted">a line not recorded</span>}
                  {a.frame?.function && <span className="muted"> in {a.frame.function}</span>}
                </td>
                <td className="num">{formatBytes(a.bytes)}</td>
                <td className="num">{thousands(a.count)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {snapshot ? (
        <p>
          <button
            type="button"
            disabled={busy}
            onClick={() => {
              setBusy(true);
              void onSnapshot(snapshot).then((failed) => {
                setBusy(false);
                setError(failed);
              });
            }}
          >
            {busy ? 'Opening the snapshot…' : 'Open in the Memory tab'}
          </button>{' '}
          <span className="muted mono place-path">{snapshot}</span>
        </p>
      ) : (
        !p.missing && <p className="muted">{SNAPSHOT_NOT_HERE}</p>
      )}
      {error && (
        <p className="status-fail" role="alert">
          <Prose text={error} />
        </p>
      )}
    </section>
  );
}

/** The program as it was diagnosed: its words, folder, environment changes, budget and times. */
function ProgramFacts({ report }: { report: DiagnosisReport }) {
  const p = report.program;
  return (
    <dl className="program-facts" data-testid="diagnosis-program">
      <dt>Command</dt>
      <dd>
        <CommandWords argv={p.argv} env={p.envChanges} />
      </dd>
      <dt>Folder</dt>
      <dd className="mono place-path">{p.cwd}</dd>
      <dt>When</dt>
      <dd>{ranText(report)}</dd>
    </dl>
  );
}

/**
 * What can be done with the report as a whole: Export bundle… for one the host holds; for one it does not (a cancelled
 * diagnosis, built here; a bundle's, already the file to send), the button is off and says why beside it.
 */
function ReportActions({ store, report, origin }: { store: WorkbenchStore; report: DiagnosisReport; origin: ReportOrigin | null }) {
  // The report, and where it came from, as they were when Export bundle… was pressed: a diagnosis that ends meanwhile,
  // or a file opened, does not change what is exported or what the dialog says of it.
  const [exporting, setExporting] = useState<{ report: DiagnosisReport & { id: string }; origin: ReportOrigin | null } | null>(null);
  const blocker = diagnosisExportBlocker(report, origin);
  const id = report.id;
  return (
    <div className="diagnosis-actions">
      <button
        type="button"
        onClick={() => id && setExporting({ report: { ...report, id }, origin })}
        disabled={blocker !== null}
        aria-describedby={blocker ? 'diagnosis-export-blocked' : undefined}
        data-testid="diagnosis-export"
      >
        Export bundle…
      </button>
      {blocker && (
        <span id="diagnosis-export-blocked" className="muted" data-testid="diagnosis-export-blocked">
          <Prose text={blocker} />
        </span>
      )}
      {exporting && <DiagnosisExportDialog store={store} report={exporting.report} origin={exporting.origin} onClose={() => setExporting(null)} />}
    </div>
  );
}

function NotDone({ store, report, origin }: { store: WorkbenchStore; report: DiagnosisReport; origin: ReportOrigin | null }) {
  const runsPrograms = useStore(store, (s) => s.info?.runsPrograms ?? false);
  const running = useStore(store, (s) => s.diagnoseRunning);
  const [refused, setRefused] = useState<string | null>(null);
  const noTool = useStore(store, (s) => sanitizerUnavailable(s.discovery));
  // Only a report of a run made here, where the tool is: its program, folder and variables are this machine's.
  const canRun = report.offered.length > 0 && origin?.kind === 'run' && runsPrograms && noTool === null;
  const offered = offeredText(report.offered, canRun);
  const notRun = report.evidence.notRun;
  if (!offered && !notRun.length) return null;
  return (
    <section aria-labelledby="diagnosis-not-done-heading" data-testid="diagnosis-not-done">
      <h3 id="diagnosis-not-done-heading">Not done</h3>
      {notRun.length > 0 && (
        <ul>
          {notRun.map((n, i) => (
            <li key={i}>
              <strong>{STEP_TITLES[n.kind]}</strong>: <Prose text={n.reason} /> <span className="muted">(it was called for: </span>
              <span className="muted">
                <Prose text={n.why} />)
              </span>
            </li>
          ))}
        </ul>
      )}
      {offered && (
        <p data-testid="diagnosis-offered">
          <Prose text={offered} />
        </p>
      )}
      {offered && noTool && (
        <p className="muted" data-testid="diagnosis-offered-no-tool">
          <Prose text={noTool} />
        </p>
      )}
      {canRun && (
        <p>
          <button type="button" disabled={running} onClick={() => void store.getState().runOfferedPasses().then(setRefused)} data-testid="diagnosis-run-passes">
            Run the sanitizer passes now
          </button>
          {refused && (
            <span role="alert" className="status-fail">
              {' '}
              {refused}
            </span>
          )}
        </p>
      )}
    </section>
  );
}

/**
 * A diagnosis report, as `gpu-workbench diagnose` prints it and more: the verdict first, your line (it opens), the line
 * the first run blamed, the kernel, the cause and what to do; the allocator's picture at an out-of-memory; each step of
 * the evidence chain with the program's output; what was not done; the environment's checks.
 */
export function DiagnosisReportView({
  store,
  report,
  liveOutputs,
  onEditor,
  focusVerdict,
}: {
  store: WorkbenchStore;
  report: DiagnosisReport;
  /** What streamed of each step's output, when the report is of a run made here (the cancelled one's only source). */
  liveOutputs: (StepOutput | null)[] | null;
  onEditor: () => void;
  /** The report is news (it arrived while the view was on screen): the verdict takes the focus, as the Cancel button goes. */
  focusVerdict: boolean;
}) {
  const origin = useStore(store, (s) => s.diagnoseOrigin);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (focusVerdict) heading.current?.focus();
  }, [report, focusVerdict]);
  const open: Open = (at) => void store.getState().revealDiagnosisLine(at).then(onEditor);
  const snapshot = async (path: string) => {
    const failed = await store.getState().openDiagnosisSnapshot(path);
    if (!failed) onEditor();
    return failed;
  };
  const v = report.verdict;
  const runs = stepRuns(report);
  const outputs = report.steps.map((_, i): StepOutput | null => {
    const run = runs[i];
    if (run) return { text: run.output, droppedChars: 0 };
    return liveOutputs?.[i] ?? null;
  });
  const envText = environmentChecksText(report);
  const shown = verdictSeverity(v.kind);
  const severity = `status-${shown.level}`;
  return (
    <article className="diagnosis-report" aria-labelledby="diagnosis-verdict" data-testid="diagnosis-report">
      {origin && (
        <p className="muted diagnosis-origin" data-testid="diagnosis-origin-text">
          {reportOriginText(origin)}
        </p>
      )}
      <ReportActions store={store} report={report} origin={origin} />
      <h2 id="diagnosis-verdict" ref={heading} tabIndex={-1} className={`diagnosis-verdict ${severity}`} data-testid="diagnosis-verdict">
        <span aria-hidden="true">{shown.mark} </span>
        <Prose text={v.sentence} />
      </h2>
      <VerdictFacts report={report} onOpen={open} />
      {report.evidence.runs
        .filter((r) => r.oomPicture)
        .map((r, i) => (
          <OomPictureSection key={i} run={r} onOpen={open} onSnapshot={snapshot} />
        ))}
      <section aria-labelledby="diagnosis-program-heading">
        <h3 id="diagnosis-program-heading">The program</h3>
        <ProgramFacts report={report} />
      </section>
      <section aria-labelledby="diagnosis-steps-heading">
        <h3 id="diagnosis-steps-heading">How it was found</h3>
        <DiagnoseSteps steps={report.steps} outputs={outputs} />
      </section>
      <NotDone store={store} report={report} origin={origin} />
      {/* A cancel the host did not answer leaves only what streamed: what it saw of the environment is step 1's findings. */}
      {!(origin?.kind === 'cancelled' && !report.id) && (
        <section aria-labelledby="diagnosis-environment-heading" data-testid="diagnosis-environment">
          <h3 id="diagnosis-environment-heading">The environment’s checks</h3>
          {envText ? <p className="muted">{envText}</p> : <DoctorChecks checks={report.evidence.environment.checks} />}
        </section>
      )}
    </article>
  );
}
