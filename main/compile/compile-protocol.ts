import { z } from 'zod';

import { compileOptionsSchema } from '../../core/compile/compile-options';
import type { CompileResult } from '../../core/compile/compile-result';

/** Host <-> compile worker. Lives in main/ because only the host and its worker speak it. */
import { MAX_SOURCE_BYTES } from '../../core/limits';

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
