import type { CudaErrorInfo } from '../../core/runner/run-result';

/** Normalises whatever an addon call threw into { library, api, code, name, message }. */
export function toCudaError(error: unknown, fallbackApi = 'workbench'): CudaErrorInfo {
  if (typeof error === 'object' && error !== null && 'api' in error && 'code' in error) {
    const e = error as Partial<CudaErrorInfo> & { message?: string };
    return {
      library: String(e.library ?? 'cuda'),
      api: String(e.api),
      code: Number(e.code),
      name: String(e.name ?? 'UNKNOWN'),
      message: String(e.message ?? ''),
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    library: 'workbench',
    api: fallbackApi,
    code: -1,
    name: error instanceof RangeError || error instanceof TypeError ? 'WORKBENCH_INVALID_ARGUMENT' : 'WORKBENCH_ERROR',
    message,
  };
}
