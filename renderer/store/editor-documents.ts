import { setDiagnostics } from '../editor/markers';
import { createModel, disposeModel } from '../editor/models';
import type { PersistDraft } from './editor-drafts';
import { message, newId, type EditorGet, type EditorSet } from './editor-kit';
import type { DocumentState, EditorSlice } from './editor-slice';

/** How a document comes into the editor: added with its text, or read from a file (the open one, if it is open). */
export interface DocumentOpener {
  addDocument(doc: Omit<DocumentState, 'order' | 'dirty'>, text: string): void;
  /** Reads a file into a new document (or finds its open one); throws what the host said. */
  readIntoDocument(path: string): Promise<string>;
}

export function documentOpener(set: EditorSet, get: EditorGet, persistDraft: PersistDraft): DocumentOpener {
  const addDocument: DocumentOpener['addDocument'] = (doc, text) => {
    const order = Math.max(-1, ...get().documents.map((d) => d.order)) + 1;
    createModel(doc.id, text, doc.name);
    const state: DocumentState = { ...doc, order, dirty: doc.savedText !== text };
    set((s) => ({ documents: [...s.documents, state], activeId: doc.id }));
    persistDraft(doc.id);
    void get().compileNow(doc.id);
  };
  const readIntoDocument: DocumentOpener['readIntoDocument'] = async (path) => {
    const existing = get().documents.find((d) => d.path === path);
    if (existing) return existing.id;
    const file = await get().api.invoke('files.read', { path });
    const open = get().documents.find((d) => d.path === file.path);
    if (open) return open.id;
    const id = newId();
    addDocument({ id, path: file.path, name: file.path.split('/').pop() ?? file.path, savedText: file.text, savedMtimeMs: file.mtimeMs }, file.text);
    return id;
  };
  return { addDocument, readIntoDocument };
}

/** The tabs: opening a file, a new one or a bundle's (read-only), choosing one, closing one. */
export function editorDocumentActions(
  set: EditorSet,
  get: EditorGet,
  opener: DocumentOpener,
): Pick<EditorSlice, 'openPath' | 'newDocument' | 'openReadOnly' | 'activate' | 'close'> {
  return {
    openPath: async (path) => {
      try {
        const id = await opener.readIntoDocument(path);
        set({ activeId: id });
        return id;
      } catch (error) {
        set({ notice: { kind: 'error', text: message(error) } });
        return null;
      }
    },

    newDocument: (name, text) => opener.addDocument({ id: newId(), path: null, name, savedText: null, savedMtimeMs: null }, text),

    openReadOnly: (name, text, bundle, compile) => {
      const id = `bundle-${newId()}`;
      const order = Math.max(-1, ...get().documents.map((d) => d.order)) + 1;
      const model = createModel(id, text, name);
      setDiagnostics(model, compile);
      const state: DocumentState = { id, path: null, name, savedText: text, savedMtimeMs: null, dirty: false, order, readOnly: { bundle } };
      set((s) => ({
        documents: [...s.documents, state],
        activeId: id,
        compiles: { ...s.compiles, [id]: { status: 'done', result: compile, lastGood: compile?.ok ? compile : null, message: null, generation: 0 } },
      }));
      return id;
    },

    activate: (id) => set({ activeId: id }),

    close: async (id) => {
      const readOnly = get().documents.find((d) => d.id === id)?.readOnly;
      disposeModel(id);
      set((s) => {
        const at = s.documents.findIndex((d) => d.id === id);
        const documents = s.documents.filter((d) => d.id !== id);
        const { [id]: _gone, ...compiles } = s.compiles;
        const { [id]: _run, ...runs } = s.runs;
        // The closed tab's place goes to the next tab (the one after it), else the one before, as editors do.
        return { documents, compiles, runs, activeId: s.activeId === id ? ((documents[at] ?? documents[at - 1])?.id ?? null) : s.activeId };
      });
      if (readOnly) return; // a bundle's file never had a draft
      await get()
        .api.invoke('drafts.discard', { id })
        .catch(() => undefined);
    },
  };
}
