import * as z from 'zod';

import { compileOptionsSchema } from '../compile/compile-options';
import { MAX_SOURCE_BYTES } from '../limits';
import { ELEMENT_TYPE_NAMES, elementSize, type ElementType } from './element-types';

/** A run, declared once: the validator, runner, event log and bundle all read this (ARCHITECTURE.md §5). */

export const MAX_BUFFER_BYTES = 2 ** 40; // 1 TiB: larger than any device; anything above is a typo
const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be a C identifier of at most 64 characters');

const elementType = z.enum(ELEMENT_TYPE_NAMES as [ElementType, ...ElementType[]]);
const dim = z.number().int().min(1).max(0xffffffff);
const dim3 = z.tuple([dim, dim, dim]);

export const initializerSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('zeros') }),
  z.object({ kind: z.literal('constant'), value: z.number() }),
  z.object({ kind: z.literal('iota'), start: z.number().default(0), step: z.number().default(1) }),
  z.object({
    kind: z.literal('random'),
    seed: z.number().int().min(0).max(0xffffffff).default(1),
    min: z.number().default(0),
    max: z.number().default(1),
  }),
  /** Raw little-endian elements from a file on the machine that runs the plan (the CLI resolves it next to the plan). */
  z.object({ kind: z.literal('file'), path: z.string().min(1).max(4096), offsetBytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0) }),
]);
export type Initializer = z.infer<typeof initializerSchema>;

export const bufferSchema = z.object({
  name: identifier,
  type: elementType,
  count: z
    .number({ error: 'must be a whole number of elements' })
    .int('must be a whole number of elements')
    .min(1, 'must be at least 1 element')
    .max(Number.MAX_SAFE_INTEGER, 'is more elements than any device can hold'),
  /**
   * How the host fills it before the kernel runs. None: allocated and never uploaded, so a kernel that reads
   * it before writing it sees the poison pattern, as it would see garbage after a bare cudaMalloc.
   */
  init: initializerSchema.optional(),
});
export type BufferSpec = z.infer<typeof bufferSchema>;

const NOT_A_NUMBER = 'must be a number (64-bit integers may be given as a string of digits)';
export const kernelArgSchema = z.union([
  z.object({ buffer: identifier }),
  z.object({
    scalar: z.object({
      type: elementType,
      value: z.union([z.number().refine(Number.isFinite, NOT_A_NUMBER), z.string().regex(/^-?\d+$/, NOT_A_NUMBER)], { error: NOT_A_NUMBER }),
    }),
  }),
]);
export type KernelArg = z.infer<typeof kernelArgSchema>;

/** What a read-back buffer should hold: found wrong, the first mismatching index is named. */
export const expectationSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('constant'), value: z.number() }),
  z.object({ kind: z.literal('iota'), start: z.number().default(0), step: z.number().default(1) }),
  /** Another buffer read back earlier in the plan: a reference kernel's output on the same inputs. */
  z.object({ kind: z.literal('buffer'), buffer: identifier }),
]);
export type Expectation = z.infer<typeof expectationSchema>;

/** |actual − expected| ≤ abs + rel·|expected|; integers compare exactly unless given. */
export const toleranceSchema = z.object({ abs: z.number().min(0).default(0), rel: z.number().min(0).default(0) });
export type Tolerance = z.infer<typeof toleranceSchema>;

/** Checks the runner makes that a bare host program would not. */
export const runChecksSchema = z.object({
  /** Bytes of known pattern before and after every buffer; a kernel that writes into them wrote out of bounds. */
  guardBytes: z.number().int().min(0).max(65536).multipleOf(256, 'must be a multiple of 256 (keeps buffers aligned as cuMemAlloc does)').default(256),
  /** Fill new allocations with 0xFF bytes (NaN for floats, −1 for integers), so reads of memory never written show. */
  poison: z.boolean().default(true),
  /**
   * Runs of the same launches on the same inputs after the first, compared bitwise with it: a race or an
   * uninitialised read often shows only as results that change. Absent: one, when the buffers total at most
   * 256 MiB (core/plan/determinism.ts). 0 turns it off.
   */
  determinismRuns: z.number().int().min(0).max(16).optional(),
});
export type RunChecks = z.infer<typeof runChecksSchema>;

export const kernelSchema = z.object({
  id: identifier,
  /** The __global__ function's name as written in the source (not mangled). */
  entry: z.string().min(1).max(1024),
  source: z.string().max(MAX_SOURCE_BYTES),
  sourceName: z.string().max(4096).default('kernel.cu'),
  /** Compile options; the architecture comes from the device the plan runs on. */
  options: compileOptionsSchema.omit({ arch: true }).partial().default({}),
});

export const stepSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('alloc'), buffer: identifier }),
  z.object({ op: z.literal('upload'), buffer: identifier }),
  z.object({
    op: z.literal('launch'),
    kernel: identifier,
    grid: dim3,
    block: dim3,
    sharedBytes: z.number().int().min(0).max(0xffffffff).default(0),
    args: z.array(kernelArgSchema).max(256),
    warmup: z.number().int().min(0).max(10000).default(0),
    repeats: z.number().int().min(1).max(10000).default(1),
  }),
  z.object({ op: z.literal('sync') }),
  z.object({ op: z.literal('download'), buffer: identifier, expect: expectationSchema.optional(), tolerance: toleranceSchema.optional() }),
  z.object({ op: z.literal('free'), buffer: identifier }),
]);
export type Step = z.infer<typeof stepSchema>;
export type LaunchStep = Extract<Step, { op: 'launch' }>;

export const launchPlanSchema = z
  .object({
    version: z.literal(1),
    device: z.number().int().min(0).max(1023).default(0),
    kernels: z.array(kernelSchema).min(1).max(64),
    buffers: z.array(bufferSchema).max(256),
    steps: z.array(stepSchema).min(1).max(10000),
    checks: runChecksSchema.default({ guardBytes: 256, poison: true }),
  })
  .superRefine((plan, ctx) => {
    const buffers = new Map(plan.buffers.map((b) => [b.name, b]));
    const kernels = new Set(plan.kernels.map((k) => k.id));
    if (buffers.size !== plan.buffers.length) ctx.addIssue({ code: 'custom', message: 'buffer names must be unique', path: ['buffers'] });
    if (kernels.size !== plan.kernels.length) ctx.addIssue({ code: 'custom', message: 'kernel ids must be unique', path: ['kernels'] });
    plan.buffers.forEach((b, i) => {
      if (bytesOf(b) > MAX_BUFFER_BYTES) {
        ctx.addIssue({ code: 'custom', message: `buffer "${b.name}" would need more than 1 TiB`, path: ['buffers', i, 'count'] });
      }
    });
    plan.steps.forEach((step, i) => {
      const names = step.op === 'launch' ? step.args.flatMap((a) => ('buffer' in a ? [a.buffer] : [])) : 'buffer' in step ? [step.buffer] : [];
      for (const name of names) {
        if (!buffers.has(name))
          ctx.addIssue({ code: 'custom', message: `step ${i + 1} (${step.op}) names buffer "${name}", which the plan does not declare`, path: ['steps', i] });
      }
      if (step.op === 'upload' && buffers.has(step.buffer) && !buffers.get(step.buffer)!.init) {
        ctx.addIssue({
          code: 'custom',
          message: `step ${i + 1} uploads buffer "${step.buffer}", which has no initializer: give it one ({"kind": "zeros"} for zeros), or drop the upload step to leave it unwritten`,
          path: ['steps', i],
        });
      }
      if (step.op === 'download' && step.expect?.kind === 'buffer') {
        const reference = step.expect.buffer;
        const readBefore = plan.steps.slice(0, i).some((s) => s.op === 'download' && s.buffer === reference);
        if (!buffers.has(reference) || !readBefore)
          ctx.addIssue({
            code: 'custom',
            message: `step ${i + 1} compares "${step.buffer}" with "${reference}", which ${buffers.has(reference) ? 'is not read back by an earlier step' : 'the plan does not declare'}`,
            path: ['steps', i, 'expect'],
          });
        else if (buffers.get(reference)!.count !== buffers.get(step.buffer)?.count)
          ctx.addIssue({ code: 'custom', message: `step ${i + 1} compares buffers of different lengths`, path: ['steps', i, 'expect'] });
      }
      if (step.op === 'launch' && !kernels.has(step.kernel)) {
        ctx.addIssue({
          code: 'custom',
          message: `step ${i + 1} launches kernel "${step.kernel}", which the plan does not declare`,
          path: ['steps', i, 'kernel'],
        });
      }
    });
  });
export type LaunchPlan = z.infer<typeof launchPlanSchema>;
export type LaunchPlanInput = z.input<typeof launchPlanSchema>;

export const bytesOf = (buffer: { type: ElementType; count: number }): number => buffer.count * elementSize(buffer.type);

/** Every problem zod found, one line each, with where it was. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') + ': ' : ''}${issue.message}`).join('\n');
}
