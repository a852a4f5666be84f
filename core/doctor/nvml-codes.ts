/**
 * NVML's numbers, as facts from nvml.h (NVML API reference: nvmlReturn_t, nvmlComputeMode_t,
 * nvmlClocksEventReasons). Only what the doctor reads.
 */

const RETURN_NAMES: Record<number, string> = {
  0: 'NVML_SUCCESS',
  1: 'NVML_ERROR_UNINITIALIZED',
  2: 'NVML_ERROR_INVALID_ARGUMENT',
  3: 'NVML_ERROR_NOT_SUPPORTED',
  4: 'NVML_ERROR_NO_PERMISSION',
  6: 'NVML_ERROR_NOT_FOUND',
  7: 'NVML_ERROR_INSUFFICIENT_SIZE',
  8: 'NVML_ERROR_INSUFFICIENT_POWER',
  9: 'NVML_ERROR_DRIVER_NOT_LOADED',
  10: 'NVML_ERROR_TIMEOUT',
  11: 'NVML_ERROR_IRQ_ISSUE',
  12: 'NVML_ERROR_LIBRARY_NOT_FOUND',
  13: 'NVML_ERROR_FUNCTION_NOT_FOUND',
  14: 'NVML_ERROR_CORRUPTED_INFOROM',
  15: 'NVML_ERROR_GPU_IS_LOST',
  16: 'NVML_ERROR_RESET_REQUIRED',
  17: 'NVML_ERROR_OPERATING_SYSTEM',
  18: 'NVML_ERROR_LIB_RM_VERSION_MISMATCH',
  19: 'NVML_ERROR_IN_USE',
  20: 'NVML_ERROR_MEMORY',
  21: 'NVML_ERROR_NO_DATA',
  999: 'NVML_ERROR_UNKNOWN',
};

export const NVML_NOT_SUPPORTED = 3;
export const NVML_NO_PERMISSION = 4;
export const NVML_GPU_IS_LOST = 15;
export const NVML_RESET_REQUIRED = 16;
export const NVML_LIB_RM_VERSION_MISMATCH = 18;
/** Ours, not NVML's: this driver's NVML lacks the entry point (native/src/health.cc). */
export const NVML_SYMBOL_MISSING = -1;

export function nvmlReturnName(code: number): string {
  if (code === NVML_SYMBOL_MISSING) return 'not in this driver';
  return RETURN_NAMES[code] ?? `NVML error ${code}`;
}

/** nvmlComputeMode_t, which CUcomputemode (CU_DEVICE_ATTRIBUTE_COMPUTE_MODE) mirrors value for value. */
export const COMPUTE_MODES: Record<number, string> = {
  0: 'DEFAULT',
  1: 'EXCLUSIVE_THREAD',
  2: 'PROHIBITED',
  3: 'EXCLUSIVE_PROCESS',
};

/** nvmlClocksEventReason* bits, and what each means for a timing or a run. */
export const CLOCK_EVENT_REASONS = [
  { bit: 0x1, name: 'GPU idle', kind: 'normal' },
  { bit: 0x2, name: 'application clocks setting', kind: 'normal' },
  { bit: 0x4, name: 'software power cap', kind: 'power' },
  { bit: 0x8, name: 'hardware slowdown', kind: 'hardware' },
  { bit: 0x10, name: 'sync boost', kind: 'normal' },
  { bit: 0x20, name: 'software thermal slowdown', kind: 'thermal' },
  { bit: 0x40, name: 'hardware thermal slowdown', kind: 'hardware' },
  { bit: 0x80, name: 'hardware power brake slowdown', kind: 'hardware' },
  { bit: 0x100, name: 'display clock setting', kind: 'normal' },
] as const;
