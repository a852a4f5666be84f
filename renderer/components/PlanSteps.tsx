import { useEffect, useRef, useState } from 'react';

import { ADDABLE_STEP_OPS, type NewStep, type PlanEdit } from '../../core/plan/plan-edit';
import type { LaunchPlan } from '../../core/plan/plan-schema';

type Op = (typeof ADDABLE_STEP_OPS)[number];

/** The form that adds a step: what it does, to which buffer (or which kernel it launches), and where it goes. */
function AddStep({ plan, count, onAdd }: { plan: LaunchPlan; count: number; onAdd: (at: number, step: NewStep) => void }) {
  const [op, setOp] = useState<Op>('download');
  const [target, setTarget] = useState('');
  const [at, setAt] = useState(-1);
  const targets = op === 'launch' ? plan.kernels.map((k) => ({ value: k.id, label: k.entry })) : plan.buffers.map((b) => ({ value: b.name, label: b.name }));
  const chosen = targets.find((t) => t.value === target)?.value ?? targets[0]?.value ?? '';
  const add = () => {
    if (!chosen) return;
    onAdd(at < 0 || at > count ? count : at, op === 'launch' ? { op, kernel: chosen } : { op, buffer: chosen });
  };
  return (
    <div className="plan-add-step" role="group" aria-label="Add a step" data-testid="plan-add-step">
      <select aria-label="The new step" value={op} onChange={(e) => setOp(e.target.value as Op)}>
        {ADDABLE_STEP_OPS.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
      <select aria-label={op === 'launch' ? 'The kernel it launches' : 'The buffer it works on'} value={chosen} onChange={(e) => setTarget(e.target.value)}>
        {targets.map((t) => (
          <option key={t.value} value={t.value}>
            {t.label}
          </option>
        ))}
      </select>
      <select aria-label="Where the new step goes" value={at} onChange={(e) => setAt(Number(e.target.value))}>
        <option value={-1}>at the end</option>
        {Array.from({ length: count }, (_, i) => (
          <option key={i} value={i}>
            before step {i + 1}
          </option>
        ))}
      </select>
      <button type="button" onClick={add} disabled={!chosen}>
        Add step
      </button>
    </div>
  );
}

/**
 * The plan's steps in order, each with its buttons to move it up or down and to remove it, and a form to add one:
 * every edit is made to the plan that will run, and the launch panel's verdict checks the whole plan again at once.
 * An edit that would leave no valid plan is refused, with the reason. The step a button moved keeps the focus.
 */
export function PlanSteps({
  plan,
  labels,
  launchStep,
  onEdit,
}: {
  plan: LaunchPlan;
  labels: string[];
  launchStep: number | null;
  onEdit: (edit: PlanEdit) => string | null;
}) {
  const [error, setError] = useState<string | null>(null);
  const [focus, setFocus] = useState<{ step: number; action: 'up' | 'down' | 'remove' } | null>(null);
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    if (!focus) return;
    const row = list.current?.querySelector(`[data-step="${focus.step}"]`);
    const wanted =
      row?.querySelector<HTMLButtonElement>(`[data-action="${focus.action}"]:not(:disabled)`) ?? row?.querySelector<HTMLButtonElement>('button:not(:disabled)');
    wanted?.focus();
    setFocus(null);
  }, [focus]);
  const edit = (change: PlanEdit, then: typeof focus = null) => {
    const refused = onEdit(change);
    setError(refused);
    if (!refused) setFocus(then);
  };
  const last = labels.length - 1;
  return (
    <>
      <div className="plan-steps-caption" id="plan-steps-caption">
        Steps
      </div>
      <ol className="plan-steps" data-testid="plan-steps" aria-labelledby="plan-steps-caption" ref={list}>
        {labels.map((label, i) => (
          <li key={`${i}:${label}`} data-step={i} className={i === launchStep ? 'plan-step-shown' : undefined}>
            <div className="plan-step">
              <span className="mono plan-step-label" data-testid="plan-step-label">
                {label}
                {i === launchStep && <span className="muted"> — in the launch panel</span>}
              </span>
              <span className="plan-step-actions">
                <button
                  type="button"
                  data-action="up"
                  disabled={i === 0}
                  aria-label={`Move step ${i + 1} (${label}) up`}
                  title="Move up"
                  onClick={() => edit({ kind: 'step-move', step: i, to: i - 1 }, { step: i - 1, action: 'up' })}
                >
                  ↑
                </button>
                <button
                  type="button"
                  data-action="down"
                  disabled={i === last}
                  aria-label={`Move step ${i + 1} (${label}) down`}
                  title="Move down"
                  onClick={() => edit({ kind: 'step-move', step: i, to: i + 1 }, { step: i + 1, action: 'down' })}
                >
                  ↓
                </button>
                <button
                  type="button"
                  data-action="remove"
                  disabled={last === 0}
                  aria-label={`Remove step ${i + 1} (${label})`}
                  title="Remove"
                  onClick={() => edit({ kind: 'step-remove', step: i }, { step: Math.min(i, last - 1), action: 'remove' })}
                >
                  ✕
                </button>
              </span>
            </div>
          </li>
        ))}
      </ol>
      <AddStep plan={plan} count={labels.length} onAdd={(at, step) => edit({ kind: 'step-add', at, step })} />
      {error && (
        <p className="status-fail" role="alert" data-testid="plan-edit-error">
          {error}
        </p>
      )}
    </>
  );
}
