import { useStore } from 'zustand';

import { checkEverythingOff, checksUnavailable } from '../../core/check/availability';
import { CHECK_NAMES, CHECK_WORDS, type CheckName, type CheckResult, type CheckStatus, type PlanReport } from '../../core/check/check-model';
import { formatDuration, planHeading, STATUS_MARK, STATUS_WORDS } from '../../core/check/check-text';
import { gpuPresence } from '../store/devices-slice';
import type { WorkbenchStore } from '../store/store';

const CLASS: Record<CheckStatus | 'waiting', string> = { passed: 'status-ok', failed: 'status-fail', 'could-not-run': 'muted', off: 'muted', waiting: 'muted' };

/** One check: its mark (a tick only for what ran and passed), its name, its status in words, and its finding or reason. */
function CheckRow({ name, result }: { name: CheckName; result: CheckResult | null }) {
  const status = result?.status ?? 'waiting';
  return (
    <li data-testid="check-row" data-check={name} data-status={status}>
      <span className={CLASS[status]} role="img" aria-label={result ? STATUS_WORDS[result.status] : 'not yet'}>
        {result ? STATUS_MARK[result.status] : '…'}
      </span>{' '}
      <strong>{name}</strong> <span className="muted">({CHECK_WORDS[name]})</span>{' '}
      <span data-testid="check-status" className={CLASS[status]}>
        {result ? STATUS_WORDS[result.status] : 'running or waiting…'}
      </span>
      {result && (
        <div data-testid="check-summary">
          {result.summary}
          {result.ms !== null && <span className="muted"> ({formatDuration(result.ms)})</span>}
        </div>
      )}
      {result && result.details.length > 0 && (
        <details>
          <summary className="muted">{result.status === 'failed' ? 'every finding, and the fix' : 'more'}</summary>
          <ul>
            {result.details.map((d, i) => (
              <li key={i}>{d}</li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}

function PlanChecks({ plan }: { plan: PlanReport }) {
  return (
    <section aria-label={`Checks of ${plan.label}`} data-testid="check-plan">
      <h4>{planHeading(plan)}</h4>
      {plan.expectation && <p data-testid="check-expectation">{plan.expectation.words}</p>}
      {plan.configPath && <p className="muted">Settings from {plan.configPath}</p>}
      {/* Focusable, so the list scrolls from the keyboard where no row has anything to press. */}
      <ul className="checks" tabIndex={0} aria-label={`Each check of ${plan.label}`}>
        {CHECK_NAMES.map((name) => (
          <CheckRow key={name} name={name} result={plan.checks.find((c) => c.check === name) ?? null} />
        ))}
      </ul>
    </section>
  );
}

/** Before any check: what each check would say on this machine, so one that cannot run says why before it is pressed. */
function WhatWouldRun({ store }: { store: WorkbenchStore }) {
  const s = useStore(store);
  const unavailable = checksUnavailable(s.discovery, gpuPresence(s));
  const off = checkEverythingOff(unavailable);
  return (
    <div>
      <p data-testid="check-intro">
        {off
          ? 'Check everything cannot run on this machine. Each check, and why it could not run here:'
          : 'Check everything (beside Run) makes every check an expert makes before shipping a kernel, on the plan on screen. On this machine:'}
      </p>
      <ul className="checks" tabIndex={0} aria-label={off ? 'Each check, and why it could not run here' : 'Each check on this machine'}>
        {CHECK_NAMES.map((name) => {
          const why = unavailable[name];
          return (
            <li key={name} data-testid="check-row" data-check={name} data-status={why ? 'could-not-run' : 'ready'}>
              <span className="muted" role="img" aria-label={why ? 'could not run' : 'ready'}>
                {why ? STATUS_MARK['could-not-run'] : '○'}
              </span>{' '}
              <strong>{name}</strong> <span className="muted">({CHECK_WORDS[name]})</span>{' '}
              <span data-testid="check-status" className="muted">
                {why ? 'could not run' : 'ready'}
              </span>
              {why && <div data-testid="check-summary">{why}</div>}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/**
 * The Check tab: the report of Check everything — each check passed, failed with its finding, or could not run with
 * why — the checks as they end while it runs, and before any, what each would say on this machine.
 */
export function CheckView({ store }: { store: WorkbenchStore }) {
  const report = useStore(store, (s) => s.checkReport);
  const progress = useStore(store, (s) => s.checkProgress);
  const error = useStore(store, (s) => s.checkError);
  return (
    <div data-testid="check-view" aria-live="polite">
      {progress ? (
        <>
          <p data-testid="check-progress">
            Checking {progress.label}: {progress.results.length} of {CHECK_NAMES.length} checks done.{' '}
            <button onClick={() => store.getState().cancelCheck()} data-testid="cancel-check">
              Cancel
            </button>
          </p>
          <ul className="checks">
            {CHECK_NAMES.map((name) => (
              <CheckRow key={name} name={name} result={progress.results.find((r) => r.check === name) ?? null} />
            ))}
          </ul>
        </>
      ) : report ? (
        <>
          <p data-testid="check-headline" className={report.verdict === 'passed' ? 'status-ok' : report.verdict === 'failed' ? 'status-fail' : ''}>
            {report.headline}
          </p>
          <p className="muted">
            {report.device ? `On ${report.device}` : 'Without a GPU'}, in {formatDuration(report.durationMs)}.
          </p>
          {report.plans.map((plan) => (
            <PlanChecks key={plan.label} plan={plan} />
          ))}
        </>
      ) : (
        <>
          {error && (
            <p className="status-fail" role="alert" data-testid="check-error">
              {error}
            </p>
          )}
          <WhatWouldRun store={store} />
        </>
      )}
    </div>
  );
}
