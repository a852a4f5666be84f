import { useRef } from 'react';
import { useStore } from 'zustand';

import type { WorkbenchStore } from '../store/store';
import { DiagnoseForm } from './DiagnoseForm';
import { CommandWords, DiagnoseSteps } from './DiagnoseSteps';
import { DiagnosisReportView } from './DiagnosisReportView';
import { Prose } from './Prose';
import './diagnose.css';

/**
 * Diagnose a program (as `gpu-workbench diagnose -- <command>` does): the form beside what it does — each step as it
 * starts and ends, with the program's output as it comes — then the report. A saved report opens here too.
 */
export function DiagnoseView({
  store,
  onEditor,
  focusReport = false,
}: {
  store: WorkbenchStore;
  onEditor: () => void;
  /** The view was opened to show the report on screen (Open in Diagnose): its verdict takes the focus. */
  focusReport?: boolean;
}) {
  const live = useStore(store, (s) => s.diagnoseLive);
  const running = useStore(store, (s) => s.diagnoseRunning);
  const report = useStore(store, (s) => s.diagnoseReport);
  const status = useStore(store, (s) => s.diagnoseStatus);
  const error = useStore(store, (s) => s.diagnoseError);
  const origin = useStore(store, (s) => s.diagnoseOrigin);
  // A report that was on screen before this view was: no focus moves for it (one that arrives while here takes it),
  // unless the view was opened to show it.
  const shownBefore = useRef(focusReport ? null : report);
  const liveIsReport = origin?.kind === 'run' || origin?.kind === 'cancelled';
  return (
    <main className="diagnose-view" data-testid="diagnose-view">
      <section className="diagnose-form-pane" aria-label="What to diagnose">
        <DiagnoseForm store={store} />
      </section>
      <section className="diagnose-results" aria-label="Diagnosis" data-testid="diagnose-results">
        {/* Polite, and always there (a live region must exist before it speaks); seen only while a diagnosis runs. */}
        <p role="status" className={running ? 'diagnose-status' : 'visually-hidden'} data-testid="diagnose-status">
          {status}
        </p>
        {error && (
          <p className="status-fail" role="alert" data-testid="diagnose-error">
            <Prose text={error} />
          </p>
        )}
        {running && live && (
          <section className="diagnose-live" aria-labelledby="diagnose-live-heading" data-testid="diagnose-live">
            <h2 id="diagnose-live-heading">
              Diagnosing <CommandWords argv={live.program.argv} env={live.program.envChanges} />
            </h2>
            <p className="muted mono place-path">in {live.program.cwd}</p>
            <DiagnoseSteps steps={live.steps} outputs={live.output} live />
          </section>
        )}
        {report && (
          <DiagnosisReportView
            store={store}
            report={report}
            liveOutputs={liveIsReport && live ? live.output : null}
            onEditor={onEditor}
            focusVerdict={report !== shownBefore.current}
          />
        )}
        {!report && !running && !error && (
          <p className="muted diagnose-empty">
            No diagnosis yet. Give a command line and Diagnose, or open a saved diagnosis: the verdict, the line to open, and the evidence chain show here.
          </p>
        )}
      </section>
    </main>
  );
}
