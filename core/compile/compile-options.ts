import * as z from 'zod';

import { fileArgument } from '../process/argument-words';
import { registerLimitedBlockSize } from '../validate/occupancy';

const INCLUDE_PATH = /^[A-Za-z0-9_./+@%,:=-]+$/;

/**
 * What the user can set for a compile; the same model drives NVRTC and nvcc. There are no free-form
 * flags: every field maps to one allowed compiler option (the allow-list), whatever asks for it — the
 * CLI, the API, or a plan file someone else wrote.
 */
export const compileOptionsSchema = z
  .object({
    /** sm_XX (a cubin) or compute_XX (PTX only). */
    arch: z.string().regex(/^(sm|compute)_\d{2,3}[af]?$/, 'must look like sm_90 or compute_90'),
    debug: z.boolean().default(false),
    maxRegisters: z.number().int().min(16).max(255).nullable().default(null),
    /**
     * NAME or NAME=value. The value may be any one-line text: nvcc gets defines from a header the worker
     * writes (workbench-defines.h), never on its command line, which it hands to a shell (sh -c).
     */
    defines: z
      .array(
        z
          .string()
          .max(1024)
          .regex(/^[A-Za-z_]\w*(=[^\n\r\0]*)?$/, 'a define is NAME or NAME=value, on one line')
          .refine((d) => !d.endsWith('\\'), 'a define may not end in a backslash (it would continue onto the next line)'),
      )
      .max(64)
      .default([]),
    /**
     * Folders for #include. nvcc passes them to a shell, so only characters no shell treats specially:
     * letters, digits and _ . / + - @ % , : =.
     */
    includePaths: z
      .array(
        z
          .string()
          .min(1)
          .max(4096)
          .regex(
            INCLUDE_PATH,
            'an include path may hold only letters, digits and _ . / + - @ % , : = (no spaces, quotes, $ or backticks: nvcc hands it to a shell); link the folder to such a path',
          ),
      )
      .max(32)
      .default([]),
    fastMath: z.boolean().default(false),
    std: z.enum(['c++11', 'c++14', 'c++17', 'c++20']).default('c++17'),
  })
  .strict();
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
    ...(o.defines.length ? ['-include', NVCC_DEFINES_HEADER] : []),
    ...o.includePaths.map((p) => `-I${p}`),
  ];
}

/**
 * nvcc's whole command line for one compile in the worker's folder: a cubin for sm_XX, PTX for compute_XX, the
 * intermediate files kept in `files.keepDir` (the PTX comes from there). The source's name is the user's, so it
 * is passed as a path: a file named --run.cu or -odir.cu is compiled, not read as an option.
 */
export function nvccCommandArguments(o: CompileOptions, files: { source: string; output: string; keepDir: string }): string[] {
  return [
    o.arch.startsWith('sm_') ? '-cubin' : '-ptx',
    ...nvccArguments(o),
    '-keep',
    '-keep-dir',
    fileArgument(files.keepDir),
    '-o',
    fileArgument(files.output),
    fileArgument(files.source),
  ];
}

/** The header that carries the defines to nvcc, written beside the source in the worker's folder. */
export const NVCC_DEFINES_HEADER = 'workbench-defines.h';

/** `#define NAME value` lines for the defines: the preprocessor reads them, no shell ever does. */
export function definesHeader(defines: readonly string[]): string {
  return defines
    .map((d) => {
      const eq = d.indexOf('=');
      return eq < 0 ? `#define ${d} 1\n` : `#define ${d.slice(0, eq)} ${d.slice(eq + 1)}\n`;
    })
    .join('');
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
