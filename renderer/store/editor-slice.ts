import type { StateCreator } from 'zustand';

import type { CompileOptionsInput } from '../../core/compile/compile-options';
import type { CompileResult } from '../../core/compile/compile-result';
import type { Draft, KeptPlan, RestoredDraft } from '../../core/api/drafts';
import { BoundedCache } from '../../core/bounded-cache';
import { MAX_SOURCE_BYTES } from '../../core/limits';
import type { LaunchForm } from '../../core/plan/plan-launch';
import { openDocumentForRef, sourceCandidates, type OpenSource, type SourceContext, type SourceRef } from '../../core/workspace/source-link';
import { markLine } from '../editor/line-mark';
import { setDiagnostics } from '../editor/markers';
import { createModel, disposeModel, getModel } from '../editor/models';
import type { DocumentRun } from './run-slice';
import type { WorkbenchState } from './store';

export interface DocumentState {
  id: string;
  path: string | null;
  name: string;
  savedText: string | null;
  savedMtimeMs: number | null;
  dirty: boolean;
  order: number;
  /**
   * A file opened from a diagnostic bundle: shown read-only, never compiled here (its panels show the bundle's
   * own compile), never kept as a draft. `bundle` is the bundle's path.
   */
  readOnly?: { bundle: string };
}

export interface CompileState {
  status: 'compiling' | 'done' | 'stopped';
  result: CompileResult | null;
  /** The last compile of this document that succeeded: what the panels keep showing, marked stale, while the text does not compile. */
  lastGood: CompileResult | null;
  message: string | null;
  generation: number;
}

/** A line to show in a document: the editor moves there and focuses once that document is on screen. */
export interface RevealRequest {
  docId: string;
  line: number;
  column: number;
  seq: number;
}

/**
 * A file the workbench cannot find by itself, so the person is asked where it is: the file a source link
 * names, or the file of a recorded launch's kernel (to load that launch into its panel).
 */
export type LocateRequest =
  | { kind: 'line'; ref: SourceRef; tried: string[]; onFound?: (docId: string) => void; remember: boolean }
  | { kind: 'launch'; entry: string; launch: LaunchForm; deviceName: string | null };

export type EditorOptions = Omit<CompileOptionsInput, 'arch'> & { arch: string | null };

export interface EditorSlice {
  documents: DocumentState[];
  activeId: string | null;
  compiles: Record<string, CompileState>;
  compileOptions: EditorOptions;
  /** A note above the editor; one about a document (`docId`) shows only while that document is in front. */
  notice: { kind: 'error' | 'info'; text: string; docId?: string } | null;
  reveal: RevealRequest | null;
  locate: LocateRequest | null;
  /**
   * The person's answers to "Where is …?", by the file as the link names it: the path they gave (or the open
   * file they chose). Asked once, kept for the session: the next link to that file goes there without asking.
   */
  located: Record<string, { path: string | null; docId: string }>;
  restoreDocuments(): Promise<void>;
  /** Keeps the document (its text and its plan) as a draft on the host, soon: after an edit, or a change to its plan. */
  keepDraft(id: string): void;
  /** Opens a file (or shows it, when it is open): its document's id, or null with a notice saying why not. */
  openPath(path: string): Promise<string | null>;
  /** Shows a line of an open document: its tab, the line marked in the gutter and highlighted, the cursor there. */
  revealInDocument(docId: string, line: number, column?: number): void;
  /**
   * Opens the file a result, diagnostic or finding names and shows its line; asks where it is when it cannot
   * be found. `onFound` hears which document it turned out to be (found, or pointed out in the dialog).
   */
  revealSource(ref: SourceRef, context: SourceContext, onFound?: (docId: string) => void): Promise<void>;
  /** Asks which file defines a recorded launch's kernel, to load the launch into that file's panel. */
  locateLaunch(entry: string, launch: LaunchForm, deviceName: string | null): void;
  /** The answer to a locate request: the file's path, or an open document. */
  locateAt(path: string): Promise<boolean>;
  locateDocument(docId: string): void;
  cancelLocate(): void;
  newDocument(name: string, text: string): void;
  /** Opens a bundle's source read-only, with the bundle's own compile for its panels and markers: its document's id. */
  openReadOnly(name: string, text: string, bundle: string, compile: CompileResult | null): string;
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
/** Past this size a keystroke does not ask the host's cache (hashing the text costs more than it saves). */
const HOST_CACHE_PROBE_LIMIT = 1024 * 1024;
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
/**
 * A document's attached plan as a draft keeps it, within the draft's limits; null when it has none (or one larger
 * than a plan file may be, which is not kept: its file is, and the draft is never refused for it).
 */
function keptPlan(run: DocumentRun | undefined): KeptPlan | null {
  if (!run?.plan || (JSON.stringify(run.plan.plan) ?? '').length > MAX_SOURCE_BYTES) return null;
  const { kernel, grid, block, smem } = run.launch;
  return {
    label: run.plan.label.slice(0, 4096),
    planPath: run.plan.planPath,
    sourcePaths: run.plan.sourcePaths.slice(0, 16),
    plan: run.plan.plan,
    launchStep: run.plan.launchStep,
    launch: { kernel: kernel.slice(0, 1024), grid: grid.slice(0, 256), block: block.slice(0, 256), smem: smem.slice(0, 256) },
  };
}
const newId = () => Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

type SetState = Parameters<StateCreator<WorkbenchState, [], [], EditorSlice>>[0];

/**
 * One draft back in the editor with its plan, or — its file opened meanwhile — lending that document its unsaved
 * text (and its plan, where it was opened without one) and going. The reason its plan could not come back, if so.
 */
function restoreDraftInto(get: () => WorkbenchState, set: SetState, d: RestoredDraft, openedMeanwhile: boolean): string | null {
  if (get().documents.some((x) => x.id === d.id)) return null;
  const same = d.path !== null ? get().documents.find((x) => x.path === d.path) : undefined;
  if (same) {
    const model = getModel(same.id);
    if (model && d.text !== d.savedText && model.getValue() === same.savedText) model.setValue(d.text);
    // The plan opened with it is the one asked for; a file opened without one gets the kept plan back.
    if (d.plan && !get().runs[same.id]?.plan) get().restorePlan(same.id, d.plan);
    void get()
      .api.invoke('drafts.discard', { id: d.id })
      .catch(() => undefined);
    return null;
  }
  createModel(d.id, d.text, d.name);
  set((s) => ({
    documents: [
      ...s.documents,
      { id: d.id, path: d.path, name: d.name, savedText: d.savedText, savedMtimeMs: d.savedMtimeMs, dirty: d.savedText !== d.text, order: d.order },
    ],
    activeId: openedMeanwhile ? s.activeId : d.id,
  }));
  if (d.plan) get().restorePlan(d.id, d.plan);
  void get().compileNow(d.id);
  return d.planProblem ? `${d.name}: ${d.planProblem}` : null;
}

/** The open files (not a bundle's) as a link is matched against them: path, name, the kernels their last good compile defined. */
function openSources(s: Pick<EditorSlice, 'documents' | 'compiles'>): OpenSource[] {
  const kernelsOf = (id: string) => (s.compiles[id]?.lastGood ?? s.compiles[id]?.result)?.kernels.map((k) => k.name) ?? [];
  return s.documents.filter((d) => !d.readOnly).map((d) => ({ id: d.id, path: d.path, name: d.name, kernels: kernelsOf(d.id) }));
}

export const createEditorSlice: StateCreator<WorkbenchState, [], [], EditorSlice> = (set, get) => {
  const persistDraft = (id: string) =>
    debounce(`draft:${id}`, DRAFT_DEBOUNCE_MS, () => {
      const doc = get().documents.find((d) => d.id === id);
      const model = getModel(id);
      // A bundle's file is the bundle's: opening one writes nothing on the host.
      if (!doc || !model || doc.readOnly) return;
      const draft: Draft = {
        id,
        path: doc.path,
        name: doc.name,
        text: model.getValue(),
        savedText: doc.savedText,
        savedMtimeMs: doc.savedMtimeMs,
        order: doc.order,
        // The plan is part of the document: kept with it, as edited, with the launch panel as typed.
        plan: keptPlan(get().runs[id]),
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
    const lastGood = known.ok ? result : (get().compiles[id]?.lastGood ?? null);
    set((s) => ({ compiles: { ...s.compiles, [id]: { status: 'done', result, lastGood, message: null, generation } } }));
    return true;
  };

  /**
   * Asks the host's compile cache for the text just typed, at once (no debounce, no compile): on a hit
   * the markers update now and the debounced compile is called off. A miss or an error changes nothing.
   */
  const showHostCachedCompile = async (id: string, name: string, model: NonNullable<ReturnType<typeof getModel>>): Promise<void> => {
    const source = model.getValue();
    if (source.length > HOST_CACHE_PROBE_LIMIT) return;
    const options = requestOptions();
    const generation = get().compiles[id]?.generation ?? 0;
    const cached = await get()
      .api.invoke('compile.cached', { source, sourceName: name, options, backend: 'auto' })
      .catch(() => null);
    if (!cached || getModel(id) !== model || model.getValue() !== source || (get().compiles[id]?.generation ?? 0) !== generation) return;
    recentCompiles.set(compileKey(source, name, options), cached);
    showRecentCompile(id, name, model);
  };

  /** Reads a file into a new document (or finds its open one); throws what the host said. */
  const readIntoDocument = async (path: string): Promise<string> => {
    const existing = get().documents.find((d) => d.path === path);
    if (existing) return existing.id;
    const file = await get().api.invoke('files.read', { path });
    const open = get().documents.find((d) => d.path === file.path);
    if (open) return open.id;
    const id = newId();
    addDocument({ id, path: file.path, name: file.path.split('/').pop() ?? file.path, savedText: file.text, savedMtimeMs: file.mtimeMs }, file.text);
    return id;
  };
  let revealSeq = 0;

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
    reveal: null,
    locate: null,
    located: {},

    keepDraft: (id) => persistDraft(id),

    restoreDocuments: async () => {
      const api = get().api;
      try {
        const drafts = await api.invoke('drafts.list', {});
        // Something may have been opened while the drafts were read (a sample from the gallery on first
        // load): that document, its plan and its being active stay; a draft of the same file lends it its
        // unsaved text and goes, so one file is never two tabs.
        const openedMeanwhile = get().activeId !== null;
        const dropped: string[] = [];
        for (const d of drafts) {
          const problem = restoreDraftInto(get, set, d, openedMeanwhile);
          if (problem) dropped.push(problem);
        }
        if (dropped.length)
          set({
            notice: {
              kind: 'error',
              text: `The plan kept with ${dropped.length === 1 ? 'a file' : `${dropped.length} files`} could not be restored, so the file is back without it — open its plan again (Failure gallery, or Load plan): ${dropped.join('; ')}`,
            },
          });
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
      try {
        const id = await readIntoDocument(path);
        set({ activeId: id });
        return id;
      } catch (error) {
        set({ notice: { kind: 'error', text: message(error) } });
        return null;
      }
    },

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
        const id = get().documents.find((d) => d.path === path)?.id ?? (await readIntoDocument(path).catch(() => null));
        if (id) return found(id);
      }
      // A bundle's links are its own files or nothing: never a file of this machine, never an earlier answer.
      if (!context.onlyDocuments) {
        const known = get().located[ref.file];
        const again = known && !getModel(known.docId) && known.path ? await readIntoDocument(known.path).catch(() => null) : null;
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
      if (request.kind === 'line') {
        if (request.remember) {
          const path = get().documents.find((d) => d.id === docId)?.path ?? null;
          set((s) => ({ located: { ...s.located, [request.ref.file]: { path, docId } } }));
        }
        request.onFound?.(docId);
        return get().revealInDocument(docId, request.ref.line, request.ref.column);
      }
      // A recorded launch: into this file's panel, checked against the device that recorded it where there is a profile of it.
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
    },

    cancelLocate: () => set({ locate: null }),

    newDocument: (name, text) => addDocument({ id: newId(), path: null, name, savedText: null, savedMtimeMs: null }, text),

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

    edited: (id) => {
      const doc = get().documents.find((d) => d.id === id);
      const model = getModel(id);
      if (!doc || !model || doc.readOnly) return;
      const dirty = model.getValue() !== doc.savedText;
      if (dirty !== doc.dirty) set((s) => ({ documents: s.documents.map((d) => (d.id === id ? { ...d, dirty } : d)) }));
      persistDraft(id);
      if (showRecentCompile(id, doc.name, model)) return;
      debounce(`compile:${id}`, COMPILE_DEBOUNCE_MS, () => void get().compileNow(id));
      void showHostCachedCompile(id, doc.name, model);
    },

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

    compileNow: async (id) => {
      const doc = get().documents.find((d) => d.id === id);
      const model = getModel(id);
      // A bundle's source is never compiled here: its panels show the compile the bundle recorded.
      if (!doc || !model || doc.readOnly) return;
      const generation = (get().compiles[id]?.generation ?? 0) + 1;
      const previous = get().compiles[id];
      const lastGood = previous?.lastGood ?? null;
      set((s) => ({ compiles: { ...s.compiles, [id]: { status: 'compiling', result: previous?.result ?? null, lastGood, message: null, generation } } }));
      const options = requestOptions();
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

    dismissNotice: () => set({ notice: null }),
  };
};
