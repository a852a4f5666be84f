import { useStore } from 'zustand';

import { sanitizerRerunUnavailable } from '../../core/availability';
import { formatBytes } from '../../core/format';
import { formatDim3 } from '../../core/dims';
import { formFromLaunch } from '../../core/plan/plan-launch';
import type { Diagnosis } from '../../core/runner/diagnose';
import { recordedLaunch } from '../../core/runner/recorded-launch';
import { specificsBeyondDiagnostics } from '../../core/runner/compile-failure';
import type { CompileRecord } from '../../core/runner/run-outcome';
import { PLAN_PLACEHOLDER, sanitizerCommand } from '../../core/runner/sanitizer-command';
import { EMPTY_SOURCE_CONTEXT } from '../../core/workspace/source-link';
import type { OutcomeOrigin } from '../store/run-slice';
import { gpuPresence } from '../store/devices-slice';
import { rerunSource } from '../store/sanitizer-slice';
import type { WorkbenchStore } from '../store/store';
import { Prose } from './Prose';
import { ResultFileActions } from './ResultFileActions';
import { RunResultDetails } from './RunResultDetails';
import { SourceLink } from './SourceLink';
import { RunBlockers } from './RunBlockers';

/** What a failed compile recorded: its errors and warnings, each on its file and line. */
function CompileProblems({ records, store, origin }: { records: CompileRecord[]; store: WorkbenchStore; origin: OutcomeOrigin | null }) {
  const failed = records.filter((r) => !r.ok);
  const shown = failed.flatMap((r) => r.diagnostics.filter((d) => d.severity !== 'info'));
  if (!failed.length) return null;
  return (
    <div data-testid="diagnosis-compile">
      <h4>The compiler said</h4>
      {shown.length === 0 ? (
        <p className="muted">It failed without an error message: see the log below.</p>
      ) : (
        <ul className="compile-problems">
          {shown.map((d, i) => (
            <li key={i} className={`finding-${d.severity}`}>
              <span className={d.severity === 'error' ? 'status-fail' : 'status-warn'}>{d.severity}</span>{' '}
              {d.line > 0 && (
                <>
                  <SourceLink store={store} at={{ file: d.file, line: d.line, column: d.column || 1 }} context={origin?.sources ?? EMPTY_SOURCE_CONTEXT} />{' '}
                </>
              )}
              <Prose text={d.message} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * The diagnosis's offer to pin the failure to a line: the re-run under compute-sanitizer (the plan that
 * produced this outcome, or why it is not at hand), and the same from a terminal.
 */
function SanitizerOffer({ offer, store, origin }: { offer: NonNullable<Diagnosis['sanitizer']>; store: WorkbenchStore; origin: OutcomeOrigin | null }) {
  const state = useStore(store);
  const rerun = rerunSource(state);
  const progress = state.sanitizeProgress;
  // What this machine lacks for it (the tool, a GPU), from the host's discovery: the button is off and says so, as Run does.
  const unavailable = sanitizerRerunUnavailable(state.discovery, gpuPresence(state));
  // A recorded result's paths are the recording machine's: its command uses this machine's plan, or says where to put it.
  const planPath = rerun.ok ? rerun.planPath : origin && !origin.file ? origin.planPath : null;
  const start = () => {
    if (rerun.ok && !unavailable)
      void store.getState().sanitizeRun({ tool: offer.tool, plan: rerun.plan, planPath: rerun.planPath, label: rerun.label, sources: rerun.sources });
  };
  return (
    <div className="sanitizer" data-testid="diagnosis-sanitizer">
      <button
        disabled={!rerun.ok || unavailable !== null || progress !== null}
        onClick={start}
        title={!progress && unavailable ? unavailable : undefined}
        aria-describedby="sanitizer-rerun-note"
        data-testid="sanitizer-rerun"
      >
        {progress ? `Running ${progress.tool}…` : `Re-run under compute-sanitizer (${offer.tool})`}
      </button>{' '}
      <span className="muted">
        <Prose text={offer.why} />
      </span>
      <p id="sanitizer-rerun-note" className={rerun.ok && !unavailable ? 'muted' : 'status-warn'} data-testid="sanitizer-rerun-note">
        {progress ? (
          <>
            compute-sanitizer is running {progress.tool} on <span className="mono">{progress.label}</span>: one run under the tool at a time. Wait for it, or
            cancel it in the Sanitizer tab, then re-run this one.
          </>
        ) : rerun.ok && !unavailable ? (
          <>
            Runs <span className="mono">{rerun.label}</span> under {offer.tool} (10 to 100 times slower); its findings open in the Sanitizer tab and are marked
            in the editor.
          </>
        ) : (
          // What this result lacks (its plan), then what this machine lacks (the tool, a GPU): each is said.
          <Prose text={[rerun.ok ? null : rerun.why, unavailable].filter((w) => w !== null).join(' ')} />
        )}
      </p>
      <span className="muted">From a terminal:</span>
      <pre data-testid="sanitizer-command">{sanitizerCommand(offer.tool, planPath)}</pre>
      {!planPath && (
        <p className="muted" data-testid="sanitizer-placeholder">
          {origin?.file
            ? `${PLAN_PLACEHOLDER} stands for the plan's file on this machine: a recorded result names the paths of the machine that recorded it.`
            : `${PLAN_PLACEHOLDER} stands for the plan's file: save this plan (Save plan, in the Run section) and use its path.`}
        </p>
      )}
    </div>
  );
}

export function DiagnosisCard({ d, store, origin, compile }: { d: Diagnosis; store: WorkbenchStore; origin: OutcomeOrigin | null; compile: CompileRecord[] }) {
  // A failed compile's errors are listed once, each on its line (The compiler said): the lines below give the rest of its log.
  const specifics = specificsBeyondDiagnostics(
    d.specifics,
    compile.filter((r) => !r.ok).flatMap((r) => r.diagnostics),
  );
  return (
    <section className={`diagnosis diagnosis-${d.severity}`} data-testid="diagnosis">
      <h3 data-testid="diagnosis-headline">
        {d.severity === 'ok' ? '✓' : d.severity === 'warning' ? '!' : '✗'} <Prose text={d.headline} />
      </h3>
      {d.step && (
        <p data-testid="diagnosis-step">
          Step {d.step.index + 1}: <span className="mono">{d.step.label}</span>
          {d.kernel ? ` · kernel ${d.kernel.entry}` : ''}
        </p>
      )}
      {d.sourceLocation && (
        <p data-testid="diagnosis-source">
          Source:{' '}
          <SourceLink store={store} at={{ file: d.sourceLocation.file, line: d.sourceLocation.line }} context={origin?.sources ?? EMPTY_SOURCE_CONTEXT} />
        </p>
      )}
      {d.error && (
        <p className="mono" data-testid="diagnosis-error">
          {d.error.name} ({d.error.code}) from {d.error.api}
          {d.error.runtimeName && d.error.runtimeName !== d.error.name ? ` — ${d.error.runtimeName} in the runtime API` : ''}
          {d.error.sticky ? ' · sticky: the context was discarded; the next run uses a fresh runner' : ''}
        </p>
      )}
      {d.explanation && (
        <div data-testid="diagnosis-explanation">
          <p>
            <Prose text={d.explanation.summary} />
          </p>
          {d.explanation.causes.length > 0 && (
            <>
              <h4>Likely causes</h4>
              <ul>
                {d.explanation.causes.map((c) => (
                  <li key={c}>
                    <Prose text={c} />
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
      <CompileProblems records={compile} store={store} origin={origin} />
      {specifics.length > 0 && (
        <ul data-testid="diagnosis-specifics">
          {specifics.map((s, i) => (
            <li key={i}>
              <Prose text={s} />
            </li>
          ))}
        </ul>
      )}
      {d.launchFindings
        .filter((f) => f.severity !== 'note')
        .map((f) => (
          <p key={f.rule} className={`finding-${f.severity}`} data-testid={`diagnosis-finding-${f.rule}`}>
            <Prose text={f.message} />
            {f.fix && (
              <>
                {' '}
                Fix: <Prose text={f.fix} />
              </>
            )}
          </p>
        ))}
      {d.memory && (
        <div data-testid="diagnosis-memory">
          <p>
            Requested {formatBytes(d.memory.requestedBytes)} · free {formatBytes(d.memory.freeBytes)} of {formatBytes(d.memory.totalBytes)}
          </p>
          {d.memory.processes && (
            <table>
              <tbody>
                {d.memory.processes.map((p) => (
                  <tr key={p.pid}>
                    <td>pid {p.pid}</td>
                    <td className="mono">{p.name}</td>
                    <td>{p.usedBytes === null ? '?' : formatBytes(p.usedBytes)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
      {d.sanitizer && <SanitizerOffer offer={d.sanitizer} store={store} origin={origin} />}
      {d.next.length > 0 && (
        <>
          <h4>What to do</h4>
          <ul>
            {d.next.map((n, i) => (
              <li key={i}>
                <Prose text={n} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** A recorded result's launch, with the button that loads it into the launch panel of the file that defines its kernel. */
function RecordedLaunch({ recorded, store }: { recorded: NonNullable<ReturnType<typeof recordedLaunch>>; store: WorkbenchStore }) {
  return (
    <p className="recorded-launch" data-testid="recorded-launch">
      Recorded launch:{' '}
      <span className="mono">
        {recorded.entry}&lt;&lt;&lt;{formatDim3(recorded.grid)}, {formatDim3(recorded.block)}
        {recorded.sharedBytes ? `, ${recorded.sharedBytes}` : ''}&gt;&gt;&gt;
      </span>
      {recorded.deviceName ? ` on ${recorded.deviceName}` : ''}{' '}
      <button onClick={() => store.getState().locateLaunch(recorded.entry, formFromLaunch(recorded), recorded.deviceName)} data-testid="load-recorded-launch">
        Check this launch in the editor…
      </button>
    </p>
  );
}

/** The last run (or an opened result file): diagnosis first, then steps, launches, buffers with paging. */
export function RunResultView({ store, onOpenReport }: { store: WorkbenchStore; onOpenReport: () => void }) {
  const s = useStore(store);
  const o = s.outcome;
  const r = o?.result ?? null;
  const origin = s.outcomeOrigin;
  // A bundle's launch is already in its file's launch panel.
  const recorded = o && origin?.file && !origin.bundle ? recordedLaunch(o) : null;
  return (
    <div className="run-result" data-testid="run-result">
      <ResultFileActions store={store} outcome={o} origin={origin} onOpenReport={onOpenReport} />
      {s.runError && (
        <p className="status-fail" role="alert" data-testid="run-error">
          <Prose text={s.runError} />
        </p>
      )}
      {s.runRefused && (
        <section className="run-refused" role="alert" data-testid="run-refused">
          <h3>Run did not start</h3>
          <RunBlockers blockers={s.runRefused.reasons} />
        </section>
      )}
      {!o && !s.runRefused && <p className="muted">Run a kernel (the Run section on the right), or open a saved result.</p>}
      {recorded && <RecordedLaunch recorded={recorded} store={store} />}
      {o && <DiagnosisCard d={o.diagnosis} store={store} origin={origin} compile={o.compile} />}
      {o && r && (
        <RunResultDetails
          outcome={o}
          r={r}
          pages={s.pages}
          pageable={(name) => !!r.pageable?.includes(name) && !origin?.file}
          onPage={(buffer, offset, count) => void s.page(buffer, offset, count)}
        />
      )}
    </div>
  );
}
