import type { StateCreator } from 'zustand';

import type { RunEvent } from '../../core/api/channels';
import { planMatchesOutcome } from '../../core/plan/recorded-plan';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { recordedLaunch } from '../../core/runner/recorded-launch';
import { documentForPlace, foldersOf, placeCandidates, type FindingPlace, type PlaceHints } from '../../core/sanitizer/finding-places';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import { SANITIZER_BUSY, sanitizerBusyMessage } from '../../core/sanitizer/sanitizer-busy';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { basenameOf, dirnameOf } from '../../core/workspace/paths';
import { EMPTY_SOURCE_CONTEXT, type SourceContext } from '../../core/workspace/source-link';
import { getModel } from '../editor/models';
import { showSanitizerMarks } from '../editor/sanitizer-markers';
import { documentRun } from './run-slice';
import type { WorkbenchState, WorkbenchStore } from './store';

/** Where the report on screen came from: a file someone saved, or a re-run of a plan made here. */
export type SanitizeOrigin =
  /** A saved report: its XML (with the text beside it), or the text the tool printed alone (xmlPath null). */
  | { kind: 'file'; xmlPath: string | null; textPath: string | null }
  | { kind: 'run'; label: string; planPath: string | null; sources: SourceContext; run: RunOutcome }
  | { kind: 'program'; command: string[]; cwd: string }
  /** A diagnostic bundle's report: its findings belong to the bundle's own (read-only) files, never to files here. */
  | { kind: 'bundle'; path: string; sources: SourceContext };

/** A program to run under a tool (Sanitize a program): its words as split from the command line, where, with what. */
export interface SanitizeProgramRequest {
  tool: SanitizerTool;
  command: string[];
  cwd: string;
  env: Record<string, string>;
}

/** A plan to run under a tool, and how to find the files its findings name. */
export interface SanitizeRequest {
  tool: SanitizerTool;
  plan: unknown;
  planPath: string | null;
  /** As the view names it: the plan's file, or "the plan of broken.cu". */
  label: string;
  sources: SourceContext;
}

export interface SanitizerSlice {
  /** The report the findings view shows, and the editor marks: one at a time. */
  sanitizeReport: SanitizeReport | null;
  sanitizeOrigin: SanitizeOrigin | null;
  /** The re-run under way: its phase, how many findings the tool has printed so far, and when it started (this clock). */
  sanitizeProgress: { tool: SanitizerTool; label: string; phase: RunEvent['phase'] | null; findings: number; startedAtMs: number } | null;
  /** Why the last re-run gave no report (no compute-sanitizer, cancelled, the host's message). */
  sanitizeError: { message: string; code: string } | null;
  /**
   * A run asked for while another ran under the tool, and not started: which one runs, since when, what to do. Here
   * (the run on screen) or from the host (another window's run). What was on screen stays; the next start clears it.
   */
  sanitizeRefused: { message: string; seq: number } | null;
  /** Files of the report the person pointed out (or a click found): the path as the report names it → document. */
  sanitizeFiles: Record<string, string>;
  /** Goes up whenever the findings view has news (a report, a re-run starting, its error): the view comes forward. */
  sanitizeSeq: number;
  /** Reads a saved report (--xml --save) and its text; null when shown, else what went wrong (the shown report stays). */
  /** A saved report: its XML and the text printed with it, or either alone; null when shown, else why not. */
  openSanitizerReport(xmlPath: string | null, textPath: string | null): Promise<string | null>;
  sanitizeRun(request: SanitizeRequest): Promise<void>;
  sanitizeProgram(request: SanitizeProgramRequest): Promise<void>;
  /** Re-run a failed run under its diagnosis's tool at once (kept for the workspace, on the host). */
  autoSanitize: boolean;
  setAutoSanitize(on: boolean): void;
  cancelSanitize(): void;
  dismissSanitizer(): void;
  /** Opens the file a finding names (asking where, when it cannot be told) and shows its line. */
  revealFinding(place: Pick<FindingPlace, 'file' | 'line' | 'kernel'>): Promise<void>;
}

/** What the re-run button would run for the outcome on screen, or why it cannot. */
export type RerunSource = ({ ok: true } & Omit<SanitizeRequest, 'tool'>) | { ok: false; why: string };

/**
 * The plan that produced the outcome on screen: the very plan of a run made here; for a recorded result,
 * an open plan whose steps and launches are the ones it recorded (the file's own first, on screen), since a
 * result keeps no copy of its plan.
 */
export function rerunSource(s: WorkbenchState): RerunSource {
  const outcome = s.outcome;
  const origin = s.outcomeOrigin;
  if (!outcome || !origin) return { ok: false, why: 'There is no run to repeat.' };
  if (origin.bundle)
    return {
      ok: false,
      why: 'This result is from a diagnostic bundle, read-only: nothing in it runs by itself. Use Run this plan again (in the bundle’s banner) to run its plan here first.',
    };
  if (!origin.file) {
    if (origin.plan === undefined)
      return { ok: false, why: 'The plan of this run is no longer at hand: run it again, then re-run it under compute-sanitizer.' };
    return {
      ok: true,
      plan: origin.plan,
      planPath: origin.planPath,
      label: origin.planPath ?? 'the plan that just ran',
      sources: origin.sources,
    };
  }
  const entry = outcome.diagnosis.kernel?.entry ?? recordedLaunch(outcome)?.entry ?? 'its kernel';
  const ordered = [...s.documents].sort((a, b) => (a.id === s.activeId ? -1 : b.id === s.activeId ? 1 : 0));
  for (const doc of ordered) {
    const attached = documentRun(s, doc.id).plan;
    if (!attached || !planMatchesOutcome(attached.plan, outcome)) continue;
    return {
      ok: true,
      plan: attached.plan,
      planPath: attached.planPath,
      label: attached.planPath ?? attached.label,
      sources: {
        documents: { [doc.name]: doc.id },
        paths: attached.sourcePaths,
        folders: attached.planPath ? [dirnameOf(attached.planPath)] : [],
      },
    };
  }
  return {
    ok: false,
    why:
      `This result was recorded elsewhere and keeps no copy of its plan, and no plan open here runs its steps (${entry}): ` +
      'load its plan first (Load plan in the Run section, or the sample from the Failure gallery), then re-run.',
  };
}

/** The re-run under way, to cancel it. */
let sanitizeAbort: AbortController | null = null;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
const codeOf = (error: unknown) => (error as { code?: unknown } | null)?.code;

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

/** Keeps the editor's marks in step with the store: a new report, a dismissed one, a file opened or closed. Returns the unsubscribe. */
export function followSanitizerReport(store: WorkbenchStore): () => void {
  const apply = (s: WorkbenchState) => showSanitizerMarks(s.sanitizeReport, findingDocuments(s, s.documents), findingHints(s));
  apply(store.getState());
  return store.subscribe((s, previous) => {
    if (
      s.sanitizeReport !== previous.sanitizeReport ||
      s.sanitizeOrigin !== previous.sanitizeOrigin ||
      s.sanitizeFiles !== previous.sanitizeFiles ||
      s.documents !== previous.documents
    )
      apply(s);
  });
}

/** Where the run on screen is cancelled, as a refusal in this window says it. */
const CANCEL_HERE = 'the Cancel button beside its progress, in the Sanitizer tab';

export const createSanitizerSlice: StateCreator<WorkbenchState, [], [], SanitizerSlice> = (set, get) => {
  type Progress = (change: Partial<NonNullable<SanitizerSlice['sanitizeProgress']>>) => void;
  const refuse = (text: string) => set((s) => ({ sanitizeRefused: { message: text, seq: (s.sanitizeRefused?.seq ?? 0) + 1 }, sanitizeSeq: s.sanitizeSeq + 1 }));
  /**
   * One run under a tool, whatever it runs: the report on screen (and its marks) goes, progress shows, Cancel
   * reaches it, and it ends in a report or in the reason there is none.
   */
  const underTool = async (
    tool: SanitizerTool,
    label: string,
    stopped: string,
    work: (signal: AbortSignal, progress: Progress) => Promise<{ report: SanitizeReport; origin: SanitizeOrigin }>,
  ): Promise<void> => {
    const running = get().sanitizeProgress;
    // Silence is a verdict: a second run while one is under way is refused in words, and the view comes forward to say so.
    if (running) return refuse(sanitizerBusyMessage({ tool: running.tool, what: running.label, startedAtMs: running.startedAtMs }, Date.now(), CANCEL_HERE));
    const controller = new AbortController();
    sanitizeAbort = controller;
    const shown = {
      sanitizeReport: get().sanitizeReport,
      sanitizeOrigin: get().sanitizeOrigin,
      sanitizeError: get().sanitizeError,
      sanitizeFiles: get().sanitizeFiles,
    };
    set((s) => ({
      sanitizeReport: null,
      sanitizeOrigin: null,
      sanitizeError: null,
      sanitizeRefused: null,
      sanitizeFiles: {},
      sanitizeProgress: { tool, label, phase: null, findings: 0, startedAtMs: Date.now() },
      sanitizeSeq: s.sanitizeSeq + 1,
    }));
    const progress: Progress = (change) =>
      set((s) => (s.sanitizeProgress && sanitizeAbort === controller ? { sanitizeProgress: { ...s.sanitizeProgress, ...change } } : {}));
    try {
      const { report, origin } = await work(controller.signal, progress);
      set((s) => ({ sanitizeReport: report, sanitizeOrigin: origin, sanitizeSeq: s.sanitizeSeq + 1 }));
    } catch (error) {
      const code = controller.signal.aborted ? 'CANCELLED' : String(codeOf(error) ?? 'HOST_ERROR');
      // The host runs another window's: nothing of this one ran, so what was on screen comes back, with why.
      if (code === SANITIZER_BUSY) {
        set(shown);
        refuse(message(error));
        return;
      }
      set((s) => ({
        sanitizeError: {
          code,
          message:
            code === 'CANCELLED'
              ? `Cancelled: ${tool} was stopped, with ${stopped}. Nothing was kept from it.`
              : `${tool} could not run ${label}: ${message(error)}`,
        },
        sanitizeSeq: s.sanitizeSeq + 1,
      }));
    } finally {
      if (sanitizeAbort === controller) sanitizeAbort = null;
      set({ sanitizeProgress: null });
    }
  };
  return {
    sanitizeReport: null,
    sanitizeOrigin: null,
    sanitizeProgress: null,
    sanitizeError: null,
    sanitizeRefused: null,
    sanitizeFiles: {},
    sanitizeSeq: 0,

    openSanitizerReport: async (xmlPath, textPath) => {
      try {
        const report = await get().api.invoke('sanitize.open', { xmlPath, textPath, tool: null });
        set((s) => ({
          sanitizeReport: report,
          sanitizeOrigin: { kind: 'file', xmlPath, textPath },
          sanitizeError: null,
          sanitizeFiles: {},
          sanitizeSeq: s.sanitizeSeq + 1,
        }));
        return null;
      } catch (error) {
        return message(error);
      }
    },

    sanitizeRun: (request) =>
      underTool(request.tool, request.label, 'the program it ran', async (signal, progress) => {
        const { report, run } = await get().api.invoke(
          'sanitize.plan',
          { plan: request.plan, planPath: request.planPath, tool: request.tool },
          { signal, onEvent: (event) => (event.kind === 'phase' ? progress({ phase: event.phase }) : progress({ findings: event.count })) },
        );
        return { report, origin: { kind: 'run', label: request.label, planPath: request.planPath, sources: request.sources, run } };
      }),

    sanitizeProgram: (request) => {
      const label = request.command.join(' ');
      return underTool(request.tool, label, `${label} and what it started`, async (signal, progress) => {
        progress({ phase: 'run' });
        const report = await get().api.invoke(
          'sanitize.program',
          { command: request.command, cwd: request.cwd, env: request.env, tool: request.tool },
          { signal, onEvent: (event) => event.kind === 'findings' && progress({ findings: event.count }) },
        );
        return { report, origin: { kind: 'program', command: request.command, cwd: request.cwd } };
      });
    },

    autoSanitize: false,
    setAutoSanitize: (on) => {
      set({ autoSanitize: on });
      get()
        .api.invoke('workspace.set', { autoSanitize: on })
        .catch((error) => set({ notice: { kind: 'error', text: `The setting could not be kept for next time: ${message(error)}` } }));
    },

    cancelSanitize: () => sanitizeAbort?.abort(),

    dismissSanitizer: () => set({ sanitizeReport: null, sanitizeOrigin: null, sanitizeError: null, sanitizeRefused: null, sanitizeFiles: {} }),

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
};

/** The line's first character that is not white space: where the cursor goes, so the status bar reads the code's column. */
function firstColumn(docId: string, line: number): number {
  const model = getModel(docId);
  if (!model || line < 1 || line > model.getLineCount()) return 1;
  return model.getLineFirstNonWhitespaceColumn(line) || 1;
}
