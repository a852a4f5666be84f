/** Exit codes of the gpu-workbench CLI, documented in the README. */
export const EXIT = {
  ok: 0,
  /** The run, compile or check failed (a CUDA error, a compile error, a failing doctor check). */
  failed: 1,
  /** No driver, no device, no compiler: nothing the input could change. */
  unavailable: 2,
  /** `check` only: nothing failed, but a check could not run (no compute-sanitizer, no counters…): not a pass. */
  incomplete: 3,
  /** The command line or an input file is wrong. */
  usage: 64,
} as const;
