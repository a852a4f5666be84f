import { z } from 'zod';

import { registerLimitedBlockSize } from '../validate/occupancy';

/** What the user can set for a compile; the same model drives NVRTC and nvcc. */
export const compileOptionsSchema = z.object({
  /** sm_XX (a cubin) or compute_XX (PTX only). */
  arch: z.string().regex(/^(sm|compute)_\d{2,3}[af]?$/, 'must look like sm_90 or compute_90'),
  debug: z.boolean().default(false),
  maxRegisters: z.number().int().min(16).max(255).nullable().default(null),
  defines: z
    .array(z.string().regex(/^[A-Za-z_]\w*(=[^\s]*)?$/, 'a define is NAME or NAME=value'))
    .max(64)
    .default([]),
  includePaths: z
    .array(
      z
        .string()
        .min(1)
        .max(4096)
        .refine((p) => !p.includes('\0'), 'no NUL bytes'),
    )
    .max(32)
    .default([]),
  fastMath: z.boolean().default(false),
  std: z.enum(['c++11', 'c++14', 'c++17', 'c++20']).default('c++17'),
});
export type CompileOptions = z.infer<typeof compileOptionsSchema>;
export type CompileOptionsInput = z.input<typeof compileOptionsSchema>;

/** -lineinfo is always on (it maps faults and sanitizer findings to lines); ptxas -v gives resources. */
export function nvrtcArguments(o: CompileOptions): string[] {
  return [
    `--gpu-architecture=${o.arch}`,
    '-lineinfo',
    '--ptxas-options=-v',
    `--std=${o.std}`,
    ...(o.debug ? ['-G'] : []),
    ...(o.maxRegisters ? [`--maxrregcount=${o.maxRegisters}`] : []),
    ...(o.fastMath ? ['--use_fast_math'] : []),
    ...o.defines.map((d) => `-D${d}`),
    ...o.includePaths.map((p) => `-I${p}`),
  ];
}

export function nvccArguments(o: CompileOptions): string[] {
  return [
    `-arch=${o.arch}`,
    '-lineinfo',
    '-Xptxas',
    '-v',
    `-std=${o.std}`,
    ...(o.debug ? ['-G'] : []),
    ...(o.maxRegisters ? [`-maxrregcount=${o.maxRegisters}`] : []),
    ...(o.fastMath ? ['--use_fast_math'] : []),
    ...o.defines.map((d) => `-D${d}`),
    ...o.includePaths.map((p) => `-I${p}`),
  ];
}

/**
 * Registers per thread -> the most threads a block can have before registers run out: registers are
 * allocated per warp in units of 256, and a block's warps are counted in fours (one per SM
 * sub-partition), against 65536 registers per block (every architecture since Volta; cuda_occupancy.h).
 * Measured on an H200, the driver agrees: 40 -> 1024, 80 -> 768, 127 and 128 -> 512. The driver's own
 * figure, when a GPU is present, is authoritative.
 */
export function registerLimitedThreads(registers: number, registersPerBlock = 65536): number {
  return registerLimitedBlockSize({ maxThreadsPerBlock: 1024, warpSize: 32, regsPerBlock: registersPerBlock }, registers);
}
