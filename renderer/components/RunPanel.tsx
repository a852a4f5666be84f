import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import type { KernelFacts } from '../../core/compile/compile-result';
import { parseDim3 } from '../../core/dims';
import { ELEMENT_TYPE_NAMES, type ElementType } from '../../core/plan/element-types';
import { defaultArgRows, planFromForm, type ArgRow } from '../../core/plan/form-plan';
import { getModel } from '../editor/models';
import { useCommand } from '../layout/commands';
import type { WorkbenchStore } from '../store/store';

type BufferRow = Extract<ArgRow, { kind: 'buffer' }>;

/**
 * The run form: one row per kernel parameter (from the compile), the launch configuration from the
 * Launch panel above, a time limit for the watchdog. Or a loaded plan (file, gallery), run as it is
 * with the editor's current text for its kernel's file.
 */
export function RunPanel({ store, kernels }: { store: WorkbenchStore; kernels: KernelFacts[] }) {
  const s = useStore(store);
  const doc = s.documents.find((d) => d.id === s.activeId) ?? null;
  const kernel = kernels.find((k) => k.name === s.launch.kernel) ?? kernels.find((k) => k.symbol) ?? null;
  const [planPath, setPlanPath] = useState('');
  const [note, setNote] = useState<string | null>(null);
  const rows = s.argRows && kernel && s.argRows.kernel === kernel.name ? s.argRows.rows : null;

  useEffect(() => {
    if (kernel && s.argRows?.kernel !== kernel.name) s.setArgRows(kernel.name, defaultArgRows(kernel.params));
  }, [kernel?.name, kernel?.params.length]);

  const source = () => (doc ? (getModel(doc.id)?.getValue() ?? '') : '');
  const formPlan = () => {
    const grid = parseDim3(s.launch.grid, 'Grid');
    const block = parseDim3(s.launch.block, 'Block');
    if (!grid.ok || !block.ok || !kernel || !rows || !doc) return null;
    return planFromForm({
      source: source(),
      sourceName: doc.name,
      kernel: kernel.name,
      grid: grid.value,
      block: block.value,
      sharedBytes: Number(s.launch.smem) || 0,
      rows,
      options: s.compileOptions,
    });
  };
  /** A loaded plan, with the editor's current text for the kernel that came from the open file. */
  const loadedWithEditorText = () => {
    const plan = structuredClone(s.loadedPlan!.plan) as { kernels?: { sourceName?: string; source?: string }[] };
    for (const k of plan.kernels ?? []) if (doc && k.sourceName === doc.name) k.source = source();
    return plan;
  };
  const run = () => {
    setNote(null);
    if (s.loadedPlan) return void s.runPlan(loadedWithEditorText(), s.loadedPlan.planPath);
    const plan = formPlan();
    if (!plan) return setNote('Fix the grid and block above, and compile a kernel, to run it.');
    void s.runPlan(plan, null);
  };
  useCommand('run', () => !s.running && run());
  const savePlan = async () => {
    const plan = s.loadedPlan ? loadedWithEditorText() : formPlan();
    if (!plan || !planPath.trim()) return setNote('Give a path for the plan file.');
    try {
      await s.api.invoke('plans.write', { path: planPath.trim(), plan });
      setNote(`Plan saved to ${planPath.trim()}`);
    } catch (error) {
      setNote((error as Error).message);
    }
  };
  const loadPlan = async () => {
    try {
      const { plan, path } = await s.api.invoke('plans.read', { path: planPath.trim() });
      s.setLoadedPlan({ label: path, plan, planPath: path });
      setNote(null);
    } catch (error) {
      setNote((error as Error).message);
    }
  };
  const update = (i: number, change: Partial<BufferRow> | { value: string }) => {
    if (!rows || !kernel) return;
    s.setArgRows(
      kernel.name,
      rows.map((r, j) => (j === i ? ({ ...r, ...change } as ArgRow) : r)),
    );
  };

  return (
    <div className="run-panel" data-testid="run-panel">
      {s.loadedPlan ? (
        <p>
          Plan <span className="mono">{s.loadedPlan.label}</span>{' '}
          <button onClick={() => s.setLoadedPlan(null)} data-testid="unload-plan">
            Use the form
          </button>
        </p>
      ) : !kernel ? (
        <p className="muted">Compile a kernel to build its arguments.</p>
      ) : (
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
      )}
      <div className="run-actions">
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
          <input
            type="checkbox"
            aria-label="Compare with a second run"
            checked={s.determinismCheck}
            onChange={(e) => s.setDeterminismCheck(e.target.checked)}
          />{' '}
          Compare with a second run
        </label>
        <button onClick={run} disabled={s.running} data-testid="run-button">
          {s.running ? { checks: 'Checking…', compile: 'Compiling…', run: 'Running…', diagnose: 'Diagnosing…' }[s.runPhase ?? 'checks'] : 'Run'}
        </button>
        {s.running && (
          <button onClick={() => s.cancelRun()} data-testid="cancel-run">
            Cancel
          </button>
        )}
      </div>
      <div className="run-actions">
        <input aria-label="Plan file" placeholder="/path/to/plan.json" value={planPath} onChange={(e) => setPlanPath(e.target.value)} />
        <button onClick={() => void savePlan()}>Save plan</button>
        <button onClick={() => void loadPlan()}>Load plan</button>
      </div>
      {note && (
        <p className="status-fail" role="alert">
          {note}
        </p>
      )}
    </div>
  );
}
