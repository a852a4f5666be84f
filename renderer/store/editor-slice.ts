import type { StateCreator } from 'zustand';

import type { CompileOptionsInput } from '../../core/compile/compile-options';
import type { CompileResult } from '../../core/compile/compile-result';
import type { Draft } from '../../core/api/drafts';
import { BoundedCache } from '../../core/bounded-cache';
import { setDiagnostics } from '../editor/markers';
import { createModel, disposeModel, getModel } from '../editor/models';
import type { WorkbenchState } from './store';

export interface DocumentState {
  id: string;
  path: string | null;
  name: string;
  savedText: string | null;
  savedMtimeMs: number | null;
  dirty: boolean;
  order: number;
}

export interface CompileState {
  status: 'compiling' | 'done' | 'stopped';
  result: CompileResult | null;
  message: string | null;
  generation: number;
}

export type EditorOptions = Omit<CompileOptionsInput, 'arch'> & { arch: string | null };

export interface EditorSlice {
  documents: DocumentState[];
  activeId: string | null;
  compiles: Record<string, CompileState>;
  compileOptions: EditorOptions;
  notice: { kind: 'error' | 'info'; text: string } | null;
  restoreDocuments(): Promise<void>;
  openPath(path: string): Promise<void>;
  newDocument(name: string, text: string): void;
  activate(id: string): void;
  close(id: string): Promise<void>;
  edited(id: string): void;
  save(id: string, path?: string): Promise<boolean>;
  compileNow(id: string): Promise<void>;
  cancelCompile(): Promise<void>;
  setCompileOptions(options: Partial<EditorOptions>): void;
  dismissNotice(): void;
}

const COMPILE_DEBOUNCE_MS = 250;
const DRAFT_DEBOUNCE_MS = 400;
const timers = new Map<string, ReturnType<typeof setTimeout>>();
const debounce = (key: string, ms: number, run: () => void) => {
  clearTimeout(timers.get(key));
  timers.set(key, setTimeout(run, ms));
};
// Results of this session's compiles by what was compiled: an edit back to a source compiled before
// (undo, retyping what was deleted) shows its markers at once, without the debounce or a round trip.
const recentCompiles = new BoundedCache<string, CompileResult>(64);
const compileKey = (source: string, sourceName: string, options: object) => `${sourceName}\n${JSON.stringify(options)}\n${source}`;
const newId = () => Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export const createEditorSlice: StateCreator<WorkbenchState, [], [], EditorSlice> = (set, get) => {
  const persistDraft = (id: string) =>
    debounce(`draft:${id}`, DRAFT_DEBOUNCE_MS, () => {
      const doc = get().documents.find((d) => d.id === id);
      const model = getModel(id);
      if (!doc || !model) return;
      const draft: Draft = {
        id,
        path: doc.path,
        name: doc.name,
        text: model.getValue(),
        savedText: doc.savedText,
        savedMtimeMs: doc.savedMtimeMs,
        order: doc.order,
      };
      get()
        .api.invoke('drafts.save', draft)
        .catch((error) => set({ notice: { kind: 'error', text: `Your edits could not be saved as a draft: ${message(error)}` } }));
    });

  const requestOptions = () => {
    const { arch, ...rest } = get().compileOptions;
    return { ...rest, ...(arch ? { arch } : {}) };
  };

  /** Shows a compile this session already has for the document's current text; false when there is none. */
  const showRecentCompile = (id: string, name: string, model: NonNullable<ReturnType<typeof getModel>>): boolean => {
    const started = performance.now();
    const known = recentCompiles.get(compileKey(model.getValue(), name, requestOptions()));
    if (!known) return false;
    clearTimeout(timers.get(`compile:${id}`));
    const generation = (get().compiles[id]?.generation ?? 0) + 1; // any compile still under way is now stale
    setDiagnostics(model, known);
    const result = { ...known, cached: true, ms: performance.now() - started };
    set((s) => ({ compiles: { ...s.compiles, [id]: { status: 'done', result, message: null, generation } } }));
    return true;
  };

  const addDocument = (doc: Omit<DocumentState, 'order' | 'dirty'>, text: string) => {
    const order = Math.max(-1, ...get().documents.map((d) => d.order)) + 1;
    createModel(doc.id, text, doc.name);
    const state: DocumentState = { ...doc, order, dirty: doc.savedText !== text };
    set((s) => ({ documents: [...s.documents, state], activeId: doc.id }));
    persistDraft(doc.id);
    void get().compileNow(doc.id);
  };

  return {
    documents: [],
    activeId: null,
    compiles: {},
    compileOptions: { arch: null, debug: false, maxRegisters: null, defines: [], fastMath: false, std: 'c++17' },
    notice: null,

    restoreDocuments: async () => {
      const api = get().api;
      try {
        const drafts = await api.invoke('drafts.list', {});
        for (const d of drafts) {
          if (get().documents.some((x) => x.id === d.id)) continue;
          createModel(d.id, d.text, d.name);
          set((s) => ({
            documents: [
              ...s.documents,
              { id: d.id, path: d.path, name: d.name, savedText: d.savedText, savedMtimeMs: d.savedMtimeMs, dirty: d.savedText !== d.text, order: d.order },
            ],
            activeId: d.id,
          }));
          void get().compileNow(d.id);
        }
        if (get().documents.length === 0) {
          const samples = await api.invoke('samples.list', {});
          const first = samples.find((s) => s.name.startsWith('vector-add/')) ?? samples[0];
          if (first) await get().openPath(first.path);
        }
      } catch (error) {
        set({ notice: { kind: 'error', text: `Could not restore your open files: ${message(error)}` } });
      }
    },

    openPath: async (path) => {
      const existing = get().documents.find((d) => d.path === path);
      if (existing) return set({ activeId: existing.id });
      try {
        const file = await get().api.invoke('files.read', { path });
        addDocument(
          { id: newId(), path: file.path, name: file.path.split('/').pop() ?? file.path, savedText: file.text, savedMtimeMs: file.mtimeMs },
          file.text,
        );
      } catch (error) {
        set({ notice: { kind: 'error', text: message(error) } });
      }
    },

    newDocument: (name, text) => addDocument({ id: newId(), path: null, name, savedText: null, savedMtimeMs: null }, text),

    activate: (id) => set({ activeId: id }),

    close: async (id) => {
      disposeModel(id);
      set((s) => {
        const documents = s.documents.filter((d) => d.id !== id);
        const { [id]: _gone, ...compiles } = s.compiles;
        return { documents, compiles, activeId: s.activeId === id ? (documents[documents.length - 1]?.id ?? null) : s.activeId };
      });
      await get()
        .api.invoke('drafts.discard', { id })
        .catch(() => undefined);
    },

    edited: (id) => {
      const doc = get().documents.find((d) => d.id === id);
      const model = getModel(id);
      if (!doc || !model) return;
      const dirty = model.getValue() !== doc.savedText;
      if (dirty !== doc.dirty) set((s) => ({ documents: s.documents.map((d) => (d.id === id ? { ...d, dirty } : d)) }));
      persistDraft(id);
      if (!showRecentCompile(id, doc.name, model)) debounce(`compile:${id}`, COMPILE_DEBOUNCE_MS, () => void get().compileNow(id));
    },

    save: async (id, path) => {
      const doc = get().documents.find((d) => d.id === id);
      const model = getModel(id);
      const target = path ?? doc?.path;
      if (!doc || !model || !target) return false;
      const text = model.getValue();
      try {
        const saved = await get().api.invoke('files.write', { path: target, text, expectedMtimeMs: target === doc.path ? doc.savedMtimeMs : null });
        const name = saved.path.split('/').pop() ?? saved.path;
        set((s) => ({
          documents: s.documents.map((d) =>
            d.id === id ? { ...d, path: saved.path, name, savedText: text, savedMtimeMs: saved.mtimeMs, dirty: model.getValue() !== text } : d,
          ),
        }));
        persistDraft(id);
        return true;
      } catch (error) {
        set({ notice: { kind: 'error', text: message(error) } });
        return false;
      }
    },

    compileNow: async (id) => {
      const doc = get().documents.find((d) => d.id === id);
      const model = getModel(id);
      if (!doc || !model) return;
      const generation = (get().compiles[id]?.generation ?? 0) + 1;
      const previous = get().compiles[id];
      set((s) => ({ compiles: { ...s.compiles, [id]: { status: 'compiling', result: previous?.result ?? null, message: null, generation } } }));
      const options = requestOptions();
      const source = model.getValue();
      const isLatest = () => get().compiles[id]?.generation === generation && getModel(id) === model;
      try {
        const result = await get().api.invoke('compile.run', { source, sourceName: doc.name, options, backend: 'auto', document: id });
        recentCompiles.set(compileKey(source, doc.name, options), result);
        if (!isLatest()) return; // a newer edit has its own compile: this result is stale
        setDiagnostics(model, result);
        set((s) => ({ compiles: { ...s.compiles, [id]: { status: 'done', result, message: null, generation } } }));
      } catch (error) {
        if (!isLatest()) return;
        set((s) => ({ compiles: { ...s.compiles, [id]: { status: 'stopped', result: previous?.result ?? null, message: message(error), generation } } }));
      }
    },

    cancelCompile: async () => {
      await get().api.invoke('compile.cancel', {});
    },

    setCompileOptions: (options) => {
      set((s) => ({ compileOptions: { ...s.compileOptions, ...options } }));
      for (const d of get().documents) void get().compileNow(d.id);
    },

    dismissNotice: () => set({ notice: null }),
  };
};
