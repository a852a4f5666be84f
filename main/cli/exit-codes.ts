/** Exit codes of the gpu-workbench CLI, documented in the README. */
export const EXIT = {
  ok: 0,
  /** The run, compile or check failed (a CUDA error, a compile error, a failing doctor check). */
  failed: 1,
  /** No driver, no device, no compiler: nothing the input could change. */
  unavailable: 2,
  /** The command line or an input file is wrong. */
  usage: 64,
} as const;
