import type { StateCreator } from 'zustand';

import type { ChannelResponse } from '../../core/api/channels';
import { bundleSnapshotName, diagnosisExportFailedText } from '../../core/diagnose/diagnosis-bundle-text';
import type { ReportOrigin } from '../../core/diagnose/diagnosis-view-text';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { applyDiagnoseEvent, cancelledReport, startStreamed, stepAnnouncement, type StreamedDiagnosis } from '../../core/diagnose/streamed-diagnosis';
import { parseEnvironmentLines, splitCommandLine } from '../../core/text/split-command';
import { resolveShownPath } from '../../core/workspace/paths';
import type { SourceRef } from '../../core/workspace/source-link';
import type { WorkbenchState } from './store';

/** The Diagnose view's form, as typed: kept in the store, so a visit to another view (a line opened) loses nothing. */
export interface DiagnoseForm {
  line: string;
  /** As typed: a full path, or one inside the host's home folder; empty until typed (the home folder then). */
  folder: string;
  envText: string;
  thorough: boolean;
  budgetMinutes: string;
}

/** Where the report on screen came from: a run here, a file opened, a run cancelled here (built from what streamed), or the open bundle. */
export type DiagnoseOrigin = ReportOrigin;

/** What diagnose.export answers: the bundle written, its size, and what it lacks. */
export type DiagnosisExport = ChannelResponse<'diagnose.export'>;

export type FolderListing = ChannelResponse<'files.list'>;

export interface DiagnoseSlice {
  diagnoseForm: DiagnoseForm;
  /** The diagnosis under way, or the last one run here: its steps and each step's output as they streamed. */
  diagnoseLive: StreamedDiagnosis | null;
  diagnoseRunning: boolean;
  diagnoseReport: DiagnosisReport | null;
  diagnoseOrigin: DiagnoseOrigin | null;
  /** What the polite status line says: each step as it starts and ends, then the verdict. */
  diagnoseStatus: string;
  /** Why nothing ran, or why the run gave no report (the host's words). */
  diagnoseError: string | null;
  setDiagnoseForm(change: Partial<DiagnoseForm>): void;
  /** Runs the form's command (split into words, never given to a shell); returns why it did not start, or null. */
  startDiagnosis(): Promise<string | null>;
  /**
   * The report's own program again (its words, folder and variables, not the form's), with the sanitizer passes a
   * clean run offered: what the report asks a person to do, done. Returns why it did not start, or null; a run the
   * host refused is said above the report, which stays on screen.
   */
  runOfferedPasses(): Promise<string | null>;
  cancelDiagnosis(): void;
  /** Opens a diagnosis saved as JSON; null when shown, else what went wrong (the report on screen stays). */
  openDiagnosis(path: string): Promise<string | null>;
  /**
   * The open bundle's diagnosis in this view (marked as opened from the bundle): null when shown, else why not. Its
   * snapshot's path is the host's copy of the bundle's entry, so Open in the Memory tab works as for any report.
   */
  showBundleDiagnosis(): string | null;
  /**
   * Writes the report the host holds by `id` as a bundle at `path` (a full path), redacted unless asked not to: what
   * was written, or what went wrong in words. Cancelled through `signal`, nothing is left behind.
   */
  exportDiagnosis(
    id: string,
    path: string,
    redact: boolean,
    signal: AbortSignal,
  ): Promise<{ ok: true; written: DiagnosisExport } | { ok: false; error: string }>;
  /** Opens the allocator's snapshot a run recorded in the Memory tab; null when shown, else what went wrong. */
  openDiagnosisSnapshot(path: string): Promise<string | null>;
  /** Opens a file the report names at its line (asking where, when it cannot be told): relative names go against the program's folder. */
  revealDiagnosisLine(at: SourceRef): Promise<void>;
  /** A folder's listing on the host, for the file browser (the home folder for null). */
  listFolder(dir: string | null): Promise<FolderListing>;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
const codeOf = (error: unknown) => (error as { code?: unknown } | null)?.code;

/** The most a budget may be (the channel's own limit): a day. */
const MAX_BUDGET_MINUTES = 24 * 60;

/** The diagnosis under way, to cancel it. */
let diagnoseAbort: AbortController | null = null;

/** The form as a request: the words, the folder, the environment and the budget, or what is wrong with them. */
type DiagnoseRequest = { command: string[]; cwd: string; env: Record<string, string>; budgetMs: number; thorough: boolean };

export function diagnoseRequest(form: DiagnoseForm, startDir: string): ({ ok: true } & DiagnoseRequest) | { ok: false; error: string } {
  const words = splitCommandLine(form.line);
  if (!words.ok) return words;
  const env = parseEnvironmentLines(form.envText);
  if (!env.ok) return env;
  const cwd = resolveShownPath(startDir, form.folder || startDir);
  if (!cwd) return { ok: false, error: 'Give the folder to run the program in.' };
  const minutes = Number(form.budgetMinutes);
  if (!Number.isFinite(minutes) || minutes < 1 || minutes > MAX_BUDGET_MINUTES)
    return { ok: false, error: `The time budget is in minutes, from 1 to ${MAX_BUDGET_MINUTES}.` };
  return { ok: true, command: words.argv, cwd, env: env.env, budgetMs: Math.round(minutes * 60_000), thorough: form.thorough };
}

type SliceArgs = Parameters<StateCreator<WorkbenchState, [], [], DiagnoseSlice>>;

/** What was on screen before a run that began from it: put back if that run cannot start, so the report is not lost. */
type OnScreen = Pick<WorkbenchState, 'diagnoseReport' | 'diagnoseOrigin' | 'diagnoseLive'>;

/**
 * A diagnosis of this request, its events streamed into the view. One that could not start says why, with `before` back
 * on screen, unless another report took the screen meanwhile (a file opened); one that failed part way keeps what streamed.
 */
async function runDiagnosis(
  set: SliceArgs[0],
  get: SliceArgs[1],
  { command, cwd, env, budgetMs, thorough }: DiagnoseRequest,
  before?: OnScreen,
): Promise<string | null> {
  const controller = new AbortController();
  diagnoseAbort = controller;
  const started = performance.now();
  const live = startStreamed({ argv: command, cwd, envChanges: env, thorough }, budgetMs, new Date().toISOString());
  set({ diagnoseLive: live, diagnoseRunning: true, diagnoseReport: null, diagnoseOrigin: null, diagnoseError: null, diagnoseStatus: 'Diagnosis started.' });
  let streamed = false;
  try {
    const report = await get().api.invoke(
      'diagnose.program',
      { command, cwd, env, thorough, budgetMs },
      {
        signal: controller.signal,
        onEvent: (event) => {
          streamed = true;
          if (diagnoseAbort !== controller) return;
          const said = stepAnnouncement(event, get().diagnoseLive);
          set((s) => ({
            diagnoseLive: s.diagnoseLive && applyDiagnoseEvent(s.diagnoseLive, event, performance.now()),
            ...(said ? { diagnoseStatus: said } : {}),
          }));
        },
      },
    );
    // Cancelled, the host still answers with its own report: the runs before the cancel, the step it stopped.
    const cancelled = controller.signal.aborted;
    set({
      diagnoseReport: report,
      diagnoseOrigin: { kind: cancelled ? 'cancelled' : 'run' },
      diagnoseStatus: `${cancelled ? 'Diagnosis cancelled' : 'Diagnosis finished'}: ${report.verdict.sentence}`,
    });
  } catch (error) {
    const now = performance.now();
    if (controller.signal.aborted || codeOf(error) === 'CANCELLED') {
      // The host did not answer the cancel in time (or the connection went): the report from what streamed.
      const report = cancelledReport(get().diagnoseLive ?? live, now, now - started);
      set({ diagnoseReport: report, diagnoseOrigin: { kind: 'cancelled' }, diagnoseStatus: `Diagnosis cancelled: ${report.verdict.sentence}` });
    } else {
      const untouched = !streamed && get().diagnoseReport === null && get().diagnoseOrigin === null;
      set({ ...(untouched ? before : {}), diagnoseError: message(error), diagnoseStatus: 'The diagnosis could not run.' });
    }
  } finally {
    if (diagnoseAbort === controller) diagnoseAbort = null;
    set({ diagnoseRunning: false });
  }
  return null;
}

export const createDiagnoseSlice: StateCreator<WorkbenchState, [], [], DiagnoseSlice> = (set, get) => ({
  diagnoseForm: { line: '', folder: '', envText: '', thorough: false, budgetMinutes: '10' },
  diagnoseLive: null,
  diagnoseRunning: false,
  diagnoseReport: null,
  diagnoseOrigin: null,
  diagnoseStatus: '',
  diagnoseError: null,

  setDiagnoseForm: (change) => set((s) => ({ diagnoseForm: { ...s.diagnoseForm, ...change } })),

  startDiagnosis: async () => {
    if (get().diagnoseRunning) return 'A diagnosis is running: wait for it, or cancel it.';
    const request = diagnoseRequest(get().diagnoseForm, get().info?.startDir ?? '/');
    if (!request.ok) return request.error;
    return runDiagnosis(set, get, request);
  },

  runOfferedPasses: async () => {
    const report = get().diagnoseReport;
    if (get().diagnoseRunning) return 'A diagnosis is running: wait for it, or cancel it.';
    if (!report || get().diagnoseOrigin?.kind !== 'run' || !report.offered.length) return 'This report offers no sanitizer passes to run here.';
    set((s) => ({ diagnoseForm: { ...s.diagnoseForm, thorough: true } }));
    const { argv, cwd, envChanges } = report.program;
    const { diagnoseReport, diagnoseOrigin, diagnoseLive } = get();
    return runDiagnosis(
      set,
      get,
      { command: argv, cwd, env: envChanges, budgetMs: report.budgetMs, thorough: true },
      { diagnoseReport, diagnoseOrigin, diagnoseLive },
    );
  },

  cancelDiagnosis: () => diagnoseAbort?.abort(),

  openDiagnosis: async (path) => {
    try {
      const report = await get().api.invoke('diagnose.open', { path });
      set({
        diagnoseReport: report,
        diagnoseOrigin: { kind: 'file', path },
        diagnoseError: null,
        // What streamed belongs to the run here, not to the file: each step's output comes from the report.
        ...(get().diagnoseRunning ? {} : { diagnoseLive: null }),
        diagnoseStatus: `Opened ${path}: ${report.verdict.sentence}`,
      });
      return null;
    } catch (error) {
      return message(error);
    }
  },

  showBundleDiagnosis: () => {
    const view = get().bundle?.view;
    if (!view?.diagnosis) return 'The open bundle holds no program’s diagnosis.';
    const report = view.diagnosis;
    set({
      diagnoseReport: report,
      diagnoseOrigin: { kind: 'bundle', path: view.path },
      diagnoseError: null,
      ...(get().diagnoseRunning ? {} : { diagnoseLive: null }),
      diagnoseStatus: `Opened the diagnosis in ${view.path}: ${report.verdict.sentence}`,
    });
    return null;
  },

  exportDiagnosis: async (id, path, redact, signal) => {
    try {
      return { ok: true, written: await get().api.invoke('diagnose.export', { id, path, redact }, { signal }) };
    } catch (error) {
      return { ok: false, error: diagnosisExportFailedText(message(error), { cancelled: signal.aborted || codeOf(error) === 'CANCELLED', path }) };
    }
  },

  openDiagnosisSnapshot: (path) => {
    // A bundle's snapshot is kept on the host under a name of its content: the Memory tab names it after the bundle.
    const origin = get().diagnoseOrigin;
    return get().openMemoryFile(path, 'file', origin?.kind === 'bundle' ? bundleSnapshotName(origin.path) : undefined);
  },

  revealDiagnosisLine: (at) => {
    const program = get().diagnoseReport?.program;
    return get().revealSource(at, { documents: {}, paths: [], folders: program ? [program.cwd] : [] });
  },

  listFolder: (dir) => get().api.invoke('files.list', { dir }),
});
