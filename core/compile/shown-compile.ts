import type { CompileResult } from './compile-result';

/**
 * The compile the kernel facts, the launch findings and the PTX show while the text is being typed: the
 * latest, unless it failed after an earlier success, when the last good one stays, marked stale, until
 * the next compile succeeds. Deleting one ";" never blanks the panels.
 */
export function shownCompile(latest: CompileResult | null, lastGood: CompileResult | null): { result: CompileResult | null; stale: boolean } {
  if (latest && !latest.ok && lastGood) return { result: lastGood, stale: true };
  return { result: latest ?? lastGood, stale: false };
}
