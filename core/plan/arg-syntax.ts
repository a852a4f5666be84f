import type { CompileOptionsInput } from '../compile/compile-options';
import type { Dim3 } from '../dims';
import { fail, ok, type Result } from '../result';
import { isElementType, type ElementType, ELEMENT_TYPE_NAMES } from './element-types';
import type { BufferSpec, Expectation, Initializer, KernelArg, LaunchPlanInput, Step } from './plan-schema';

/**
 * The CLI's compact argument syntax, one `--arg` per kernel parameter, in order:
 *   out:f32[1024]            a buffer of 1024 floats, allocated and never uploaded: it holds the poison
 *                            pattern until a kernel writes it, as cudaMalloc'd memory holds garbage
 *   out:f32[1024]=0          ... zero-filled
 *   a:f32[1024]=1.5          ... filled with a constant
 *   a:f32[1024]=iota         ... 0, 1, 2, ...   (iota(start,step) too)
 *   a:f32[1024]=rand(7)      ... uniform in [0,1) from seed 7   (rand(seed,min,max) too)
 *   n:i32=1024               a scalar
 */
export type ParsedArg =
  | {
      kind: 'buffer';
      /** A buffer with no initializer is allocated but never uploaded: the kernel sees the poison pattern. */
      buffer: BufferSpec;
      /** What the read-back should hold. */
      expect?: Expectation;
    }
  | { kind: 'scalar'; name: string; type: ElementType; value: number | string };

const ARG = /^([A-Za-z_][A-Za-z0-9_]*):([a-z0-9]+)(?:\[([^\]]*)\])?(?:=(.*))?$/;
const CALL = /^(iota|rand|random)(?:\(([^)]*)\))?$/;

export function parseArg(text: string): Result<ParsedArg> {
  const m = ARG.exec(text.trim());
  if (!m) {
    return fail(`--arg "${text}" is not of the form name:type[count]=init or name:type=value (for example out:f32[1024]=0 or n:i32=1024)`);
  }
  const [, name, type, countText, initText] = m as unknown as [string, string, string, string | undefined, string | undefined];
  if (!isElementType(type)) return fail(`--arg "${text}": unknown element type "${type}"; use one of ${ELEMENT_TYPE_NAMES.join(', ')}`);
  if (countText === undefined) {
    if (initText === undefined || initText === '') return fail(`--arg "${text}": a scalar needs a value, as in ${name}:${type}=1024`);
    const value = parseScalarValue(initText, type);
    if (!value.ok) return fail(`--arg "${text}": ${value.error}`);
    return ok({ kind: 'scalar', name, type, value: value.value });
  }
  if (!/^\d+$/.test(countText.trim())) return fail(`--arg "${text}": the element count "${countText}" is not a positive whole number`);
  const count = Number(countText.trim());
  if (count < 1) return fail(`--arg "${text}": a buffer needs at least 1 element`);
  if (!Number.isSafeInteger(count)) return fail(`--arg "${text}": ${countText} elements is more than any device can hold`);
  if (initText === undefined) return ok({ kind: 'buffer', buffer: { name, type, count } });
  const init = parseInitializer(initText);
  if (!init.ok) return fail(`--arg "${text}": ${init.error}`);
  return ok({ kind: 'buffer', buffer: { name, type, count, init: init.value } });
}

function parseScalarValue(text: string, type: ElementType): Result<number | string> {
  const t = text.trim();
  if (type === 'i64' || type === 'u64') {
    if (!/^-?\d+$/.test(t)) return fail(`"${t}" is not an integer`);
    return ok(t);
  }
  const value = Number(t);
  if (t === '' || !Number.isFinite(value)) return fail(`"${t}" is not a number`);
  if (!type.startsWith('f') && type !== 'bf16' && !Number.isInteger(value)) return fail(`"${t}" is not an integer, and ${type} is an integer type`);
  return ok(value);
}

function parseInitializer(text: string): Result<Initializer> {
  const t = text.trim();
  const call = CALL.exec(t);
  if (call) {
    const params = (call[2] ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '')
      .map(Number);
    if (params.some((p) => !Number.isFinite(p))) return fail(`the initializer "${t}" has a parameter that is not a number`);
    if (call[1] === 'iota') return ok({ kind: 'iota', start: params[0] ?? 0, step: params[1] ?? 1 });
    const seed = params[0] ?? 1;
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) return fail('the random seed must be an integer in [0, 2^32)');
    return ok({ kind: 'random', seed, min: params[1] ?? 0, max: params[2] ?? 1 });
  }
  const value = Number(t);
  if (t === '' || !Number.isFinite(value)) return fail(`the initializer "${t}" is not a number, iota(start,step) or rand(seed,min,max)`);
  return ok(value === 0 ? { kind: 'zeros' } : { kind: 'constant', value });
}

export interface SimpleRunRequest {
  source: string;
  sourceName: string;
  kernel: string;
  grid: Dim3;
  block: Dim3;
  sharedBytes: number;
  args: ParsedArg[];
  options?: Omit<CompileOptionsInput, 'arch'>;
  device?: number;
  warmup?: number;
  repeats?: number;
  /** Extra runs compared bit for bit with the first (0: no determinism check; absent: the default). */
  determinismRuns?: number;
}

/** The plan a single-kernel run implies (CLI flags, the run form): alloc every buffer, upload those with an initializer, launch, sync, download, free. */
export function planFromArgs(request: SimpleRunRequest): LaunchPlanInput {
  const bufferArgs = request.args.flatMap((a) => (a.kind === 'buffer' ? [a] : []));
  const buffers = bufferArgs.map((a) => a.buffer);
  const kernelArgs: KernelArg[] = request.args.map((a) => (a.kind === 'buffer' ? { buffer: a.buffer.name } : { scalar: { type: a.type, value: a.value } }));
  const steps: Step[] = [
    ...buffers.map((b): Step => ({ op: 'alloc', buffer: b.name })),
    ...bufferArgs.filter((a) => a.buffer.init).map((a): Step => ({ op: 'upload', buffer: a.buffer.name })),
    {
      op: 'launch',
      kernel: 'main',
      grid: [...request.grid],
      block: [...request.block],
      sharedBytes: request.sharedBytes,
      args: kernelArgs,
      warmup: request.warmup ?? 0,
      repeats: request.repeats ?? 1,
    },
    { op: 'sync' },
    ...bufferArgs.map((a): Step => ({ op: 'download', buffer: a.buffer.name, ...(a.expect ? { expect: a.expect } : {}) })),
    ...buffers.map((b): Step => ({ op: 'free', buffer: b.name })),
  ];
  return {
    version: 1,
    device: request.device ?? 0,
    kernels: [{ id: 'main', entry: request.kernel, source: request.source, sourceName: request.sourceName, options: request.options ?? {} }],
    buffers,
    steps,
    ...(request.determinismRuns !== undefined ? { checks: { determinismRuns: request.determinismRuns } } : {}),
  };
}
