import { useStore } from 'zustand';

import { doctorMachineLabel, type BundleView as OpenedBundleView } from '../../core/bundle/bundle-view';
import { ptxOrigin } from '../../core/bundle/bundle-compile';
import type { DeviceInfo } from '../../core/devices';
import { bundleDiagnosisNote, bundleDiagnosisText } from '../../core/diagnose/diagnosis-bundle-text';
import { ranText } from '../../core/diagnose/diagnosis-view-text';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { verdictSeverity } from '../../core/diagnose/verdict';
import { formatBytes, plural } from '../../core/format';
import type { Timeline } from '../../core/memory/timeline';
import type { WorkbenchStore } from '../store/store';
import { CommandWords } from './DiagnoseSteps';
import { DevicePanel } from './DevicePanel';
import { DoctorChecks } from './DoctorChecks';
import { Prose } from './Prose';

/** A bundle's time, as a person reads it, in UTC (the bundle's clock, not this machine's zone). */
export function bundleTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** "recorded on NVIDIA H100 … at <the run's time>": the run's own time, never the export's (said apart when the result has none). */
export function recordedWords(recorded: OpenedBundleView['recorded']): string {
  const device = recorded.device ?? 'an unknown device';
  return recorded.at
    ? `recorded on ${device} at ${bundleTime(recorded.at)}`
    : `recorded on ${device}, at a time the result does not say; exported ${bundleTime(recorded.exportedAt)}`;
}

/** The banner over every view while a bundle is open: whose data is on screen, and the one way to run it. */
export function BundleBanner({ store, onShow }: { store: WorkbenchStore; onShow: () => void }) {
  const bundle = useStore(store, (s) => s.bundle);
  const running = useStore(store, (s) => s.running);
  if (!bundle) return null;
  const { view, name } = bundle;
  const again = () => {
    const refused = store.getState().runBundlePlanAgain();
    if (refused) store.setState({ notice: { kind: 'error', text: refused } });
  };
  return (
    <div className="banner info bundle-banner" role="status" data-testid="bundle-banner">
      <span className="banner-text">
        Opened from bundle <strong className="mono">{name}</strong> ({recordedWords(view.recorded)}), read-only.
        {view.diagnosis && (
          <>
            {' '}
            <span data-testid="bundle-banner-diagnosis">
              <Prose text={bundleDiagnosisText(view.diagnosis)} />
            </span>
          </>
        )}
      </span>{' '}
      <button onClick={onShow} data-testid="bundle-show">
        Bundle details
      </button>{' '}
      {/* A bundle of a program's diagnosis has no plan: nothing to run again, so no button that is always off. */}
      {(view.plan || !view.diagnosis) && (
        <>
          <button
            onClick={again}
            disabled={!view.plan || running}
            data-testid="bundle-banner-run-again"
            title="A copy of the plan, checked on this machine like any plan"
          >
            Run this plan again
          </button>{' '}
        </>
      )}
      <button onClick={() => store.getState().closeBundle()} data-testid="bundle-close">
        Close bundle
      </button>
    </div>
  );
}

/**
 * The bundle's own picture of where it was made: what it holds and lacks, the run's devices and doctor (judged
 * again by this version's rules from the facts it recorded), the environment as it went in, the validator's
 * findings, each kernel's compile, and the memory timeline's markers — or the program's diagnosis it holds, with the
 * way into the Diagnose view. Never this machine's devices or doctor.
 */
export function BundleView({ store, onEditor, onDiagnose }: { store: WorkbenchStore; onEditor: () => void; onDiagnose: () => void }) {
  const bundle = useStore(store, (s) => s.bundle);
  if (!bundle) return <main className="bundle-view pad muted">No bundle is open: Open bundle… in the top bar.</main>;
  const { view, name, timelines } = bundle;
  const m = view.manifest;
  const d = view.outcome?.diagnosis;
  // A bundle of a program's diagnosis holds no run: no timeline, launches, kernels or devices to show empty.
  const run = view.plan !== null || view.outcome !== null || !view.diagnosis;
  return (
    <main className="bundle-view" data-testid="bundle-view">
      <section aria-label="The bundle">
        <h2>
          Bundle <span className="mono">{name}</span>
        </h2>
        <p className="muted" data-testid="bundle-made">
          Made {bundleTime(m.createdAt)} by GPU Workbench {m.workbench.version} (bundle schema {m.schema}) · {m.redacted ? 'redacted' : 'NOT redacted'} ·{' '}
          {view.sources.length ? `${view.sources.length} source file${view.sources.length > 1 ? 's' : ''}` : 'no sources'} · {view.path}
        </p>
        {d && (
          <p className={d.severity === 'ok' ? 'status-ok' : d.severity === 'warning' ? 'status-warn' : 'status-fail'} data-testid="bundle-diagnosis">
            <Prose text={d.headline} />{' '}
            <button className="link" onClick={onEditor}>
              Show in the editor
            </button>
          </p>
        )}
        {view.notes.length > 0 && (
          <>
            <h3>What it lacks</h3>
            <ul data-testid="bundle-notes">
              {view.notes.map((n) => (
                <li key={n} className="muted">
                  <Prose text={n} />
                </li>
              ))}
            </ul>
          </>
        )}
      </section>

      {view.diagnosis && <BundleDiagnosis store={store} report={view.diagnosis} hasSnapshot={view.diagnosisSnapshot !== null} onDiagnose={onDiagnose} />}
      {run && <BundleRunSections view={view} timelines={timelines} />}

      <section aria-label="Doctor" data-testid="bundle-doctor">
        <h3>Doctor</h3>
        <p className={view.doctor.machine === 'exporting' ? 'status-warn' : 'muted'} data-testid="bundle-doctor-machine">
          {doctorMachineLabel(view.doctor.machine)}
        </p>
        <p className="muted">
          {view.doctor.from === 'facts'
            ? `Judged again by this version's rules from the facts gathered ${view.doctor.gatheredAt ? bundleTime(view.doctor.gatheredAt) : ''} where the bundle was made.`
            : view.doctor.from === 'saved'
              ? 'The checks as the exporting workbench made them.'
              : 'No doctor report in this bundle.'}
        </p>
        {view.doctor.checks.length > 0 && <DoctorChecks checks={view.doctor.checks} />}
      </section>

      <section aria-label="Environment" data-testid="bundle-environment">
        <h3>Environment{view.environment ? ` (${view.environment.redacted ? 'redacted' : 'NOT redacted'})` : ''}</h3>
        {view.doctor.machine !== 'recording' && view.environment && (
          <p className="muted" data-testid="bundle-environment-machine">
            {view.doctor.machine === 'exporting'
              ? 'The environment of the machine that exported this bundle, not the one that ran it.'
              : 'The environment of the machine that made this bundle.'}
          </p>
        )}
        <pre className="mono">
          {view.environment
            ? Object.entries(view.environment.variables)
                .map(([k, v]) => `${k}=${v}`)
                .join('\n') || '(none of the variables a bundle carries was set)'
            : '(not in the bundle)'}
        </pre>
      </section>

      <section aria-label="Files in the bundle" data-testid="bundle-files">
        <h3>Files</h3>
        <table>
          <tbody>
            {view.entries.map((e) => (
              <tr key={e.name}>
                <td className="mono">{e.name}</td>
                <td>{formatBytes(e.bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </main>
  );
}

/** A program's diagnosis in the bundle: its verdict, the program as it was run, and Open in Diagnose. */
function BundleDiagnosis({
  store,
  report,
  hasSnapshot,
  onDiagnose,
}: {
  store: WorkbenchStore;
  report: DiagnosisReport;
  hasSnapshot: boolean;
  onDiagnose: () => void;
}) {
  const v = report.verdict;
  const severity = `status-${verdictSeverity(v.kind).level}`;
  // Refused only for a bundle with no diagnosis, which this section is never shown for.
  const open = () => store.getState().showBundleDiagnosis() === null && onDiagnose();
  return (
    <section aria-labelledby="bundle-program-diagnosis-heading" data-testid="bundle-program-diagnosis">
      <h3 id="bundle-program-diagnosis-heading">A program’s diagnosis</h3>
      <p className={severity} data-testid="bundle-diagnosis-verdict">
        <Prose text={bundleDiagnosisText(report)} />
      </p>
      <p>
        <CommandWords argv={report.program.argv} env={report.program.envChanges} /> <span className="muted mono place-path">in {report.program.cwd}</span>
      </p>
      <p className="muted">{ranText(report)}</p>
      <p className="muted">
        <Prose text={bundleDiagnosisNote(hasSnapshot)} />
      </p>
      <button type="button" onClick={open} data-testid="bundle-open-in-diagnose">
        Open in Diagnose
      </button>
    </section>
  );
}

/** What a bundle of a run holds of it: the memory timeline's markers, the launches checked, the kernels, the devices. */
function BundleRunSections({ view, timelines }: { view: OpenedBundleView; timelines: Timeline[] }) {
  const summary = view.timelineSummary[0];
  return (
    <>
      <section aria-label="Memory timeline" data-testid="bundle-memory">
        <h3>Memory timeline</h3>
        {timelines.length === 0 ? (
          <p className="muted">The bundle has no memory timeline (see above).</p>
        ) : (
          <>
            <p>
              {summary?.title}: {plural(summary?.allocations ?? 0, 'allocation')}
              {summary?.peak ? `, peak ${formatBytes(summary.peak.bytes)}` : ''}
              {view.samples ? `, with ${plural(view.samples.count, 'NVML sample')} of ${plural(view.samples.devices, 'device')}` : ', without NVML samples'}.
            </p>
            <ul data-testid="bundle-markers">
              {timelines[0]!.markers.map((mk, i) => (
                <li key={i} data-kind={mk.kind}>
                  <strong>{mk.kind}</strong> <Prose text={mk.label} />
                  <div className="muted">
                    <Prose text={mk.detail} />
                  </div>
                </li>
              ))}
            </ul>
          </>
        )}
      </section>

      <section aria-label="Launches checked" data-testid="bundle-validation">
        <h3>Launches checked{view.validation?.device ? ` against ${view.validation.device.name}` : ''}</h3>
        {view.validation?.device && <p className="muted">Its profile came from {view.validation.device.from}.</p>}
        {view.validation?.launches.map((l) => (
          <div key={l.stepIndex}>
            <p className="mono">
              Step {l.stepIndex + 1}: {l.label} ({l.checkedWith === 'kernel' ? "with the kernel's recorded resources" : "device's limits only"})
            </p>
            <ul>
              {l.findings.length === 0 && <li className="status-ok">No finding.</li>}
              {l.findings.map((f, i) => (
                <li key={i} className={`finding-${f.severity}`}>
                  <Prose text={f.message} />
                  {f.fix && (
                    <>
                      {' '}
                      Fix: <Prose text={f.fix} />
                    </>
                  )}
                </li>
              ))}
            </ul>
          </div>
        ))}
      </section>

      <section aria-label="Kernels" data-testid="bundle-kernels">
        <h3>Kernels</h3>
        {view.kernels.map(({ compile: k, ptx }) => (
          <div key={k.kernel} className="bundle-kernel">
            <p>
              <span className="mono">{k.entry}</span> from <span className="mono">{k.sourceName}</span>, for {k.options.arch}
            </p>
            {k.record ? <pre className="mono">{k.record.command}</pre> : <p className="muted">The run never compiled it.</p>}
            <p className="muted">
              {ptx
                ? `PTX (${formatBytes(ptx.length)}), ${ptxOrigin(k.ptxFrom)}: in the PTX tab of its file.`
                : `No PTX: ${k.ptxMissing ?? 'not in the bundle'}.`}
            </p>
          </div>
        ))}
      </section>

      <section aria-label="Devices" data-testid="bundle-devices">
        <h3>Devices (as the bundle recorded them)</h3>
        {view.devices.length === 0 && <p className="muted">The bundle holds no device profile.</p>}
        {view.devices.map((p) => (
          <DevicePanel key={`${p.device.uuid}-${p.device.ordinal}`} device={p.device as DeviceInfo} memory={undefined} />
        ))}
      </section>
    </>
  );
}
