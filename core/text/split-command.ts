/**
 * A command line as a person types it, split into the program and its arguments the way a POSIX shell
 * splits words: blanks separate, '…' keeps everything literally, "…" keeps blanks and lets \ escape " \ $ `,
 * and \ outside quotes escapes the next character. Nothing is expanded: no variables, globs or `$(…)` —
 * the words go to the program as typed, never through a shell.
 */
export function splitCommandLine(line: string): { ok: true; argv: string[] } | { ok: false; error: string } {
  const argv: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return { ok: false, error: `A ' at position ${i + 1} is never closed.` };
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '"\\$`'.includes(line[j + 1]!)) j++;
        word += line[j];
      }
      if (j >= line.length) return { ok: false, error: `A " at position ${i + 1} is never closed.` };
      inWord = true;
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= line.length) return { ok: false, error: 'The line ends in a \\ with nothing after it.' };
      word += line[++i];
      inWord = true;
    } else if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) argv.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) argv.push(word);
  if (!argv.length) return { ok: false, error: 'Type the program to run, and its arguments.' };
  return { ok: true, argv };
}

/** The environment as typed, one NAME=value a line; blank lines and # comments skipped. */
export function parseEnvironmentLines(text: string): { ok: true; env: Record<string, string> } | { ok: false; error: string } {
  const env: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) return { ok: false, error: `Line ${i + 1} is not NAME=value (a name of letters, digits and _): "${line.slice(0, 80)}".` };
    env[m[1]!] = m[2]!;
  }
  return { ok: true, env };
}
