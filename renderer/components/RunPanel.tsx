import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import { ELEMENT_TYPE_NAMES, type ElementType } from '../../core/plan/element-types';
import { defaultArgRows, type ArgRow } from '../../core/plan/form-plan';
import { planWithDocumentSource } from '../../core/plan/plan-launch';
import { blockerLines } from '../../core/plan/run-readiness';
import { checkEverythingOff, checksUnavailable } from '../../core/check/availability';
import { dirnameOf, resolveShownPath } from '../../core/workspace/paths';
import { getModel } from '../editor/models';
import { useLaunchView, type LaunchView } from '../hooks/use-launch-view';
import { useCommand } from '../layout/commands';
import { gpuPresence } from '../store/devices-slice';
import type { WorkbenchStore } from '../store/store';
import { PlanTable } from './PlanTable';
import { ProfileBlockers, ProfileButton } from './ProfileButton';
import { RunBlockers } from './RunBlockers';

type BufferRow = Extract<ArgRow, { kind: 'buffer' }>;

/** The run form: one row per kernel parameter, a buffer for a pointer and a value for a scalar. */
function ArgRowsForm({ rows, update }: { rows: ArgRow[] | null; update: (i: number, change: Partial<BufferRow> | { value: string }) => void }) {
  return (
    <table className="arg-rows">
      <tbody>
        {rows?.map((r, i) =>
          r.kind === 'scalar' ? (
            <tr key={r.name}>
              <td className="mono">{r.name}</td>
              <td>{r.type}</td>
              <td colSpan={3}>
                <input aria-label={`${r.name} value`} value={r.value} onChange={(e) => update(i, { value: e.target.value })} />
              </td>
            </tr>
          ) : (
            <tr key={r.name}>
              <td className="mono">{r.name}</td>
              <td>
                <select aria-label={`${r.name} type`} value={r.type} onChange={(e) => update(i, { type: e.target.value as ElementType })}>
                  {ELEMENT_TYPE_NAMES.map((t) => (
                    <option key={t}>{t}</option>
                  ))}
                </select>
              </td>
              <td>
                <input aria-label={`${r.name} count`} className="narrow" value={r.count} onChange={(e) => update(i, { count: Number(e.target.value) })} />
              </td>
              <td>
                <select aria-label={`${r.name} init`} value={r.init} onChange={(e) => update(i, { init: e.target.value as BufferRow['init'] })}>
                  {['none', 'zeros', 'constant', 'iota', 'random'].map((v) => (
                    <option key={v}>{v}</option>
                  ))}
                </select>
                {(r.init === 'constant' || r.init === 'iota') && (
                  <input
                    aria-label={`${r.name} init value`}
                    className="narrow"
                    value={r.value}
                    onChange={(e) => update(i, { value: Number(e.target.value) })}
                  />
                )}
              </td>
              <td>
                <select aria-label={`${r.name} expect`} value={r.expect} onChange={(e) => update(i, { expect: e.target.value as BufferRow['expect'] })}>
                  <option value="none">no check</option>
                  <option value="constant">expect constant</option>
                  <option value="iota">expect iota</option>
                </select>
                {r.expect !== 'none' && (
                  <input
                    aria-label={`${r.name} expected value`}
                    className="narrow"
                    value={r.expectValue}
                    onChange={(e) => update(i, { expectValue: Number(e.target.value) })}
                  />
                )}
                {r.expect === 'iota' && (
                  <input
                    aria-label={`${r.name} expected step`}
                    className="narrow"
                    value={r.expectStep}
                    onChange={(e) => update(i, { expectStep: Number(e.target.value) })}
                  />
                )}
              </td>
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}

/** The Run section of a file from a bundle: nothing in it runs by being opened; its plan can run again as a copy. */
function BundleRunNote({ store, label }: { store: WorkbenchStore; label: string | null }) {
  const s = useStore(store);
  const [bundleNote, setBundleNote] = useState<string | null>(null);
  return (
    <div className="run-panel" data-testid="run-panel">
      <p data-testid="bundle-run-note">
        {label ? (
          <>
            Plan <span className="mono">{label}</span>, read-only: nothing in a bundle runs by being opened.
          </>
        ) : (
          'This file is from a bundle, read-only: nothing in a bundle runs by being opened.'
        )}
      </p>
      <button
        disabled={!s.bundle?.view.plan || s.running}
        onClick={() => setBundleNote(s.runBundlePlanAgain())}
        data-testid="bundle-run-again"
        title="Opens the plan in a new, editable file and runs it on this machine, after the same checks as any plan"
      >
        Run this plan again
      </button>
      {bundleNote && (
        <p className="status-fail" role="alert" data-testid="bundle-run-refused">
          {bundleNote}
        </p>
      )}
    </div>
  );
}

/** How a run runs: its time limit, the determinism check, and whether a failure goes under compute-sanitizer at once. */
function RunOptions({ store }: { store: WorkbenchStore }) {
  const s = useStore(store);
  return (
    <>
      <label>
        Time limit (ms){' '}
        <input
          aria-label="Time limit"
          className="narrow"
          value={s.timeoutMs}
          onChange={(e) => s.setTimeoutMs(Math.min(3_600_000, Math.max(100, Number(e.target.value) || 100)))}
        />
      </label>
      <label title="Runs the launches again on the same inputs and compares every read-back bit for bit: races and reads of unwritten memory often show only as results that change.">
        <input type="checkbox" aria-label="Compare with a second run" checked={s.determinismCheck} onChange={(e) => s.setDeterminismCheck(e.target.checked)} />{' '}
        Compare with a second run
      </label>
      <label title="When a run fails in a way compute-sanitizer finds (a memory fault, memory nobody wrote, results that change between runs), run it again at once under the tool its diagnosis names.">
        <input
          type="checkbox"
          aria-label="Re-run failures under compute-sanitizer"
          checked={s.autoSanitize}
          onChange={(e) => s.setAutoSanitize(e.target.checked)}
        />{' '}
        Re-run failures under compute-sanitizer
      </label>
    </>
  );
}

/** The plan attached to the file on screen: its name, the way back to the form, and its buffers, scalars and steps. */
function AttachedPlan({ store, view }: { store: WorkbenchStore; view: LaunchView }) {
  const { doc, run } = view;
  if (!doc || !run.plan) return null;
  const { detachPlan, editPlan } = store.getState();
  return (
    <>
      <p data-testid="attached-plan">
        Plan <span className="mono">{run.plan.label}</span> for <span className="mono">{doc.name}</span>{' '}
        <button onClick={() => detachPlan(doc.id)} data-testid="unload-plan" title="Run this file with the form's arguments instead of the plan">
          Use the form
        </button>
      </p>
      <PlanTable view={view} onEdit={(edit) => editPlan(doc.id, edit)} />
    </>
  );
}

/**
 * Why Check everything is off, or null: it runs a plan the validator refuses too (the validator is one of its checks),
 * so it is off only when there is no plan, or when no check could run on this machine.
 */
function useCheckOff(store: WorkbenchStore, view: LaunchView): string | null {
  const s = useStore(store);
  if (!view.doc || !view.plan.ok) return `There is nothing to check: ${view.plan.ok ? 'open a kernel first' : view.plan.error}`;
  return checkEverythingOff(checksUnavailable(s.discovery, gpuPresence(s)));
}

/** Check everything, beside Run: every check on the plan on screen, its report in the Check tab. */
function CheckEverythingButton({ store, view, planNow }: { store: WorkbenchStore; view: LaunchView; planNow: () => unknown }) {
  const s = useStore(store);
  const off = useCheckOff(store, view);
  const { doc, run } = view;
  const start = () => {
    const plan = planNow();
    if (!plan || !doc || off) return;
    const label = run.plan?.planPath ?? run.plan?.label ?? `the plan of ${doc.name}`;
    void s.checkEverything({ plan, planPath: run.plan?.planPath ?? null, label, timeoutMs: s.timeoutMs });
  };
  return (
    <button
      onClick={start}
      disabled={!!off || s.running || s.checkProgress !== null}
      title={
        off ??
        'The validator, a run with the determinism check, memcheck, racecheck, initcheck, synccheck, and the profile’s coalescing and occupancy: each passed, failed, or could not run, in the Check tab'
      }
      aria-describedby={off ? 'check-off' : undefined}
      data-testid="check-button"
    >
      {s.checkProgress ? 'Checking…' : 'Check everything'}
    </button>
  );
}

/** Why Check everything is off, in words under the button (as Run's blockers are). */
function CheckOffNote({ store, view }: { store: WorkbenchStore; view: LaunchView }) {
  const off = useCheckOff(store, view);
  if (!off) return null;
  return (
    <p className="muted" id="check-off" data-testid="check-off">
      <strong>Check everything is off:</strong> {off}
    </p>
  );
}

/**
 * The Run section of the file on screen: its attached plan (from the gallery or a plan file) or the run
 * form (one row per kernel parameter), with the launch from the Launch panel above. Run starts only a
 * plan the validator passes on the chosen device, on a machine with a GPU; otherwise it says why not.
 */
export function RunPanel({ store }: { store: WorkbenchStore }) {
  const s = useStore(store);
  const view = useLaunchView(store);
  const { doc, kernel, run } = view;
  const [planPathText, setPlanPathText] = useState('');
  const [note, setNote] = useState<{ kind: 'ok' | 'fail'; text: string } | null>(null);
  const rows = run.argRows && kernel && run.argRows.kernel === kernel.name ? run.argRows.rows : null;
  const planFolder = run.plan?.planPath ? dirnameOf(run.plan.planPath) : doc?.path ? dirnameOf(doc.path) : (s.info?.startDir ?? null);
  const planTarget = planFolder ? resolveShownPath(planFolder, planPathText) : null;

  useEffect(() => {
    if (doc && kernel && !run.plan && run.argRows?.kernel !== kernel.name) s.setArgRows(doc.id, kernel.name, defaultArgRows(kernel.params));
  }, [doc?.id, kernel?.name, kernel?.params.length, run.plan]);

  /** The plan as it is now: the panel's launch, and the editor's text as it is at this moment. */
  const currentPlan = () => (doc && view.plan.ok ? planWithDocumentSource(view.plan.value, doc.name, getModel(doc.id)?.getValue() ?? '') : null);
  const start = () => {
    setNote(null);
    const plan = currentPlan();
    if (view.blockers.length) return s.refuseRun(view.blockers);
    if (!plan || !doc) return setNote({ kind: 'fail', text: 'There is nothing to run.' });
    void s.runPlan(plan, {
      planPath: run.plan?.planPath ?? null,
      sources: { documents: { [doc.name]: doc.id }, paths: run.plan?.sourcePaths ?? [], folders: run.plan?.planPath ? [dirnameOf(run.plan.planPath)] : [] },
    });
  };
  useCommand('run', () => !s.running && !doc?.readOnly && start());
  // Run this plan again (from a bundle): once the copy's compile has come, Run as if pressed — the same checks, the same refusals.
  const compileStatus = doc ? s.compiles[doc.id]?.status : undefined;
  useEffect(() => {
    if (!doc || s.pendingRun !== doc.id || (compileStatus !== 'done' && compileStatus !== 'stopped')) return;
    s.clearPendingRun();
    start();
  }, [s.pendingRun, doc?.id, compileStatus]);
  if (doc?.readOnly) return <BundleRunNote store={store} label={run.plan?.label ?? null} />;
  const savePlan = async () => {
    const plan = currentPlan();
    if (!plan) return setNote({ kind: 'fail', text: view.plan.ok ? 'Open a file to save its plan.' : view.plan.error });
    if (!planTarget) return setNote({ kind: 'fail', text: 'Give a file name or a full path for the plan.' });
    try {
      const saved = await s.savePlanFile(planTarget, plan);
      setNote({ kind: 'ok', text: `Plan saved to ${saved}` });
    } catch (error) {
      setNote({ kind: 'fail', text: (error as Error).message });
    }
  };
  const loadPlan = async () => {
    if (!planTarget) return setNote({ kind: 'fail', text: 'Give the plan file’s name or full path.' });
    try {
      await s.openPlanFile(planTarget);
      setNote(null);
    } catch (error) {
      setNote({ kind: 'fail', text: (error as Error).message });
    }
  };
  const update = (i: number, change: Partial<BufferRow> | { value: string }) => {
    if (!rows || !kernel || !doc) return;
    s.setArgRows(
      doc.id,
      kernel.name,
      rows.map((r, j) => (j === i ? ({ ...r, ...change } as ArgRow) : r)),
    );
  };
  const blocked = view.blockers.length > 0;

  return (
    <div className="run-panel" data-testid="run-panel">
      {run.plan && doc ? (
        <AttachedPlan store={store} view={view} />
      ) : !kernel ? (
        <p className="muted">Compile a kernel to build its arguments.</p>
      ) : (
        <ArgRowsForm rows={rows} update={update} />
      )}
      <div className="run-actions">
        <RunOptions store={store} />
        <button
          onClick={start}
          disabled={s.running || blocked || s.kernelProfileProgress !== null}
          title={blocked ? blockerLines(view.blockers).join('\n') : undefined}
          aria-describedby={blocked ? 'run-blockers' : undefined}
          data-testid="run-button"
        >
          {s.running ? { checks: 'Checking…', compile: 'Compiling…', run: 'Running…', diagnose: 'Diagnosing…' }[s.runPhase ?? 'checks'] : 'Run'}
        </button>
        {s.running && (
          <button onClick={() => s.cancelRun()} data-testid="cancel-run">
            Cancel
          </button>
        )}
        <ProfileButton store={store} view={view} plan={currentPlan} />
        <CheckEverythingButton store={store} view={view} planNow={currentPlan} />
      </div>
      {blocked && (
        <div className="run-blockers" id="run-blockers" data-testid="run-blockers">
          <strong>Run is off:</strong>
          <RunBlockers blockers={view.blockers} />
        </div>
      )}
      <ProfileBlockers view={view} />
      <CheckOffNote store={store} view={view} />
      <div className="run-actions">
        <input aria-label="Plan file" placeholder="plan.json or /path/to/plan.json" value={planPathText} onChange={(e) => setPlanPathText(e.target.value)} />
        <button onClick={() => void savePlan()}>Save plan</button>
        <button onClick={() => void loadPlan()}>Load plan</button>
      </div>
      {planTarget && planPathText.trim() && planTarget !== planPathText.trim() && (
        <p className="muted shown-path" data-testid="plan-path-shown">
          {planTarget}
        </p>
      )}
      {note && (
        <p className={note.kind === 'ok' ? 'status-ok' : 'status-fail'} role={note.kind === 'ok' ? 'status' : 'alert'}>
          {note.text}
        </p>
      )}
    </div>
  );
}
