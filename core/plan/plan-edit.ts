import type { KernelParam } from '../compile/kernel-signature';
import { fail, ok, type Result } from '../result';
import { elementSize, type ElementType } from './element-types';
import { bytesOf, describeIssues, launchPlanSchema, type Initializer, type LaunchPlan } from './plan-schema';
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

/** The steps a person adds in the Run section: a buffer's (alloc, upload, download, free) or a kernel's launch. */
export const ADDABLE_STEP_OPS = ['alloc', 'upload', 'launch', 'download', 'free'] as const;
export type NewStep = { op: 'alloc' | 'upload' | 'download' | 'free'; buffer: string } | { op: 'launch'; kernel: string };

export type StepEdit =
  /** A new step, placed so that it becomes step `at` (0-based; the number of steps puts it last). */
  | { kind: 'step-add'; at: number; step: NewStep }
  | { kind: 'step-remove'; step: number }
  /** Step `step` moved so that it becomes step `to` (both 0-based). */
  | { kind: 'step-move'; step: number; to: number };

export type PlanEdit =
  | { kind: 'buffer-type'; buffer: string; type: ElementType }
  | { kind: 'buffer-count'; buffer: string; count: number }
  | { kind: 'buffer-init'; buffer: string; init: Initializer | null }
  | { kind: 'scalar'; step: number; arg: number; value: number | string }
  | StepEdit;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const isStepEdit = (edit: PlanEdit): edit is StepEdit => edit.kind === 'step-add' || edit.kind === 'step-remove' || edit.kind === 'step-move';

/**
 * A new launch of `kernel`: a copy of the plan's last launch of it (its grid, block, shared memory and arguments),
 * else one block of one thread with no arguments, for the person to fill in.
 */
function newLaunch(steps: unknown[], kernel: string): Record<string, unknown> {
  const last = [...steps].reverse().find((s) => isRecord(s) && s['op'] === 'launch' && s['kernel'] === kernel);
  if (isRecord(last)) return JSON.parse(JSON.stringify(last)) as Record<string, unknown>;
  return { op: 'launch', kernel, grid: [1, 1, 1], block: [1, 1, 1], args: [] };
}

/**
 * A copy of the plan with its steps added to, taken from or reordered: refused, in the schema's words, when the plan
 * that results would not be one (no step left, an upload of a buffer without an initializer, a comparison moved
 * above the read-back it compares with). What the steps' order does to the run is the validator's to say.
 */
function editSteps(plan: Record<string, unknown>, edit: StepEdit): Result<unknown> {
  const copy = JSON.parse(JSON.stringify(plan)) as Record<string, unknown>;
  const steps = Array.isArray(copy['steps']) ? (copy['steps'] as unknown[]) : null;
  if (!steps) return fail('The plan has no steps to edit.');
  const inRange = (i: number, end = steps.length) => Number.isInteger(i) && i >= 0 && i < end;
  if (edit.kind === 'step-add') {
    if (!inRange(edit.at, steps.length + 1)) return fail(`There is no place ${edit.at + 1} among ${steps.length} steps.`);
    const names = (key: 'buffers' | 'kernels', field: 'name' | 'id') =>
      Array.isArray(copy[key]) ? (copy[key] as unknown[]).flatMap((x) => (isRecord(x) && typeof x[field] === 'string' ? [x[field]] : [])) : [];
    if (edit.step.op === 'launch' && !names('kernels', 'id').includes(edit.step.kernel)) return fail(`The plan has no kernel ${edit.step.kernel}.`);
    if (edit.step.op !== 'launch' && !names('buffers', 'name').includes(edit.step.buffer)) return fail(`The plan has no buffer ${edit.step.buffer}.`);
    steps.splice(edit.at, 0, edit.step.op === 'launch' ? newLaunch(steps, edit.step.kernel) : { op: edit.step.op, buffer: edit.step.buffer });
  } else if (!inRange(edit.step)) return fail(`The plan has no step ${edit.step + 1}.`);
  else if (edit.kind === 'step-remove') {
    if (steps.length === 1) return fail('A plan needs at least one step: add another before removing this one.');
    steps.splice(edit.step, 1);
  } else {
    if (!inRange(edit.to)) return fail(`There is no step ${edit.to + 1} to move it to.`);
    steps.splice(edit.to, 0, ...steps.splice(edit.step, 1));
  }
  const checked = launchPlanSchema.safeParse(copy);
  if (!checked.success) return fail(`That would make the plan invalid: ${describeIssues(checked.error)}`);
  return ok(copy);
}

/** Where step `index` is after `edit`; null when the edit removed it. Edits that are not to the steps leave it where it was. */
export function stepIndexAfter(edit: PlanEdit, index: number): number | null {
  switch (edit.kind) {
    case 'step-add':
      return index >= edit.at ? index + 1 : index;
    case 'step-remove':
      return index === edit.step ? null : index > edit.step ? index - 1 : index;
    case 'step-move':
      if (index === edit.step) return edit.to;
      if (edit.step < index && index <= edit.to) return index - 1;
      if (edit.to <= index && index < edit.step) return index + 1;
      return index;
    default:
      return index;
  }
}

/** A copy of the plan with one edit made; the plan as it came is never changed. */
export function editPlan(plan: unknown, edit: PlanEdit): Result<unknown> {
  if (!isRecord(plan)) return fail('There is no plan to edit.');
  if (isStepEdit(edit)) return editSteps(plan, edit);
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
