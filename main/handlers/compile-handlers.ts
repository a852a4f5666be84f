import { ApiError } from '../../core/api/channels';
import { compileOptionsSchema } from '../../core/compile/compile-options';
import { CompileStoppedError } from '../compile/compile-service';
import { errorCode } from '../process/supervised-process';
import { completeKernelFacts } from '../services/kernel-facts-service';
import type { Workbench } from '../workbench';
import type { HandlerGroup } from './handler-support';

/** Compiling: the editor's compiles, the compile cache, SASS, and Cancel. */
export function compileHandlers(
  workbench: Pick<Workbench, 'compiler' | 'pool' | 'defaultArch'>,
): HandlerGroup<'compile.run' | 'compile.cached' | 'compile.sass' | 'compile.cancel'> {
  return {
    'compile.run': async (request, { signal }) => {
      const options = compileOptionsSchema.parse({ ...request.options, arch: request.options.arch ?? (await workbench.defaultArch()) });
      try {
        const compiled = await workbench.compiler.compile(
          { source: request.source, sourceName: request.sourceName, options, backend: request.backend ?? 'auto' },
          undefined,
          request.document ?? null,
          signal,
        );
        const { image: _image, ...result } = await completeKernelFacts(compiled, workbench.pool);
        return result;
      } catch (error) {
        if (error instanceof CompileStoppedError) throw new ApiError(error.reason, /newer edit/.test(error.reason) ? 'COMPILE_SUPERSEDED' : 'COMPILE_STOPPED');
        throw new ApiError(error instanceof Error ? error.message : String(error), errorCode(error) ?? 'COMPILE_FAILED');
      }
    },
    'compile.cached': async (request) => {
      const options = compileOptionsSchema.parse({ ...request.options, arch: request.options.arch ?? (await workbench.defaultArch()) });
      const cached = await workbench.compiler.cached({ source: request.source, sourceName: request.sourceName, options, backend: request.backend ?? 'auto' });
      if (!cached) return null;
      const { image: _image, ...result } = await completeKernelFacts(cached, workbench.pool);
      return result;
    },
    'compile.sass': async ({ key }) => ({ sass: await workbench.compiler.disassemble(key) }),
    'compile.cancel': async () => ({ cancelled: workbench.compiler.cancel() }),
  };
}
