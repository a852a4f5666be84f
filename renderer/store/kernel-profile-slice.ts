import type { StateCreator } from 'zustand';

import type { ProfileEvent } from '../../core/api/channels';
import type { Profile } from '../../core/kernel-profile/profile';
import { profileSourceFile, sameKernel } from '../../core/kernel-profile/profile-view';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { documentForPlace, foldersOf } from '../../core/sanitizer/finding-places';
import { basenameOf } from '../../core/workspace/paths';
import { EMPTY_SOURCE_CONTEXT, type SourceContext } from '../../core/workspace/source-link';
import { getModel } from '../editor/models';
import { showProfileMarks } from '../editor/profile-markers';
import type { WorkbenchState, WorkbenchStore } from './store';

/**
 * The kernel profile on screen (the Profile tab, the editor's heat margin): one at a time, as the sanitizer's report
 * is. Made here by Profile, opened from a file, or a bundle's own. The one shown before it is kept beside it when it
 * is of the same kernel in the same file (an edit, then Profile again) or when either was opened from a file (the
 * person chose to set them side by side): Compare shows each figure before and after.
 */
export type KernelProfileOrigin =
  /** Profiled here: the document and the text it ran (its lines are that text's), the run's outcome, and the id the host holds the profile under. */
  | { kind: 'run'; docId: string; docName: string; planPath: string | null; source: string; outcome: RunOutcome; profileId: string }
  | { kind: 'file'; path: string }
  /** A bundle's: its lines are in the bundle's own read-only documents, never in a file of this machine. */
  | { kind: 'bundle'; path: string; sources: SourceContext };

export interface ShownKernelProfile {
  profile: Profile;
  origin: KernelProfileOrigin;
}

/** What Profile is asked to profile: the plan as it is now, its launch step, and the document it came from. */
export interface ProfileRequest {
  plan: unknown;
  planPath: string | null;
  step: number | null;
  docId: string;
  /** As the progress names it: the plan's file, or "the plan of broken.cu". */
  label: string;
  sources: SourceContext;
}

export interface KernelProfileSlice {
  kernelProfile: ShownKernelProfile | null;
  kernelProfilePrevious: ShownKernelProfile | null;
  /** Compare is on: the tab shows each figure before (the previous) and after (the one on screen). */
  kernelProfileComparing: boolean;
  kernelProfileProgress: { label: string; phase: ProfileEvent['phase'] | null; startedAtMs: number } | null;
  /** Why the last Profile or Open gave no profile; the profile on screen stays. */
  kernelProfileError: string | null;
  /** Goes up whenever the Profile tab has news (a profile, one starting, an error): the tab comes forward. */
  kernelProfileSeq: number;
  profileKernel(request: ProfileRequest): Promise<void>;
  cancelProfile(): void;
  /** Reads a saved profile; null when it is shown, else why not (what was on screen stays). */
  openKernelProfile(path: string): Promise<string | null>;
  showKernelProfile(shown: ShownKernelProfile): void;
  setKernelProfileComparing(on: boolean): void;
  dismissKernelProfile(): void;
  /** Opens the profile's file at a line (asking where it is when that cannot be told). */
  revealProfileLine(line: number): Promise<void>;
}

/** The profile under way, to cancel it. */
let profileAbort: AbortController | null = null;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The open document a profile's lines belong to, or null: never a guess, never a file other than the profile's. */
export function kernelProfileDocument(s: Pick<WorkbenchState, 'documents' | 'compiles'>, shown: ShownKernelProfile | null): string | null {
  if (!shown) return null;
  const { profile, origin } = shown;
  if (origin.kind === 'run') return s.documents.some((d) => d.id === origin.docId) ? origin.docId : null;
  const name = basenameOf(profileSourceFile(profile));
  if (origin.kind === 'bundle') {
    const id = origin.sources.documents[profile.kernel.sourceFile] ?? origin.sources.documents[name];
    return id && s.documents.some((d) => d.id === id) ? id : null;
  }
  // A file from elsewhere: the open file at its path, else the one open file of its name; a bundle's files are not ours.
  const here = s.documents.filter((d) => !d.readOnly);
  const id = documentForPlace(profileSourceFile(profile), here, { chosen: {}, documents: {}, folders: foldersOf([origin.path]) });
  if (!id) return null;
  // A file that compiled without the profiled kernel is another file of the same name.
  const kernels = (s.compiles[id]?.lastGood ?? s.compiles[id]?.result)?.kernels ?? [];
  return kernels.length && !kernels.some((k) => k.name === profile.kernel.entry) ? null : id;
}

/** Whether the document's text is still the text a profile made here ran: its lines are only that text's. */
export function kernelProfileCurrent(shown: ShownKernelProfile | null): boolean {
  if (shown?.origin.kind !== 'run') return true;
  return getModel(shown.origin.docId)?.getValue() === shown.origin.source;
}

/** Keeps the editor's profile marks in step with the store: a new profile, its file opened or closed. Returns the unsubscribe. */
export function followKernelProfile(store: WorkbenchStore): () => void {
  let shown: { profile: ShownKernelProfile | null; docId: string | null } = { profile: null, docId: null };
  const apply = (s: WorkbenchState) => {
    const docId = kernelProfileDocument(s, s.kernelProfile);
    if (s.kernelProfile === shown.profile && docId === shown.docId) return;
    shown = { profile: s.kernelProfile, docId };
    const profile = s.kernelProfile;
    showProfileMarks(profile?.profile ?? null, docId, (model) => profile?.origin.kind !== 'run' || model.getValue() === profile.origin.source);
  };
  apply(store.getState());
  return store.subscribe((s, previous) => {
    if (s.kernelProfile !== previous.kernelProfile || s.documents !== previous.documents || s.compiles !== previous.compiles) apply(s);
  });
}

/** Where a profile's lines are looked for when its file is not open. */
function profileSources(shown: ShownKernelProfile): SourceContext {
  const o = shown.origin;
  if (o.kind === 'bundle') return o.sources;
  if (o.kind === 'run') return { ...EMPTY_SOURCE_CONTEXT, documents: { [o.docName]: o.docId }, folders: o.planPath ? foldersOf([o.planPath]) : [] };
  const file = profileSourceFile(shown.profile);
  return { ...EMPTY_SOURCE_CONTEXT, paths: file.startsWith('/') ? [file] : [], folders: foldersOf([o.path]) };
}

export const createKernelProfileSlice: StateCreator<WorkbenchState, [], [], KernelProfileSlice> = (set, get) => {
  /** The profile shown before `next` that stays beside it, or null. */
  const previousFor = (next: ShownKernelProfile): ShownKernelProfile | null => {
    const shown = get().kernelProfile;
    const chosen = (p: ShownKernelProfile) => p.origin.kind !== 'run';
    if (shown && (sameKernel(shown.profile, next.profile) || chosen(shown) || chosen(next))) return shown;
    const previous = get().kernelProfilePrevious;
    return previous && sameKernel(previous.profile, next.profile) ? previous : null;
  };
  const show = (next: ShownKernelProfile) =>
    set((s) => ({
      kernelProfile: next,
      kernelProfilePrevious: previousFor(next),
      kernelProfileError: null,
      kernelProfileSeq: s.kernelProfileSeq + 1,
    }));

  return {
    kernelProfile: null,
    kernelProfilePrevious: null,
    kernelProfileComparing: false,
    kernelProfileProgress: null,
    kernelProfileError: null,
    kernelProfileSeq: 0,

    profileKernel: async (request) => {
      if (get().kernelProfileProgress) return;
      const controller = new AbortController();
      profileAbort = controller;
      const doc = get().documents.find((d) => d.id === request.docId);
      const source = getModel(request.docId)?.getValue() ?? '';
      set((s) => ({
        kernelProfileProgress: { label: request.label, phase: null, startedAtMs: Date.now() },
        kernelProfileError: null,
        kernelProfileSeq: s.kernelProfileSeq + 1,
      }));
      try {
        const { outcome, profile, profileId } = await get().api.invoke(
          'profile.run',
          { plan: request.plan, planPath: request.planPath, step: request.step },
          {
            signal: controller.signal,
            onEvent: (event) => set((s) => (s.kernelProfileProgress ? { kernelProfileProgress: { ...s.kernelProfileProgress, phase: event.phase } } : {})),
          },
        );
        // The run Profile made is the run on screen too (its diagnosis, when it could not run), without taking the tab.
        get().showOutcome(outcome, { file: null, planPath: request.planPath, sources: request.sources, plan: request.plan, profiled: true });
        if (profile && profileId)
          show({
            profile,
            origin: {
              kind: 'run',
              docId: request.docId,
              docName: doc?.name ?? basenameOf(profile.kernel.sourceFile),
              planPath: request.planPath,
              source,
              outcome,
              profileId,
            },
          });
        else
          set((s) => ({
            kernelProfileError: `Nothing was profiled: the plan did not run (${outcome.diagnosis.headline}). The Run tab has its diagnosis.`,
            kernelProfileSeq: s.kernelProfileSeq + 1,
          }));
      } catch (error) {
        set((s) => ({
          kernelProfileError: controller.signal.aborted
            ? 'Cancelled: the profile was stopped and nothing was kept from it.'
            : `Profile could not run ${request.label}: ${message(error)}`,
          kernelProfileSeq: s.kernelProfileSeq + 1,
        }));
      } finally {
        if (profileAbort === controller) profileAbort = null;
        set({ kernelProfileProgress: null });
      }
    },

    cancelProfile: () => profileAbort?.abort(),

    openKernelProfile: async (path) => {
      try {
        const profile = await get().api.invoke('profile.open', { path });
        show({ profile, origin: { kind: 'file', path } });
        return null;
      } catch (error) {
        return message(error);
      }
    },

    showKernelProfile: show,

    setKernelProfileComparing: (on) => set({ kernelProfileComparing: on }),

    dismissKernelProfile: () => set({ kernelProfile: null, kernelProfilePrevious: null, kernelProfileComparing: false, kernelProfileError: null }),

    revealProfileLine: async (line) => {
      const shown = get().kernelProfile;
      if (!shown) return;
      const docId = kernelProfileDocument(get(), shown);
      if (docId && getModel(docId)) return get().revealInDocument(docId, line);
      const file = profileSourceFile(shown.profile);
      await get().revealSource(
        { file: shown.origin.kind === 'bundle' || !file.startsWith('/') ? basenameOf(file) : file, line, kernel: shown.profile.kernel.entry },
        profileSources(shown),
      );
    },
  };
};
