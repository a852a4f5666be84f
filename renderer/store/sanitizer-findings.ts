import type { StateCreator } from 'zustand';

import { documentForPlace, foldersOf, placeCandidates, type PlaceHints } from '../../core/sanitizer/finding-places';
import { basenameOf } from '../../core/workspace/paths';
import { EMPTY_SOURCE_CONTEXT } from '../../core/workspace/source-link';
import { getModel } from '../editor/models';
import type { SanitizerSlice } from './sanitizer-slice';
import type { WorkbenchState } from './store';

/** What tells which file the report on screen means: the files pointed out, the run's documents, the report's and the plan's folders. */
export function findingHints(s: Pick<WorkbenchState, 'sanitizeOrigin' | 'sanitizeFiles'>): PlaceHints {
  const origin = s.sanitizeOrigin;
  const folders =
    origin === null
      ? []
      : origin.kind === 'file'
        ? foldersOf([origin.xmlPath, origin.textPath])
        : origin.kind === 'program'
          ? [origin.cwd]
          : [...new Set([...origin.sources.folders, ...foldersOf(origin.sources.paths)])];
  return { chosen: s.sanitizeFiles, documents: origin?.kind === 'run' || origin?.kind === 'bundle' ? origin.sources.documents : {}, folders };
}

/** The documents a report's findings may be marked on: a bundle's own files only, else every open file. */
export function findingDocuments<D extends { id: string }>(s: Pick<WorkbenchState, 'sanitizeOrigin'>, documents: readonly D[]): D[] {
  const origin = s.sanitizeOrigin;
  if (origin?.kind !== 'bundle') return [...documents];
  const own = new Set(Object.values(origin.sources.documents));
  return documents.filter((d) => own.has(d.id));
}

/** The line's first character that is not white space: where the cursor goes, so the status bar reads the code's column. */
function firstColumn(docId: string, line: number): number {
  const model = getModel(docId);
  if (!model || line < 1 || line > model.getLineCount()) return 1;
  return model.getLineFirstNonWhitespaceColumn(line) || 1;
}

/** A finding's line, shown: in the document the report means, else in the file found (or asked for) and remembered. */
export function sanitizerFindingActions(
  set: Parameters<StateCreator<WorkbenchState, [], [], SanitizerSlice>>[0],
  get: () => WorkbenchState,
): Pick<SanitizerSlice, 'revealFinding'> {
  return {
    revealFinding: async (place) => {
      const s = get();
      const hints = findingHints(s);
      const remember = (docId: string) => set((st) => ({ sanitizeFiles: { ...st.sanitizeFiles, [place.file]: docId } }));
      const docId = documentForPlace(place.file, findingDocuments(s, s.documents), hints);
      if (docId && getModel(docId)) {
        remember(docId);
        return s.revealInDocument(docId, place.line, firstColumn(docId, place.line));
      }
      // A bundle's finding is in the bundle's files or nowhere: no file of this machine is read for it.
      if (s.sanitizeOrigin?.kind === 'bundle') return s.revealSource({ file: basenameOf(place.file), line: place.line }, s.sanitizeOrigin.sources, remember);
      const paths = placeCandidates(place.file, hints.folders);
      await s.revealSource(
        { file: place.file.startsWith('/') ? place.file : basenameOf(place.file), line: place.line, ...(place.kernel ? { kernel: place.kernel } : {}) },
        { ...EMPTY_SOURCE_CONTEXT, paths, folders: hints.folders },
        remember,
      );
    },
  };
}
