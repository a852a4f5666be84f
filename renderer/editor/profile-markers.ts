import type { editor, IDisposable } from 'monaco-editor/editor/editor.api';

import { lineHover, lineRows } from '../../core/kernel-profile/profile-view';
import type { Profile } from '../../core/kernel-profile/profile';
import { getModel } from './models';
import { monaco } from './monaco-setup';

/**
 * The kernel profile on the lines of its own file: a shade in the gutter by each line's share of the samples, a
 * distinct mark on a line whose accesses are uncoalesced, and the line's figures in words on hover (over the mark,
 * or over the line's code). One document at a time, the profile's own: the previous marks go before new ones come.
 */

/** The model marked, its decorations, and what re-checks it as it is edited. */
let marked: { model: editor.ITextModel; ids: string[]; listener: IDisposable } | null = null;

/** Markdown would read `__syncthreads()` as bold: the hover's text is escaped to read as written. */
const escapeMarkdown = (text: string) => text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');

function decorations(model: editor.ITextModel, profile: Profile): editor.IModelDeltaDecoration[] {
  const out: editor.IModelDeltaDecoration[] = [];
  for (const row of lineRows(profile)) {
    if (row.line > model.getLineCount() || (row.heat === 0 && row.uncoalesced.length === 0)) continue;
    const hover = { value: lineHover(row).map(escapeMarkdown).join('\n\n') };
    const uncoalesced = row.uncoalesced.length > 0;
    out.push({
      range: new monaco.Range(row.line, 1, row.line, 1),
      options: {
        glyphMarginClassName: `profile-heat profile-heat-${row.heat}${uncoalesced ? ' codicon codicon-layers profile-uncoalesced' : ''}`,
        glyphMarginHoverMessage: hover,
        glyphMargin: { position: monaco.editor.GlyphMarginLane.Right },
        stickiness: monaco.editor.TrackedRangeStickiness.NeverGrowsWhenTypingAtEdges,
        ...(uncoalesced ? { overviewRuler: { color: '#d9822b', position: monaco.editor.OverviewRulerLane.Left } } : {}),
      },
    });
    const start = model.getLineFirstNonWhitespaceColumn(row.line) || 1;
    const end = Math.max(model.getLineMaxColumn(row.line), start + 1);
    out.push({
      range: new monaco.Range(row.line, start, row.line, end),
      options: { hoverMessage: hover, stickiness: monaco.editor.TrackedRangeStickiness.NeverGrowsWhenTypingAtEdges },
    });
  }
  return out;
}

/** Takes the marks off, wherever they are. */
function clear(): void {
  if (!marked) return;
  marked.listener.dispose();
  if (!marked.model.isDisposed()) marked.model.deltaDecorations(marked.ids, []);
  marked = null;
}

/**
 * Marks `profile` on the document `docId` (null: on none), while `current(model)` says its text is still the text that
 * was profiled; an edit that changes it takes the marks off, an undo back to it brings them again.
 */
export function showProfileMarks(profile: Profile | null, docId: string | null, current: (model: editor.ITextModel) => boolean): void {
  clear();
  const model = docId ? getModel(docId) : undefined;
  if (!profile || !model) return;
  const wanted = decorations(model, profile);
  let ids = current(model) ? model.deltaDecorations([], wanted) : [];
  const listener = model.onDidChangeContent(() => {
    const now = current(model);
    if (now && ids.length === 0) ids = model.deltaDecorations([], decorations(model, profile));
    else if (!now && ids.length) ids = model.deltaDecorations(ids, []);
    if (marked) marked.ids = ids;
  });
  marked = { model, ids, listener };
}
