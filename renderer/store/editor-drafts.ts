import type { Draft, KeptPlan, RestoredDraft } from '../../core/api/drafts';
import { MAX_SOURCE_BYTES } from '../../core/limits';
import { createModel, getModel } from '../editor/models';
import type { EditorSlice } from './editor-slice';
import { debounce, message, type EditorGet, type EditorSet } from './editor-kit';
import type { DocumentRun } from './run-slice';

const DRAFT_DEBOUNCE_MS = 400;

/** Keeps a document as a draft on the host, soon (debounced): its text, and its plan as the launch panel has it. */
export type PersistDraft = (id: string) => void;

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

/** The store's draft keeper: what every edit, save and new document calls. */
export function draftKeeper(set: EditorSet, get: EditorGet): PersistDraft {
  return (id) =>
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
}

/**
 * One draft back in the editor with its plan, or — its file opened meanwhile — lending that document its unsaved
 * text (and its plan, where it was opened without one) and going. The reason its plan could not come back, if so.
 */
function restoreDraftInto(get: EditorGet, set: EditorSet, d: RestoredDraft, openedMeanwhile: boolean): string | null {
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

/** Drafts: keeping a document on the host as it is edited, and the open files coming back at the next start. */
export function editorDraftActions(set: EditorSet, get: EditorGet, persistDraft: PersistDraft): Pick<EditorSlice, 'keepDraft' | 'restoreDocuments'> {
  return {
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
  };
}
