import { useEffect, useState } from 'react';

import { formatBytes, thousands } from '../../core/format';
import { ELEMENT_TYPE_NAMES, type ElementType } from '../../core/plan/element-types';
import { parseCount, parseScalar, planTable, type PlanBufferRow, type PlanEdit, type PlanScalarRow } from '../../core/plan/plan-edit';
import type { Initializer } from '../../core/plan/plan-schema';
import type { Result } from '../../core/result';
import type { LaunchView } from '../hooks/use-launch-view';
import { PlanSteps } from './PlanSteps';

type InitKind = 'none' | 'zeros' | 'constant' | 'iota' | 'random' | 'file';

/** An initializer of this kind, keeping what the old one had where it applies (a constant's value, iota's start). */
function initOf(kind: InitKind, old: Initializer | null): Initializer | null {
  const value = old?.kind === 'constant' ? old.value : old?.kind === 'iota' ? old.start : 0;
  switch (kind) {
    case 'none':
      return null;
    case 'zeros':
      return { kind: 'zeros' };
    case 'constant':
      return { kind: 'constant', value };
    case 'iota':
      return { kind: 'iota', start: value, step: old?.kind === 'iota' ? old.step : 1 };
    case 'random':
      return old?.kind === 'random' ? old : { kind: 'random', seed: 1, min: 0, max: 1 };
    case 'file':
      return old;
  }
}

/**
 * A number field that keeps what is typed and changes the plan only with a value that parses: a half-typed count
 * never reaches the plan, and says why it is not taken.
 */
function CommitField<T>({ label, value, parse, onCommit }: { label: string; value: string; parse: (text: string) => Result<T>; onCommit: (v: T) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  const parsed = parse(text);
  return (
    <input
      aria-label={label}
      className={`narrow${parsed.ok ? '' : ' invalid'}`}
      aria-invalid={!parsed.ok}
      title={parsed.ok ? undefined : parsed.error}
      value={text}
      onChange={(e) => {
        setText(e.target.value);
        const next = parse(e.target.value);
        if (next.ok) onCommit(next.value);
      }}
    />
  );
}

function BufferRow({ b, edit }: { b: PlanBufferRow; edit: (e: PlanEdit) => void }) {
  const kind: InitKind = b.init?.kind ?? 'none';
  const kinds: InitKind[] = [
    ...(b.uploaded ? [] : (['none'] as const)),
    'zeros',
    'constant',
    'iota',
    'random',
    ...(kind === 'file' ? (['file'] as const) : []),
  ];
  const initValue = b.init?.kind === 'constant' ? b.init.value : b.init?.kind === 'iota' ? b.init.start : null;
  return (
    <tr data-testid={`plan-buffer-${b.name}`}>
      <th scope="row" className="mono">
        {b.name}
      </th>
      <td>
        <select
          aria-label={`Type of ${b.name}`}
          value={b.type}
          onChange={(e) => edit({ kind: 'buffer-type', buffer: b.name, type: e.target.value as ElementType })}
        >
          {ELEMENT_TYPE_NAMES.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </td>
      <td>
        <CommitField
          label={`Count of ${b.name}`}
          value={String(b.count)}
          parse={parseCount}
          onCommit={(count) => edit({ kind: 'buffer-count', buffer: b.name, count })}
        />
      </td>
      <td className="num" data-testid="plan-buffer-bytes" title={`${thousands(b.bytes)} bytes`}>
        {formatBytes(b.bytes)}
      </td>
      <td>
        <select
          aria-label={`Initializer of ${b.name}`}
          title="How the host fills it before the kernel runs; none: allocated and never written, so it holds the poison pattern (0xFF bytes)"
          value={kind}
          onChange={(e) => edit({ kind: 'buffer-init', buffer: b.name, init: initOf(e.target.value as InitKind, b.init) })}
        >
          {kinds.map((k) => (
            <option key={k}>{k}</option>
          ))}
        </select>
        {initValue !== null && (
          <CommitField
            label={`${b.init?.kind === 'iota' ? 'Start' : 'Value'} of ${b.name}`}
            value={String(initValue)}
            parse={(t) => parseScalar('f64', t) as Result<number>}
            onCommit={(v) =>
              edit({ kind: 'buffer-init', buffer: b.name, init: b.init?.kind === 'iota' ? { ...b.init, start: v } : { kind: 'constant', value: v } })
            }
          />
        )}
      </td>
    </tr>
  );
}

const scalarName = (s: PlanScalarRow) => `step ${s.step + 1} argument ${s.arg + 1}${s.param ? ` (${s.param})` : ''}`;

/**
 * The plan that Run would start, as a compact table: its buffers (name, type, count, bytes, initializer), the scalars
 * its launches pass, and its steps in order (added, removed and moved in PlanSteps). Editing any of them edits that
 * plan: the launch panel's verdict and Run's checks follow at once.
 */
export function PlanTable({ view, onEdit }: { view: LaunchView; onEdit: (edit: PlanEdit) => string | null }) {
  const plan = view.runnable;
  if (!plan) return null;
  const table = planTable(plan, (entry) => view.kernels.find((k) => k.name === entry)?.params ?? null);
  const launchStep = view.run.plan?.launchStep ?? null;
  return (
    <div className="plan-table" data-testid="plan-table">
      <table className="plan-buffers" data-testid="plan-buffers">
        <caption>Buffers</caption>
        <thead>
          <tr>
            <th scope="col">name</th>
            <th scope="col">type</th>
            <th scope="col">count</th>
            <th scope="col">bytes</th>
            <th scope="col">initializer</th>
          </tr>
        </thead>
        <tbody>
          {table.buffers.map((b) => (
            <BufferRow key={b.name} b={b} edit={onEdit} />
          ))}
        </tbody>
      </table>
      {table.scalars.length > 0 && (
        <table className="plan-scalars" data-testid="plan-scalars">
          <caption>Scalars</caption>
          <tbody>
            {table.scalars.map((s) => (
              <tr key={`${s.step}:${s.arg}`}>
                <th scope="row" className="mono">
                  {s.param ?? `arg ${s.arg + 1}`}
                </th>
                <td className="muted">
                  {s.kernel}, step {s.step + 1}
                </td>
                <td>{s.type}</td>
                <td>
                  <CommitField
                    label={`Value of ${scalarName(s)}`}
                    value={s.value}
                    parse={(t) => parseScalar(s.type, t)}
                    onCommit={(value) => onEdit({ kind: 'scalar', step: s.step, arg: s.arg, value })}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <PlanSteps plan={plan} labels={table.steps} launchStep={launchStep} onEdit={onEdit} />
    </div>
  );
}
