/**
 * A CuPy RawKernel's line, found in the user's Python file. CuPy compiles the source string the program gave it
 * under the name `<sha1>.cubin.cu` (in a temporary folder: the path the tool reports is gone by then) and, with
 * CUPY_CACHE_SAVE_CUDA_SOURCE=1, saves that exact source beside the cubin in its cache. The source is then looked
 * for in the Python files: the whole of it gives the line it starts on, and each line of the kernel follows from
 * there; else the one line's own text, found once. Text in, line out: the reading is main/'s.
 */

/** CuPy's name for a kernel's source: the SHA-1 of what it compiled, `.cubin`, `.cu`. */
const CUPY_SOURCE_NAME = /^[0-9a-f]{40}\.cubin\.cu$/;

/** The file name of CuPy's saved source when `path` (as the tool reported it) is one, else null. */
export function cupySourceName(path: string | null): string | null {
  if (path === null) return null;
  const name = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
  return CUPY_SOURCE_NAME.test(name) ? name : null;
}

export interface PythonSource {
  path: string;
  text: string;
}

export interface KernelLineInPython {
  file: string;
  line: number;
  how: 'whole-source' | 'line-text';
}

/** A line shorter than this (without spaces) is too common to stand for itself (`}`, `int i;`). */
const MIN_LINE_TEXT = 6;

const unixLines = (text: string) => text.replace(/\r\n?/g, '\n');
const linesBefore = (text: string, index: number): number => {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) n++;
  return n;
};

/** Where the whole source is in one file, once: the file's line of the source's line 1. */
function wholeSourceStart(source: string, python: string): number | null {
  const at = python.indexOf(source);
  if (at === -1 || python.indexOf(source, at + 1) !== -1) return null;
  return linesBefore(python, at) + 1;
}

/** The one line of all the files whose text is the kernel line's (trimmed), else the one that holds it. */
function uniqueLine(text: string, files: readonly PythonSource[]): KernelLineInPython | null {
  const equal: KernelLineInPython[] = [];
  const holding: KernelLineInPython[] = [];
  for (const f of files) {
    unixLines(f.text)
      .split('\n')
      .forEach((l, i) => {
        if (!l.includes(text)) return;
        const hit = { file: f.path, line: i + 1, how: 'line-text' as const };
        holding.push(hit);
        if (l.trim() === text) equal.push(hit);
      });
  }
  if (equal.length === 1) return equal[0]!;
  return equal.length === 0 && holding.length === 1 ? holding[0]! : null;
}

/**
 * The Python line of line `line` of CuPy's saved `source`, looking in `files` in order (the first that holds the
 * whole source once wins: the launching frame's file comes first); null when no file holds it, or its line's
 * text is not found exactly once.
 */
export function findKernelLine(source: string, line: number, files: readonly PythonSource[]): KernelLineInPython | null {
  const kernel = unixLines(source);
  const lines = kernel.split('\n');
  if (!Number.isInteger(line) || line < 1 || line > lines.length) return null;
  if (kernel.trim() !== '') {
    for (const f of files) {
      const start = wholeSourceStart(kernel, unixLines(f.text));
      if (start !== null) return { file: f.path, line: start + line - 1, how: 'whole-source' };
    }
  }
  const text = lines[line - 1]!.trim();
  return text.replace(/\s+/g, '').length >= MIN_LINE_TEXT ? uniqueLine(text, files) : null;
}
