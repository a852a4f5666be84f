import { z } from 'zod';

/** Host <-> compile worker. Lives in main/ because only the host and its worker speak it. */
export const compileRequestSchema = z.object({
  id: z.number().int().nonnegative(),
  type: z.literal('compile'),
  source: z.string().max(16 * 1024 * 1024),
  sourceName: z.string().min(1).max(4096),
  arch: z.string().regex(/^(sm|compute)_\d{2,3}[af]?$/, 'must look like sm_90 or compute_90'),
  options: z.array(z.string().max(4096)).max(256),
  kernels: z.array(z.string().min(1).max(1024)).max(64),
  backend: z.enum(['auto', 'nvrtc', 'nvcc']).default('auto'),
});
export type CompileRequest = z.infer<typeof compileRequestSchema>;

export interface CompileOutput {
  ok: boolean;
  backend: 'nvrtc' | 'nvcc';
  /** The exact compiler invocation, for the record and for reproducing it by hand. */
  command: string;
  log: string;
  image: Uint8Array | null;
  ptx: string | null;
  /** Kernel name as written -> symbol in the image (null when not found). */
  symbols: Record<string, string | null>;
  allSymbols: string[];
  ms: number;
}

export interface CompileWorkerStatus {
  backends: ('nvrtc' | 'nvcc')[];
  nvrtcPath: string | null;
  nvccPath: string | null;
}
