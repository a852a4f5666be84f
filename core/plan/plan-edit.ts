import type { KernelParam } from '../compile/kernel-signature';
import { fail, ok, type Result } from '../result';
import { elementSize, type ElementType } from './element-types';
import { bytesOf, type Initializer, type LaunchPlan } from './plan-schema';
import { stepLabel } from './step-label';

/**
 * A plan as the Run section shows it — its buffers, the scalars its launches pass, its steps in order — and the
 * edits made there, applied to the plan itself: what the table shows is the plan that will run (ARCHITECTURE.md §5).
 */

export interface PlanBufferRow {
  name: string;
  type: ElementType;
  count: number;
  bytes: number;
  init: Initializer | null;
  /** A step uploads it: it needs an initializer (the schema says so), so "none" is not offered. */
  uploaded: boolean;
}

export interface PlanScalarRow {
  step: number;
  arg: number;
  /** The kernel's entry, and the parameter's name where the compiled kernel says it. */
  kernel: string;
  param: string | null;
  type: ElementType;
  value: string;
}

export interface PlanTable {
  buffers: PlanBufferRow[];
  scalars: PlanScalarRow[];
  steps: string[];
}

/** The table of a plan that passed the schema; `params` names a kernel's parameters where its compile is known. */
export function planTable(plan: LaunchPlan, params: (entry: string) => KernelParam[] | null = () => null): PlanTable {
  const uploads = new Set(plan.steps.flatMap((s) => (s.op === 'upload' ? [s.buffer] : [])));
  const buffers = plan.buffers.map((b) => ({
    name: b.name,
    type: b.type,
    count: b.count,
    bytes: bytesOf(b),
    init: b.init ?? null,
    uploaded: uploads.has(b.name),
  }));
  const scalars: PlanScalarRow[] = [];
  plan.steps.forEach((step, stepIndex) => {
    if (step.op !== 'launch') return;
    const kernel = plan.kernels.find((k) => k.id === step.kernel)?.entry ?? step.kernel;
    const names = params(kernel);
    step.args.forEach((a, arg) => {
      if ('scalar' in a) scalars.push({ step: stepIndex, arg, kernel, param: names?.[arg]?.name ?? null, type: a.scalar.type, value: String(a.scalar.value) });
    });
  });
  return { buffers, scalars, steps: plan.steps.map((s) => stepLabel(s, plan)) };
}

export type PlanEdit =
  | { kind: 'buffer-type'; buffer: string; type: ElementType }
  | { kind: 'buffer-count'; buffer: string; count: number }
  | { kind: 'buffer-init'; buffer: string; init: Initializer | null }
  | { kind: 'scalar'; step: number; arg: number; value: number | string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy of the plan with one edit made; the plan as it came is never changed. */
export function editPlan(plan: unknown, edit: PlanEdit): Result<unknown> {
  if (!isRecord(plan)) return fail('There is no plan to edit.');
  const copy = JSON.parse(JSON.stringify(plan)) as { buffers?: unknown; steps?: unknown };
  if (edit.kind === 'scalar') {
    const step = Array.isArray(copy.steps) ? (copy.steps[edit.step] as unknown) : undefined;
    const arg = isRecord(step) && Array.isArray(step['args']) ? (step['args'][edit.arg] as unknown) : undefined;
    if (!isRecord(arg) || !isRecord(arg['scalar'])) return fail(`Step ${edit.step + 1} has no scalar argument ${edit.arg + 1}.`);
    arg['scalar']['value'] = edit.value;
    return ok(copy);
  }
  const buffer = Array.isArray(copy.buffers) ? (copy.buffers as unknown[]).find((b) => isRecord(b) && b['name'] === edit.buffer) : undefined;
  if (!isRecord(buffer)) return fail(`The plan has no buffer ${edit.buffer}.`);
  if (edit.kind === 'buffer-type') buffer['type'] = edit.type;
  else if (edit.kind === 'buffer-count') buffer['count'] = edit.count;
  else if (edit.init) buffer['init'] = edit.init;
  else delete buffer['init'];
  return ok(copy);
}

/** A count as typed: a whole number of elements, at least 1, that JavaScript holds exactly. */
export function parseCount(text: string): Result<number> {
  const trimmed = text.trim().replace(/[,_\s]/g, '');
  if (!/^\d+$/.test(trimmed)) return fail('A count is a whole number of elements.');
  const n = Number(trimmed);
  if (n < 1) return fail('A buffer holds at least 1 element.');
  if (!Number.isSafeInteger(n)) return fail('That is more elements than any device can hold.');
  return ok(n);
}

/** A scalar as typed, for its type: 64-bit integers stay strings (exact), others become numbers. */
export function parseScalar(type: ElementType, text: string): Result<number | string> {
  const trimmed = text.trim();
  const integer = !['f16', 'bf16', 'f32', 'f64'].includes(type);
  if (integer && !/^-?\d+$/.test(trimmed)) return fail(`A ${type} is a whole number.`);
  if (integer && elementSize(type) === 8) return ok(trimmed);
  const n = Number(trimmed);
  if (trimmed === '' || !Number.isFinite(n)) return fail(`A ${type} is a number.`);
  return ok(n);
}
