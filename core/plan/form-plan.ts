import type { KernelParam } from '../compile/kernel-signature';
import type { CompileOptionsInput } from '../compile/compile-options';
import { planFromArgs, type ParsedArg, type SimpleRunRequest } from './arg-syntax';
import type { ElementType } from './element-types';
import type { Expectation, Initializer, LaunchPlanInput } from './plan-schema';

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

/** The single-kernel request (core/plan/arg-syntax.ts), with the form's argument rows and the editor's options. */
export interface RunForm extends Omit<SimpleRunRequest, 'args' | 'options' | 'device'> {
  rows: ArgRow[];
  /** Compile options as the editor holds them; the architecture comes from the device the plan runs on. */
  options?: Omit<Partial<CompileOptionsInput>, 'arch'> & { arch?: string | null };
}

/**
 * The plan the form describes: the single-kernel plan of core/plan/arg-syntax.ts, where a buffer left
 * "none" is not uploaded (so the kernel sees the poison pattern) and an expectation is compared on read-back.
 */
export function planFromForm(form: RunForm): LaunchPlanInput {
  const { rows, options: editorOptions, ...request } = form;
  const { arch: _arch, ...options } = editorOptions ?? {};
  return planFromArgs({
    ...request,
    args: rows.map((r): ParsedArg => (r.kind === 'buffer' ? bufferArg(r) : { kind: 'scalar', name: r.name, type: r.type, value: scalarValue(r) })),
    options,
  });
}

function bufferArg(r: Extract<ArgRow, { kind: 'buffer' }>): ParsedArg {
  const init: Initializer | undefined =
    r.init === 'none'
      ? undefined
      : r.init === 'constant'
        ? { kind: 'constant', value: r.value }
        : r.init === 'iota'
          ? { kind: 'iota', start: r.value, step: 1 }
          : r.init === 'random'
            ? { kind: 'random', seed: 1, min: 0, max: 1 }
            : { kind: 'zeros' };
  const expect: Expectation | undefined =
    r.expect === 'constant'
      ? { kind: 'constant', value: r.expectValue }
      : r.expect === 'iota'
        ? { kind: 'iota', start: r.expectValue, step: r.expectStep }
        : undefined;
  return { kind: 'buffer', buffer: { name: r.name, type: r.type, count: r.count, ...(init ? { init } : {}) }, ...(expect ? { expect } : {}) };
}

/** 64-bit values stay strings (exact); others become numbers, and the schema refuses what is not one. */
function scalarValue(r: Extract<ArgRow, { kind: 'scalar' }>): number | string {
  const text = r.value.trim();
  if ((r.type === 'i64' || r.type === 'u64') && /^-?\d+$/.test(text)) return text;
  return text === '' ? text : Number.isFinite(Number(text)) ? Number(text) : text;
}
