import type { TimelineFrame } from './timeline';

/**
 * Is this frame from a file that is not the user's own code: PyTorch's or another installed package's Python,
 * the Python standard library and interpreter, or compiled C/C++/CUDA (the allocator, ATen, the dispatcher,
 * CPython, libc), and frames with no file at all? The one definition: a snapshot's user frame
 * (snapshot-model.ts) and the stack list's collapsed runs both use it.
 */
export function isInternalFile(file: string): boolean {
  if (file === '' || file === '??') return true;
  if (/\.(c|cc|cpp|cxx|cu|cuh|h|hpp)$/.test(file)) return true;
  if (/(^|\/)torch\//.test(file) || /\/(site|dist)-packages\//.test(file)) return true;
  if (/\/lib\/python\d[\d.]*\//.test(file) || file.startsWith('<frozen')) return true;
  return false;
}

/** One row of a stack as a person reads it: a frame, or a run of internal frames shown as one line that opens. */
export type StackRow = { kind: 'frame'; index: number } | { kind: 'internal'; first: number; count: number };

/** Fewer internal frames in a row than this stay on their own rows: a line that opens to one frame saves nothing. */
export const MIN_COLLAPSED_RUN = 2;

/**
 * A stack (innermost first) as rows: the user's frames each on its own row, and each run of MIN_COLLAPSED_RUN or
 * more internal frames as one row that stands for them all. The user frame the model picked (`userFrame`) is
 * never folded away, even where the classifier calls it internal (a snapshot whose only Python is the runtime's).
 */
export function stackRows(frames: readonly TimelineFrame[], userFrame: number): StackRow[] {
  const rows: StackRow[] = [];
  let runStart = -1;
  const closeRun = (end: number) => {
    if (runStart < 0) return;
    const count = end - runStart;
    if (count >= MIN_COLLAPSED_RUN) rows.push({ kind: 'internal', first: runStart, count });
    else for (let i = runStart; i < end; i++) rows.push({ kind: 'frame', index: i });
    runStart = -1;
  };
  for (let i = 0; i < frames.length; i++) {
    if (i !== userFrame && isInternalFile(frames[i]!.file)) {
      if (runStart < 0) runStart = i;
      continue;
    }
    closeRun(i);
    rows.push({ kind: 'frame', index: i });
  }
  closeRun(frames.length);
  return rows;
}

/** What a collapsed run says: how many frames, and whose. */
export function describeInternalRun(frames: readonly TimelineFrame[], first: number, count: number): string {
  const run = frames.slice(first, first + count);
  const torch = run.some((f) => /(^|::)(at|c10|torch)::|(^|\/)torch\//.test(`${f.name} ${f.file}`));
  const python = run.some((f) => /^_?Py|^PyEval|\.py$|^<frozen/.test(f.name) || /\.py$|^<frozen/.test(f.file));
  const whose = [torch ? 'PyTorch' : null, python ? 'Python' : null].filter((w) => w !== null);
  return `${count} internal frames${whose.length ? ` (${whose.join(', ')} and the runtime)` : ''}`;
}
