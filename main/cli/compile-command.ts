import { basename, resolve } from 'node:path';

import type { Command } from 'commander';

import { compileOptionsSchema } from '../../core/compile/compile-options';
import { NO_GPU_ARCH } from '../../core/devices';
import { describeIssues } from '../../core/plan/plan-schema';
import { CompileStoppedError } from '../compile/compile-service';
import { errorCode } from '../process/supervised-process';
import { completeKernelFacts } from '../services/kernel-facts-service';
import { readTextFile } from '../services/plan-files';
import type { Workbench } from '../workbench';
import { fromUserFile, intOption, print, repeatable, UsageError, withWorkbench } from './cli-support';
import { EXIT } from './exit-codes';
import { renderCompile } from './render-compile';

/** `gpu-workbench compile`: a .cu file compiled as the editor compiles it, with its diagnostics and each kernel’s resources. */
export function registerCompileCommand(program: Command): void {
  program
    .command('compile')
    .description('Compile a .cu file and print its diagnostics and each kernel’s resources (what the editor shows).')
    .argument('<file.cu>', 'CUDA C++ source file')
    .option('--arch <sm_XX>', `target architecture (default: the first device’s, or ${NO_GPU_ARCH} without a GPU)`)
    .option('-G, --debug', 'device debug information (-G)')
    .option('--maxrregcount <n>', 'cap registers per thread', intOption('--maxrregcount', 16, 255))
    .option('-D, --define <NAME[=value]>', 'a preprocessor define (repeatable)', repeatable, [] as string[])
    .option('-I, --include <dir>', 'an include path (repeatable)', repeatable, [] as string[])
    .option('--use-fast-math', 'fast, less accurate math')
    .option('--std <c++NN>', 'C++ standard', 'c++17')
    .option('--backend <nvrtc|nvcc|auto>', 'which compiler', 'auto')
    .option('--ptx', 'also print the PTX')
    .option('--sass', 'also print the SASS (needs cuobjdump or nvdisasm)')
    .option('--no-cache', 'skip the compile cache')
    .option('--timeout <ms>', 'stop the compiler after this long', intOption('--timeout', 100, 3_600_000), 120_000)
    .option('--json', 'machine-readable output')
    .action((file: string, opts: CompileCommandOptions) => withWorkbench((workbench) => compileFile(workbench, file, opts), { compileCache: opts.cache }));
}

interface CompileCommandOptions {
  arch?: string;
  debug?: boolean;
  maxrregcount?: number;
  define: string[];
  include: string[];
  useFastMath?: boolean;
  std: string;
  backend: string;
  ptx?: boolean;
  sass?: boolean;
  cache: boolean;
  timeout: number;
  json?: boolean;
}

async function compileFile(workbench: Workbench, file: string, opts: CompileCommandOptions): Promise<void> {
  const source = await fromUserFile(() => readTextFile(file, 'Source file'));
  if (!['auto', 'nvrtc', 'nvcc'].includes(opts.backend)) throw new UsageError('--backend is nvrtc, nvcc or auto.');
  const options = compileOptionsSchema.safeParse({
    arch: opts.arch ?? (await workbench.defaultArch()),
    debug: !!opts.debug,
    maxRegisters: opts.maxrregcount ?? null,
    defines: opts.define,
    includePaths: opts.include.map((p) => resolve(p)),
    fastMath: !!opts.useFastMath,
    std: opts.std,
  });
  if (!options.success) throw new UsageError(describeIssues(options.error));
  try {
    const result = await completeKernelFacts(
      await workbench.compiler.compile({ source, sourceName: basename(file), options: options.data, backend: opts.backend as 'auto' }, opts.timeout),
      workbench.pool,
    );
    const { image: _image, ...shown } = result;
    const sass = opts.sass && result.image && result.image[0] === 0x7f ? await workbench.compiler.disassembleImage(result.image) : null;
    print(!!opts.json, { ...shown, sass }, () =>
      [
        renderCompile(result, basename(file)),
        ...(opts.ptx && result.ptx ? ['', result.ptx] : []),
        ...(opts.sass
          ? [
              '',
              sass ??
                (result.ok
                  ? '(no SASS: neither cuobjdump nor nvdisasm was found beside nvcc, on PATH or in /usr/local/cuda/bin)'
                  : '(no SASS: the compile failed)'),
            ]
          : []),
      ].join('\n'),
    );
    process.exitCode = result.ok ? EXIT.ok : EXIT.failed;
  } catch (error) {
    if (error instanceof CompileStoppedError) {
      console.error(`✗ ${error.reason}`);
      process.exitCode = EXIT.failed;
      return;
    }
    const code = errorCode(error);
    if (code === 'WORKBENCH_NO_COMPILER' || code === 'WORKBENCH_NVRTC_NOT_LOADED') {
      console.error(`✗ ${(error as Error).message}`);
      process.exitCode = EXIT.unavailable;
      return;
    }
    throw error;
  }
}
