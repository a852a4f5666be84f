import type { KernelParam } from '../compile/kernel-signature';
import type { CompileOptionsInput } from '../compile/compile-options';
import type { Dim3 } from '../dims';
import type { ElementType } from './element-types';
import type { LaunchPlanInput } from './plan-schema';

/** One kernel parameter in the run form: a buffer for a pointer, a value for a scalar. */
export type ArgRow =
  | {
      kind: 'buffer';
      name: string;
      type: ElementType;
      count: number;
      init: 'none' | 'zeros' | 'constant' | 'iota' | 'random';
      value: number;
      expect: 'none' | 'constant' | 'iota';
      expectValue: number;
      expectStep: number;
    }
  | { kind: 'scalar'; name: string; type: ElementType; value: string };

/** The form's starting rows for a kernel's parameters: pointers become buffers, values scalars. */
export function defaultArgRows(params: KernelParam[], count = 1024): ArgRow[] {
  return params.map((p) =>
    p.pointer
      ? {
          kind: 'buffer',
          name: p.name,
          type: p.elementType ?? 'f32',
          count,
          init: p.type.includes('const') ? 'iota' : 'none',
          value: 0,
          expect: 'none',
          expectValue: 0,
          expectStep: 1,
        }
      : { kind: 'scalar', name: p.name, type: p.elementType ?? 'i32', value: /^(n|count|size|len|length|num\w*)$/i.test(p.name) ? String(count) : '0' },
  );
}

export interface RunForm {
  source: string;
  sourceName: string;
  kernel: string;
  grid: Dim3;
  block: Dim3;
  sharedBytes: number;
  rows: ArgRow[];
  /** Compile options as the editor holds them; the architecture comes from the device the plan runs on. */
  options?: Omit<Partial<CompileOptionsInput>, 'arch'> & { arch?: string | null };
  warmup?: number;
  repeats?: number;
}

/**
 * The plan the form describes: every buffer allocated, initialised ones uploaded (one left "none" is
 * not, so the kernel sees the poison pattern), one launch, every buffer read back — compared where an
 * expectation is set — and freed. The schema checks the rest.
 */
export function planFromForm(form: RunForm): LaunchPlanInput {
  const buffers = form.rows.flatMap((r) => (r.kind === 'buffer' ? [r] : []));
  const init = (r: Extract<ArgRow, { kind: 'buffer' }>) => {
    switch (r.init) {
      case 'constant':
        return { kind: 'constant' as const, value: r.value };
      case 'iota':
        return { kind: 'iota' as const, start: r.value, step: 1 };
      case 'random':
        return { kind: 'random' as const, seed: 1, min: 0, max: 1 };
      default:
        return { kind: 'zeros' as const };
    }
  };
  const { arch: _arch, ...options } = form.options ?? {};
  return {
    version: 1,
    kernels: [{ id: 'kernel', entry: form.kernel, source: form.source, sourceName: form.sourceName, options }],
    buffers: buffers.map((r) => ({ name: r.name, type: r.type, count: r.count, init: init(r) })),
    steps: [
      ...buffers.map((r) => ({ op: 'alloc' as const, buffer: r.name })),
      ...buffers.filter((r) => r.init !== 'none').map((r) => ({ op: 'upload' as const, buffer: r.name })),
      {
        op: 'launch' as const,
        kernel: 'kernel',
        grid: [...form.grid] as [number, number, number],
        block: [...form.block] as [number, number, number],
        sharedBytes: form.sharedBytes,
        args: form.rows.map((r) => (r.kind === 'buffer' ? { buffer: r.name } : { scalar: { type: r.type, value: scalarValue(r) } })),
        warmup: form.warmup ?? 0,
        repeats: form.repeats ?? 1,
      },
      ...buffers.map((r) => ({
        op: 'download' as const,
        buffer: r.name,
        ...(r.expect === 'constant'
          ? { expect: { kind: 'constant' as const, value: r.expectValue } }
          : r.expect === 'iota'
            ? { expect: { kind: 'iota' as const, start: r.expectValue, step: r.expectStep } }
            : {}),
      })),
      ...buffers.map((r) => ({ op: 'free' as const, buffer: r.name })),
    ],
  };
}

/** 64-bit values stay strings (exact); others become numbers, and the schema refuses what is not one. */
function scalarValue(r: Extract<ArgRow, { kind: 'scalar' }>): number | string {
  const text = r.value.trim();
  if ((r.type === 'i64' || r.type === 'u64') && /^-?\d+$/.test(text)) return text;
  return text === '' ? text : Number.isFinite(Number(text)) ? Number(text) : text;
}
