/**
 * A line of code without the comment at its end, for quoting it in a sentence: Python's `#`, C's and CUDA's `//`,
 * looked for outside string literals. A line that is all comment, or a file of another language, stays as it is.
 */
export function withoutTrailingComment(file: string, code: string): string {
  const marker = /\.pyw?$/.test(file) ? '#' : /\.(cu|cuh|c|cc|cpp|cxx|h|hpp)$/.test(file) ? '//' : null;
  if (!marker) return code;
  let quote: string | null = null;
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (code.startsWith(marker, i)) {
      const kept = code.slice(0, i).trimEnd();
      return kept || code;
    }
  }
  return code;
}
