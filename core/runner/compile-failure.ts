import type { Diagnostic } from '../compile/diagnostics';

/**
 * What a compile that failed said, errors first: "broken.cu:3:17: error: …" for each diagnostic with a
 * place, then the compiler's own log. An error the workbench found itself (static shared memory over the
 * limit) is in no log: without this it would be lost behind ptxas' info lines.
 */
export function compileFailureDetail(diagnostics: Diagnostic[], log: string): string {
  const ranked = [...diagnostics].sort((a, b) => rank(a) - rank(b));
  const lines = ranked
    .filter((d) => d.severity !== 'info')
    .map((d) => `${d.line > 0 ? `${d.file}:${d.line}${d.column > 0 ? `:${d.column}` : ''}: ` : ''}${d.severity}: ${d.message}`);
  const rest = log
    .trim()
    .split('\n')
    .filter((l) => l.trim() && !ranked.some((d) => repeats(l, d.message)));
  const all = [...lines, ...rest];
  return all.length ? all.join('\n') : 'The compiler failed without a message.';
}

const rank = (d: Diagnostic) => (d.severity === 'error' ? 0 : d.severity === 'warning' ? 1 : 2);

/** A log line that says what a diagnostic says (its message, or all of the line's own words inside a longer message). */
function repeats(line: string, message: string): boolean {
  if (line.includes(message)) return true;
  const words = line.replace(/^\s*(ptxas|nvlink|nvcc)\s+(error|warning|fatal)\s*:\s*/, '').trim();
  return words.length > 0 && words !== line.trim() && message.includes(words);
}

/**
 * A failed compile's diagnosis lines less those that repeat a diagnostic shown above them (the result shows the
 * compiler's problems, each on its line, and then the rest of its log once).
 */
export function specificsBeyondDiagnostics(specifics: string[], diagnostics: Pick<Diagnostic, 'message' | 'severity'>[]): string[] {
  const shown = diagnostics.filter((d) => d.severity !== 'info');
  return specifics.filter((s) => !shown.some((d) => repeats(s, d.message)));
}
