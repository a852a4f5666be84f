import type { TraceFrame } from '../explain/explain-paste';
import { withoutTrailingComment } from '../text/code-comment';

/** A place in the program's own code: the line to open. */
export interface SourcePlace {
  file: string;
  line: number;
  /** The code on that line, where the traceback printed it. */
  code: string | null;
  function: string | null;
}

export const VERDICT_KINDS = [
  'environment',
  'device-assert',
  'memory-fault',
  'kernel-fault',
  'out-of-memory',
  'host-crash',
  'cuda-error',
  'python-error',
  'leak',
  'race',
  'uninitialised-read',
  'sanitizer-finding',
  'clean',
  /** Exited cleanly, but a check that was asked for could not look (not installed, stopped by the budget). */
  'incomplete',
  'unexplained-exit',
  'stopped',
] as const;
export type VerdictKind = (typeof VERDICT_KINDS)[number];

/** What the diagnosis concluded: one sentence, the line to open, the kernel, the cause, what to do. */
export interface Verdict {
  kind: VerdictKind;
  /** The rule that concluded it. */
  rule: string;
  sentence: string;
  /** The line in the user's code: where the failing operation was called, or the allocation was made. */
  userLine: SourcePlace | null;
  /** Where the first run's traceback pointed, when the evidence showed the real line is elsewhere. */
  misleadingLine: SourcePlace | null;
  kernel: { name: string; file: string | null; line: number | null } | null;
  cause: string;
  whatToDo: string[];
}

/**
 * How a verdict is shown: ✓ only where every check asked for looked and found nothing; ! where the diagnosis could
 * not finish what it was asked (the CLI exits 2 then); ✗ where it found a failure (the CLI exits 1).
 */
export function verdictSeverity(kind: VerdictKind): { level: 'ok' | 'warn' | 'fail'; mark: string } {
  if (kind === 'clean') return { level: 'ok', mark: '✓' };
  if (kind === 'stopped') return { level: 'warn', mark: '■' };
  if (kind === 'incomplete') return { level: 'warn', mark: '!' };
  return { level: 'fail', mark: '✗' };
}

export const placeOf = (f: TraceFrame | null): SourcePlace | null => (f ? { file: f.file, line: f.line, code: f.code, function: f.function } : null);
/** A place as a sentence quotes it: `join.py:20 (joined = torch.cat([first, second]))`, its comment left to the line shown beside. */
export const placeText = (p: SourcePlace): string => {
  const code = p.code ? withoutTrailingComment(p.file, p.code) : null;
  return `${p.file.split('/').pop()}:${p.line}${code ? ` (${code.length > 80 ? `${code.slice(0, 77)}…` : code})` : ''}`;
};
