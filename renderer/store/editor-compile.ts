import type { CompileResult } from '../../core/compile/compile-result';
import { BoundedCache } from '../../core/bounded-cache';
import { setDiagnostics } from '../editor/markers';
import { getModel } from '../editor/models';
import type { PersistDraft } from './editor-drafts';
import { cancelDebounce, debounce, message, type EditorGet, type EditorSet } from './editor-kit';
import type { EditorSlice } from './editor-slice';

const COMPILE_DEBOUNCE_MS = 250;
/** Past this size a keystroke does not ask the host's cache (hashing the text costs more than it saves). */
const HOST_CACHE_PROBE_LIMIT = 1024 * 1024;
// Results of this session's compiles by what was compiled: an edit back to a source compiled before
// (undo, retyping what was deleted) shows its markers at once, without the debounce or a round trip.
const recentCompiles = new BoundedCache<string, CompileResult>(64);
const compileKey = (source: string, sourceName: string, options: object) => `${sourceName}\n${JSON.stringify(options)}\n${source}`;

type Model = NonNullable<ReturnType<typeof getModel>>;

/** The compile options as the host takes them: no arch when it is the device's default. */
function requestOptions(get: EditorGet) {
  const { arch, ...rest } = get().compileOptions;
  return { ...rest, ...(arch ? { arch } : {}) };
}

/** Shows a compile this session already has for the document's current text; false when there is none. */
function showRecentCompile(set: EditorSet, get: EditorGet, id: string, name: string, model: Model): boolean {
  const started = performance.now();
  const known = recentCompiles.get(compileKey(model.getValue(), name, requestOptions(get)));
  if (!known) return false;
  cancelDebounce(`compile:${id}`);
  const generation = (get().compiles[id]?.generation ?? 0) + 1; // any compile still under way is now stale
  setDiagnostics(model, known);
  const result = { ...known, cached: true, ms: performance.now() - started };
  const lastGood = known.ok ? result : (get().compiles[id]?.lastGood ?? null);
  set((s) => ({ compiles: { ...s.compiles, [id]: { status: 'done', result, lastGood, message: null, generation } } }));
  return true;
}

/**
 * Asks the host's compile cache for the text just typed, at once (no debounce, no compile): on a hit
 * the markers update now and the debounced compile is called off. A miss or an error changes nothing.
 */
async function showHostCachedCompile(set: EditorSet, get: EditorGet, id: string, name: string, model: Model): Promise<void> {
  const source = model.getValue();
  if (source.length > HOST_CACHE_PROBE_LIMIT) return;
  const options = requestOptions(get);
  const generation = get().compiles[id]?.generation ?? 0;
  const cached = await get()
    .api.invoke('compile.cached', { source, sourceName: name, options, backend: 'auto' })
    .catch(() => null);
  if (!cached || getModel(id) !== model || model.getValue() !== source || (get().compiles[id]?.generation ?? 0) !== generation) return;
  recentCompiles.set(compileKey(source, name, options), cached);
  showRecentCompile(set, get, id, name, model);
}

/** Compiling as the person types: an edit, a compile now, its cancel, the options every compile takes. */
export function editorCompileActions(
  set: EditorSet,
  get: EditorGet,
  persistDraft: PersistDraft,
): Pick<EditorSlice, 'edited' | 'compileNow' | 'cancelCompile' | 'setCompileOptions'> {
  return {
    edited: (id) => {
      const doc = get().documents.find((d) => d.id === id);
      const model = getModel(id);
      if (!doc || !model || doc.readOnly) return;
      const dirty = model.getValue() !== doc.savedText;
      if (dirty !== doc.dirty) set((s) => ({ documents: s.documents.map((d) => (d.id === id ? { ...d, dirty } : d)) }));
      persistDraft(id);
      if (showRecentCompile(set, get, id, doc.name, model)) return;
      debounce(`compile:${id}`, COMPILE_DEBOUNCE_MS, () => void get().compileNow(id));
      void showHostCachedCompile(set, get, id, doc.name, model);
    },

    compileNow: async (id) => {
      const doc = get().documents.find((d) => d.id === id);
      const model = getModel(id);
      // A bundle's source is never compiled here: its panels show the compile the bundle recorded.
      if (!doc || !model || doc.readOnly) return;
      const generation = (get().compiles[id]?.generation ?? 0) + 1;
      const previous = get().compiles[id];
      const lastGood = previous?.lastGood ?? null;
      set((s) => ({ compiles: { ...s.compiles, [id]: { status: 'compiling', result: previous?.result ?? null, lastGood, message: null, generation } } }));
      const options = requestOptions(get);
      const source = model.getValue();
      const isLatest = () => get().compiles[id]?.generation === generation && getModel(id) === model;
      try {
        const result = await get().api.invoke('compile.run', { source, sourceName: doc.name, options, backend: 'auto', document: id });
        recentCompiles.set(compileKey(source, doc.name, options), result);
        if (!isLatest()) return; // a newer edit has its own compile: this result is stale
        setDiagnostics(model, result);
        set((s) => ({ compiles: { ...s.compiles, [id]: { status: 'done', result, lastGood: result.ok ? result : lastGood, message: null, generation } } }));
      } catch (error) {
        if (!isLatest()) return;
        set((s) => ({
          compiles: { ...s.compiles, [id]: { status: 'stopped', result: previous?.result ?? null, lastGood, message: message(error), generation } },
        }));
      }
    },

    cancelCompile: async () => {
      await get().api.invoke('compile.cancel', {});
    },

    setCompileOptions: (options) => {
      set((s) => ({ compileOptions: { ...s.compileOptions, ...options } }));
      for (const d of get().documents) void get().compileNow(d.id);
    },
  };
}
