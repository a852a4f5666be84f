import { getModel } from '../editor/models';
import type { PersistDraft } from './editor-drafts';
import { message, type EditorGet, type EditorSet } from './editor-kit';
import type { EditorSlice } from './editor-slice';

/** Save and Save as: to the document's file, or a new one; a bundle's document only ever as a copy. */
export function editorSaveActions(set: EditorSet, get: EditorGet, persistDraft: PersistDraft): Pick<EditorSlice, 'save'> {
  return {
    save: async (id, path) => {
      const doc = get().documents.find((d) => d.id === id);
      const model = getModel(id);
      const target = path ?? doc?.path;
      if (!doc || !model || !target) return false;
      if (doc.readOnly) {
        // The bundle's document stays the bundle's: Save as writes a copy, the tab goes on showing the bundle.
        if (!path) {
          set({ notice: { kind: 'info', text: `${doc.name} is from the bundle ${doc.readOnly.bundle}, read-only: Save as… keeps a copy of it.` } });
          return false;
        }
        try {
          const saved = await get().api.invoke('files.write', { path, text: model.getValue(), expectedMtimeMs: null });
          set({ notice: { kind: 'info', text: `A copy of ${doc.name} from the bundle was saved to ${saved.path}; the tab still shows the bundle's.` } });
          return true;
        } catch (error) {
          set({ notice: { kind: 'error', text: message(error) } });
          return false;
        }
      }
      const text = model.getValue();
      try {
        const saved = await get().api.invoke('files.write', { path: target, text, expectedMtimeMs: target === doc.path ? doc.savedMtimeMs : null });
        const name = saved.path.split('/').pop() ?? saved.path;
        set((s) => ({
          documents: s.documents.map((d) =>
            d.id === id ? { ...d, path: saved.path, name, savedText: text, savedMtimeMs: saved.mtimeMs, dirty: model.getValue() !== text } : d,
          ),
          // Save as names the file it wrote in full: the person at a browser cannot see the host's folders.
          ...(path ? { notice: { kind: 'info' as const, text: `Saved to ${saved.path}` } } : {}),
        }));
        persistDraft(id);
        return true;
      } catch (error) {
        set({ notice: { kind: 'error', text: message(error) } });
        return false;
      }
    },
  };
}
