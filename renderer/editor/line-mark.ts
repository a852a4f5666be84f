import type { editor } from 'monaco-editor/editor/editor.api';

import { monaco } from './monaco-setup';

/** The one line a source link points at: marked in the gutter and highlighted, until the next link. */
let marked: { model: editor.ITextModel; ids: string[] } | null = null;

export function markLine(model: editor.ITextModel, line: number): void {
  clearMark();
  const at = Math.max(1, Math.min(line, model.getLineCount()));
  const ids = model.deltaDecorations(
    [],
    [
      {
        range: new monaco.Range(at, 1, at, 1),
        options: {
          isWholeLine: true,
          className: 'source-mark-line',
          linesDecorationsClassName: 'source-mark-gutter',
          overviewRuler: { color: '#e0b050', position: monaco.editor.OverviewRulerLane.Full },
          stickiness: monaco.editor.TrackedRangeStickiness.NeverGrowsWhenTypingAtEdges,
        },
      },
    ],
  );
  marked = { model, ids };
}

export function clearMark(): void {
  if (marked && !marked.model.isDisposed()) marked.model.deltaDecorations(marked.ids, []);
  marked = null;
}
