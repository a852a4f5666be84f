import { openDocumentForRef, sourceCandidates, type OpenSource } from '../../core/workspace/source-link';
import { markLine } from '../editor/line-mark';
import { getModel } from '../editor/models';
import type { DocumentOpener } from './editor-documents';
import type { EditorGet, EditorSet } from './editor-kit';
import type { EditorSlice, LocateRequest } from './editor-slice';

/** The open files (not a bundle's) as a link is matched against them: path, name, the kernels their last good compile defined. */
function openSources(s: Pick<EditorSlice, 'documents' | 'compiles'>): OpenSource[] {
  const kernelsOf = (id: string) => (s.compiles[id]?.lastGood ?? s.compiles[id]?.result)?.kernels.map((k) => k.name) ?? [];
  return s.documents.filter((d) => !d.readOnly).map((d) => ({ id: d.id, path: d.path, name: d.name, kernels: kernelsOf(d.id) }));
}

/** A recorded launch: into this file's panel, checked against the device that recorded it where there is a profile of it. */
function loadRecordedLaunch(set: EditorSet, get: EditorGet, docId: string, request: Extract<LocateRequest, { kind: 'launch' }>): void {
  get().activate(docId);
  get().setLaunch(docId, request.launch);
  const profiles = get().profiles ?? [];
  const match =
    profiles.find((p) => p.source === 'device' && p.profile.device.name === request.deviceName) ??
    profiles.find((p) => p.profile.device.name === request.deviceName);
  if (match) get().chooseProfile(match.id);
  const name = get().documents.find((d) => d.id === docId)?.name ?? 'the file';
  set({
    notice: {
      kind: 'info',
      docId,
      text: `The recorded launch of ${request.entry} is in the launch panel of ${name}${match ? `, checked against ${match.label}, the device that recorded it` : request.deviceName ? `; there is no profile of ${request.deviceName} (the device that recorded it) here` : ''}.`,
    },
  });
}

/**
 * Source links: a line shown in its document; the file a link names found (open, read, or asked for: "Where is …?"),
 * and the answer to that question, remembered for the session.
 */
export function editorLocateActions(
  set: EditorSet,
  get: EditorGet,
  opener: DocumentOpener,
): Pick<EditorSlice, 'revealInDocument' | 'revealSource' | 'locateLaunch' | 'locateAt' | 'locateDocument' | 'cancelLocate'> {
  let revealSeq = 0;
  return {
    revealInDocument: (docId, line, column = 1) => {
      const model = getModel(docId);
      if (!model) return;
      markLine(model, line);
      set({ activeId: docId, reveal: { docId, line, column, seq: ++revealSeq } });
    },

    revealSource: async (ref, context, onFound) => {
      const found = (docId: string) => {
        onFound?.(docId);
        get().revealInDocument(docId, ref.line, ref.column);
      };
      // First what produced the link: its own documents, its plan's or sample's files, beside its file.
      const { documentId, paths } = sourceCandidates(ref, context);
      if (documentId && getModel(documentId)) return found(documentId);
      // In their order (beside the result before its sample's folder): the file open at that path, or read from it.
      for (const path of paths) {
        const id = get().documents.find((d) => d.path === path)?.id ?? (await opener.readIntoDocument(path).catch(() => null));
        if (id) return found(id);
      }
      // A bundle's links are its own files or nothing: never a file of this machine, never an earlier answer.
      if (!context.onlyDocuments) {
        const known = get().located[ref.file];
        const again = known && !getModel(known.docId) && known.path ? await opener.readIntoDocument(known.path).catch(() => null) : null;
        const id = again ?? (known && getModel(known.docId) ? known.docId : openDocumentForRef(ref, openSources(get())));
        if (id && getModel(id)) return found(id);
      }
      set({ locate: { kind: 'line', ref, tried: paths, remember: !context.onlyDocuments, ...(onFound ? { onFound } : {}) } });
    },

    locateLaunch: (entry, launch, deviceName) => set({ locate: { kind: 'launch', entry, launch, deviceName } }),

    locateAt: async (path) => {
      if (!get().locate) return false;
      const id = await get().openPath(path);
      if (!id) return false;
      set({ notice: null });
      get().locateDocument(id);
      return true;
    },

    locateDocument: (docId) => {
      const request = get().locate;
      if (!request) return;
      set({ locate: null });
      if (request.kind === 'launch') return loadRecordedLaunch(set, get, docId, request);
      if (request.remember) {
        const path = get().documents.find((d) => d.id === docId)?.path ?? null;
        set((s) => ({ located: { ...s.located, [request.ref.file]: { path, docId } } }));
      }
      request.onFound?.(docId);
      get().revealInDocument(docId, request.ref.line, request.ref.column);
    },

    cancelLocate: () => set({ locate: null }),
  };
}
