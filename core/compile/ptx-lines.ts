import { basenameOf } from '../workspace/paths';

/**
 * Which source line each PTX line came from, from the `.loc file line column` directives that -lineinfo
 * writes: a `.loc` holds until the next one or the end of its function. Only lines of the compiled file
 * itself are mapped (a header's lines are not in the editor).
 */
export interface PtxLineMap {
  /** One entry per PTX line (0-based): the 1-based source line, or null. */
  sourceLines: (number | null)[];
  /** The .file the mapped lines belong to, as the compiler named it. */
  file: string | null;
}

const FILE = /^\s*\.file\s+(\d+)\s+"([^"]*)"/;
const LOC = /^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+/;

export function mapPtxLines(ptx: string, sourceName: string): PtxLineMap {
  const lines = ptx.split('\n');
  const files = new Map<number, string>();
  const locCounts = new Map<number, number>();
  for (const line of lines) {
    const f = FILE.exec(line);
    if (f) files.set(Number(f[1]), f[2]!);
    const l = LOC.exec(line);
    if (l) locCounts.set(Number(l[1]), (locCounts.get(Number(l[1])) ?? 0) + 1);
  }
  // The compiled file: the one named like the document, else (an unnamed program) the one most lines come from.
  let main = [...files].find(([, path]) => basenameOf(path) === sourceName)?.[0];
  if (main === undefined) main = [...locCounts].sort((a, b) => b[1] - a[1])[0]?.[0];
  const sourceLines: (number | null)[] = [];
  let current: number | null = null;
  let depth = 0;
  for (const line of lines) {
    const l = LOC.exec(line);
    if (l) current = Number(l[1]) === main && Number(l[2]) > 0 ? Number(l[2]) : null;
    sourceLines.push(depth > 0 ? current : null);
    // A function body is a top-level { ... }: its end closes the last .loc.
    for (const ch of line.replace(/\/\/.*$/, '')) {
      if (ch === '{') depth++;
      else if (ch === '}') {
        depth = Math.max(0, depth - 1);
        if (depth === 0) current = null;
      }
    }
  }
  return { sourceLines, file: main === undefined ? null : (files.get(main) ?? null) };
}
