/**
 * The Python line that launches a CuPy RawKernel, where the tool recorded none (racecheck's and initcheck's
 * records carry no host stack): the kernel object made with `cupy.RawKernel(…, "name", …)` and called exactly once
 * in the file. Two calls or more, or none, and there is no answer: a guess is not given as the line.
 */
export function rawKernelLaunchLine(source: string, kernel: string): number | null {
  const lines = source.split('\n');
  const escaped = kernel.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const made = new RegExp(`^\\s*([A-Za-z_]\\w*)\\s*=\\s*(?:cupy|cp)\\.RawKernel\\([^\\n]*["']${escaped}["']`);
  const names = lines.flatMap((l) => {
    const m = made.exec(l);
    return m ? [m[1]!] : [];
  });
  if (names.length !== 1) return null;
  const call = new RegExp(`^(?!\\s*#)[^=]*?\\b${names[0]}\\s*\\(|^\\s*\\w+\\s*=\\s*${names[0]}\\s*\\(`);
  const code = outsideTripleQuotes(lines);
  const calls = lines.map((l, i) => (code[i] && call.test(l) && !made.test(l) ? i + 1 : 0)).filter((n) => n > 0);
  return calls.length === 1 ? calls[0]! : null;
}

/** Per line: whether it is Python code rather than the inside of a triple-quoted string (a kernel's CUDA source). */
function outsideTripleQuotes(lines: string[]): boolean[] {
  let open: string | null = null;
  return lines.map((line) => {
    const startsInside = open !== null;
    for (const m of line.matchAll(/"""|'''/g)) {
      if (open === null) open = m[0];
      else if (m[0] === open) open = null;
    }
    return !startsInside;
  });
}

/** A command line short enough to read in a sentence: `python3 -c … cache-server`, the middle left out. */
export function shortCommand(command: string, max = 80): string {
  const words = command.split(' ').filter(Boolean);
  if (command.length <= max || words.length === 0) return command;
  const program = words[0]!.split('/').pop()!;
  if (words[1] === '-c' || words[1] === '-m') {
    const rest = words.slice(2).filter((w) => !/[?\n]/.test(w) && w.length < 40);
    const tail = words[1] === '-m' ? words[2] : (rest.at(-1) ?? '');
    return `${program} ${words[1]} …${tail ? ` ${tail}` : ''}`.slice(0, max);
  }
  const short = [program, ...words.slice(1)].join(' ');
  return short.length <= max ? short : `${short.slice(0, max - 30)} … ${short.slice(-28)}`;
}
