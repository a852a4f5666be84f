import type { StateCreator } from 'zustand';

import type { RunEvent } from '../../core/api/channels';
import { planMatchesOutcome } from '../../core/plan/recorded-plan';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { recordedLaunch } from '../../core/runner/recorded-launch';
import type { FindingPlace } from '../../core/sanitizer/finding-places';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { dirnameOf } from '../../core/workspace/paths';
import type { SourceContext } from '../../core/workspace/source-link';
import { showSanitizerMarks } from '../editor/sanitizer-markers';
import { documentRun } from './run-slice';
import { findingDocuments, findingHints, sanitizerFindingActions } from './sanitizer-findings';
import { sanitizerRunActions } from './sanitizer-runs';
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

/** Which file a finding means, and which documents its marks go on: in sanitizer-findings.ts, exported here as before. */
export { findingDocuments, findingHints };

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

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

/**
 * The findings view's report and the runs under compute-sanitizer that make one. Runs are in sanitizer-runs.ts,
 * showing a finding's line in sanitizer-findings.ts; opening a saved report and the settings are here.
 */
export const createSanitizerSlice: StateCreator<WorkbenchState, [], [], SanitizerSlice> = (set, get) => ({
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

  ...sanitizerRunActions(set, get),

  autoSanitize: false,
  setAutoSanitize: (on) => {
    set({ autoSanitize: on });
    get()
      .api.invoke('workspace.set', { autoSanitize: on })
      .catch((error) => set({ notice: { kind: 'error', text: `The setting could not be kept for next time: ${message(error)}` } }));
  },

  dismissSanitizer: () => set({ sanitizeReport: null, sanitizeOrigin: null, sanitizeError: null, sanitizeRefused: null, sanitizeFiles: {} }),

  ...sanitizerFindingActions(set, get),
});
