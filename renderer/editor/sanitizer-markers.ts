import type { editor } from 'monaco-editor/editor/editor.api';

import { documentForPlace, findingPlaces, type OpenDocument, type PlaceHints } from '../../core/sanitizer/finding-places';
import type { FindingGroup, SanitizerSummary } from '../../core/sanitizer/findings';
import { describeGroup } from '../../core/sanitizer/group';
import { getModel } from './models';
import { monaco } from './monaco-setup';

/** Its own marker owner: the compiler's markers ('compiler') and these never replace each other. */
export const SANITIZER_MARKER_OWNER = 'compute-sanitizer';

const SEVERITY = { error: 8, warning: 4, info: 2 } as const; // monaco.MarkerSeverity

/** The models that carry marks of the report on screen, and their glyph decorations. */
const marked = new Map<string, { model: editor.ITextModel; decorations: string[] }>();

/** Markdown shows `__syncthreads()` as bold: the hover's text is escaped to read as the tool's words. */
const escapeMarkdown = (text: string) => text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');

/**
 * Marks the report's findings on the open documents whose file it names: a marker per finding line (in the
 * Problems' way: squiggle, F8, hover) and a glyph in the gutter with the same sentence on hover. Everything
 * the previous report marked goes first, so only the report on screen is ever marked.
 */
export function showSanitizerMarks(
  report: { tool: string; groups: FindingGroup[]; summary: SanitizerSummary } | null,
  documents: readonly OpenDocument[],
  hints: PlaceHints,
): void {
  const wanted = new Map<string, { markers: editor.IMarkerData[]; glyphs: editor.IModelDeltaDecoration[] }>();
  for (const group of report?.groups ?? []) {
    const sentence = describeGroup(group, report!.summary);
    for (const place of findingPlaces(group)) {
      const docId = documentForPlace(place.file, documents, hints);
      const model = docId ? getModel(docId) : undefined;
      if (!docId || !model || place.line > model.getLineCount()) continue;
      const entry = wanted.get(docId) ?? { markers: [], glyphs: [] };
      wanted.set(docId, entry);
      const start = model.getLineFirstNonWhitespaceColumn(place.line) || 1;
      const end = Math.max(model.getLineLastNonWhitespaceColumn(place.line), start + 1);
      const side = place.role === 'first' ? ' (first access)' : place.role === 'second' ? ' (second access)' : '';
      // A race's sentence counts its hazards; its records are not a second count beside them.
      const count = group.kind !== 'race' && group.count > 1 ? ` ×${group.count.toLocaleString('en-US')}` : '';
      entry.markers.push({
        severity: SEVERITY[group.severity],
        message: sentence,
        source: `compute-sanitizer ${report!.tool}${side}`,
        startLineNumber: place.line,
        startColumn: start,
        endLineNumber: place.line,
        endColumn: end,
      });
      entry.glyphs.push({
        range: new monaco.Range(place.line, 1, place.line, 1),
        options: {
          glyphMarginClassName: `codicon codicon-${group.severity === 'info' ? 'info' : group.severity} sanitizer-glyph sanitizer-glyph-${group.severity}`,
          glyphMarginHoverMessage: { value: `**${escapeMarkdown(report!.tool)}${count}${side}**: ${escapeMarkdown(sentence)}` },
          stickiness: monaco.editor.TrackedRangeStickiness.NeverGrowsWhenTypingAtEdges,
        },
      });
    }
  }
  for (const [docId, { model, decorations }] of marked) {
    if (wanted.has(docId) && !model.isDisposed()) continue;
    if (!model.isDisposed()) {
      monaco.editor.setModelMarkers(model, SANITIZER_MARKER_OWNER, []);
      model.deltaDecorations(decorations, []);
    }
    marked.delete(docId);
  }
  for (const [docId, { markers, glyphs }] of wanted) {
    const model = getModel(docId)!;
    monaco.editor.setModelMarkers(model, SANITIZER_MARKER_OWNER, markers);
    const previous = marked.get(docId)?.decorations ?? [];
    marked.set(docId, { model, decorations: model.deltaDecorations(previous, glyphs) });
  }
}
