import * as z from 'zod';

import { MAX_SOURCE_BYTES } from '../limits';
import { compileOptionsSchema } from './compile-options';
import type { CompileResult } from './compile-result';

/** Host <-> compile worker, declared once: each request's schema (the worker checks it) and its result. */

export const compileRequestSchema = z.object({
  id: z.number().int().nonnegative(),
  type: z.literal('compile'),
  source: z.string().max(MAX_SOURCE_BYTES),
  sourceName: z.string().min(1).max(4096),
  options: compileOptionsSchema,
  backend: z.enum(['auto', 'nvrtc', 'nvcc']).default('auto'),
});
export type CompileRequest = z.infer<typeof compileRequestSchema>;

export const disassembleRequestSchema = z.object({
  id: z.number().int().nonnegative(),
  type: z.literal('disassemble'),
  image: z.custom<Uint8Array>((v) => v instanceof Uint8Array && v.byteLength > 0, 'image must be bytes'),
});
export type CompileRequestInput = Omit<z.input<typeof compileRequestSchema>, 'id' | 'type'>;

/** The result, plus the image for the runner (never sent to the renderer). */
export type CompileOutput = Omit<CompileResult, 'cached' | 'key'> & { image: Uint8Array | null };

export interface CompileWorkerStatus {
  backends: ('nvrtc' | 'nvcc')[];
  nvrtcPath: string | null;
  nvrtcVersion: number | null;
  nvccPath: string | null;
  nvccVersion: string | null;
}

/** The compile worker's requests and what each answers (core/process/child-reply.ts carries them). */
export type CompileWorkerProtocol = {
  compile: { request: CompileRequestInput; result: CompileOutput };
  disassemble: { request: { image: Uint8Array }; result: string | null };
};
