/**
 * Words as a POSIX shell would read them back into the same words (splitCommandLine, core/text/split-command.ts, does):
 * a word of plain characters as it is, any other in single quotes, a single quote in it as '\''. For advice that shows
 * a command to type.
 */
export function shellWords(argv: readonly string[]): string {
  return argv.map((word) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)).join(' ');
}

/** Names as a sentence lists them: `a`, `a and b`, `a, b and c`. */
export function andList(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
}
