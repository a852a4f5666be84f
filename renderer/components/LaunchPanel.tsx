import { useStore } from 'zustand';

import { dimProduct } from '../../core/dims';
import { formatBytes, formatWaves } from '../../core/format';
import type { Finding } from '../../core/validate/validate-launch';
import { useLaunchView, type LaunchView } from '../hooks/use-launch-view';
import type { WorkbenchStore } from '../store/store';
import { OccupancyChart } from './OccupancyChart';
import { Prose } from './Prose';
import { StaleNote } from './StaleNote';

type Shown = Pick<Finding, 'rule' | 'severity' | 'message' | 'driverError' | 'runtimeError' | 'fix'> & { line?: number };

/** The validator's findings for one field (or the plan's memory); one that names a source line leads to it. */
function FieldFindings({ findings, onLine }: { findings: Shown[]; onLine: (line: number) => void }) {
  if (findings.length === 0) return null;
  return (
    <ul className="field-findings">
      {findings.map((f, i) => (
        <li key={i} className={`finding-${f.severity}`} data-testid={`finding-${f.rule}`}>
          <div>
            <Prose text={f.message} />
            {f.line !== undefined && (
              <>
                {' '}
                <button className="link mono" onClick={() => onLine(f.line!)} title={`Show line ${f.line} in the editor`} data-testid="finding-line">
                  line {f.line}
                </button>
              </>
            )}
          </div>
          {f.driverError && (
            <div className="muted mono">
              {f.driverError.name} ({f.driverError.code}) · {f.runtimeError?.name} ({f.runtimeError?.code})
            </div>
          )}
          {f.fix && (
            <div className="fix">
              Fix: <Prose text={f.fix} />
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * The launch of the plan that Run would start, checked as it is typed against the chosen device or
 * profile and the compiled kernel. A plan from a sample or a file fills it; editing it edits that plan.
 */
export function LaunchPanel({ store }: { store: WorkbenchStore }) {
  const view = useLaunchView(store);
  const profiles = useStore(store, (s) => s.profiles);
  const profilesError = useStore(store, (s) => s.profilesError);
  const profileId = useStore(store, (s) => s.profileId);
  const chooseProfile = useStore(store, (s) => s.chooseProfile);
  const setLaunch = useStore(store, (s) => s.setLaunch);
  const { doc, kernel, kernels, run, fields, validation } = view;

  if (profilesError) return <p className="status-fail">{profilesError}</p>;
  if (!doc || (!kernel && !run.plan)) return <p className="muted">Compile a kernel to check its launch.</p>;
  const edit = (change: Parameters<typeof setLaunch>[1]) => setLaunch(doc.id, change);
  const at = (field: Finding['field']) => validation?.findings.filter((f) => f.field === field) ?? [];
  const invalid = (field: Finding['field'], parsed: { ok: boolean }) => (at(field).some((f) => f.severity === 'error') || !parsed.ok ? 'invalid' : '');
  const step = run.plan && run.plan.launchStep !== null ? run.plan.launchStep + 1 : null;
  const showLine = (line: number) => store.getState().revealInDocument(doc.id, line);

  return (
    <div className={`launch-panel${view.compile.stale ? ' stale' : ''}`} data-testid="launch-panel">
      {view.compile.stale && <StaleNote what="The kernel's resources and these findings are" />}
      {doc.readOnly ? (
        <p data-testid="bundle-device">
          Device <span className="mono">{view.profile?.label ?? 'not in the bundle'}</span>
          {!view.profile && <span className="muted"> — the bundle carries no profile of the run’s device, so its launch is not checked here.</span>}
        </p>
      ) : (
        <label>
          Device{' '}
          <select value={profileId ?? ''} onChange={(e) => chooseProfile(e.target.value)} aria-label="Device" disabled={!profiles}>
            {!profiles && <option value="">Loading devices and profiles…</option>}
            {profiles?.map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
      )}
      {run.plan ? (
        <p className="muted plan-launch" data-testid="plan-launch">
          {step ? `Step ${step} of the plan ${run.plan.label}: ` : `The plan ${run.plan.label}: `}
          <span className="mono">{run.launch.kernel}</span>
          {!kernel && ` is not compiled from ${doc.name}: checked against the device's limits only.`}
        </p>
      ) : (
        kernels.length > 1 &&
        kernel && (
          <label>
            Kernel{' '}
            <select value={kernel.name} onChange={(e) => edit({ kernel: e.target.value })} aria-label="Kernel">
              {kernels.map((k) => (
                <option key={k.name}>{k.name}</option>
              ))}
            </select>
          </label>
        )
      )}
      <div className="launch-fields">
        <label>
          Grid{' '}
          <input
            value={run.launch.grid}
            onChange={(e) => edit({ grid: e.target.value })}
            aria-label="Grid"
            className={invalid('grid', fields.grid)}
            readOnly={!!doc.readOnly}
          />
        </label>
        {!fields.grid.ok && <div className="status-fail">{fields.grid.error}</div>}
        <FieldFindings onLine={showLine} findings={at('grid')} />
        <label>
          Block{' '}
          <input
            value={run.launch.block}
            onChange={(e) => edit({ block: e.target.value })}
            aria-label="Block"
            className={invalid('block', fields.block)}
            readOnly={!!doc.readOnly}
          />
        </label>
        {!fields.block.ok && <div className="status-fail">{fields.block.error}</div>}
        <FieldFindings onLine={showLine} findings={at('block')} />
        <label>
          Shared (bytes){' '}
          <input
            value={run.launch.smem}
            onChange={(e) => edit({ smem: e.target.value })}
            aria-label="Dynamic shared memory"
            className={invalid('sharedBytes', fields.smem)}
            readOnly={!!doc.readOnly}
          />
        </label>
        {!fields.smem.ok && <div className="status-fail">{fields.smem.error}</div>}
        <FieldFindings onLine={showLine} findings={at('sharedBytes')} />
        <FieldFindings onLine={showLine} findings={[...at('kernel'), ...at('cluster'), ...at('launch')]} />
      </div>
      <PlanFindings view={view} onLine={showLine} />
      <Verdict view={view} />
    </div>
  );
}

/**
 * What the rest of the plan says beside the launch on screen: its other launches' errors, its steps out of order
 * (core/validate/plan-order.ts), and its memory — each buffer against the device's total and free memory and the
 * host's (core/validate/plan-memory.ts).
 */
function PlanFindings({ view, onLine }: { view: LaunchView; onLine: (line: number) => void }) {
  const shownStep = view.run.plan?.launchStep ?? null;
  const others = view.checks
    .filter((c) => c.stepIndex !== shownStep || !view.run.plan)
    .flatMap((c) => c.findings.filter((f) => f.severity === 'error').map((f) => ({ ...f, message: `Step ${c.stepIndex + 1} (${c.label}): ${f.message}` })));
  const memory = view.planCheck?.memory ?? [];
  const order = view.planCheck?.order ?? [];
  if (!memory.length && !order.length && !(view.run.plan && others.length)) return null;
  return (
    <div className="plan-findings" data-testid="plan-findings">
      <FieldFindings onLine={onLine} findings={view.run.plan ? others : []} />
      <FieldFindings onLine={onLine} findings={order} />
      <FieldFindings onLine={onLine} findings={memory} />
    </div>
  );
}

/** The verdict on the plan that Run would start — its launch and the rest of it — and the launch's occupancy. */
function Verdict({ view }: { view: LaunchView }) {
  const { validation, limits, device, fields } = view;
  if (!validation) return null;
  const ok = validation.ok && (view.planCheck?.ok ?? true);
  return (
    <div className="occupancy" data-testid="occupancy">
      <strong className={ok ? 'status-ok' : 'status-fail'}>
        {ok ? '✓ would launch' : '✗ would fail'}
        {view.profile ? ` on ${view.profile.label}` : ''}
      </strong>
      {validation.occupancy && limits && (
        <>
          <div>
            Occupancy {(validation.occupancy.occupancy * 100).toFixed(0)}% · {validation.occupancy.activeBlocksPerSM} blocks/SM · limited by{' '}
            {validation.occupancy.limiters.join(', ')}
          </div>
          <div className="muted" data-testid="occupancy-detail">
            {validation.waves !== null ? `${formatWaves(validation.waves)} · ` : ''}
            {formatBytes(validation.occupancy.allocatedSharedPerBlock)} shared and {validation.occupancy.allocatedRegistersPerBlock} registers allocated per
            block
            {validation.suggestedBlockSize ? ` · best block size ${validation.suggestedBlockSize}` : ''}
          </div>
        </>
      )}
      {device && limits && fields.block.ok && (
        <OccupancyChart device={device} kernel={limits} sharedBytes={fields.smem.ok ? fields.smem.value : 0} blockSize={dimProduct(fields.block.value)} />
      )}
    </div>
  );
}
