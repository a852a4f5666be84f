import type { StateCreator } from 'zustand';

import type { SanitizerTool } from '../../core/sanitizer/findings';
import { SANITIZER_BUSY, sanitizerBusyMessage } from '../../core/sanitizer/sanitizer-busy';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import type { SanitizeOrigin, SanitizerSlice } from './sanitizer-slice';
import type { WorkbenchState } from './store';

type SanitizerSet = Parameters<StateCreator<WorkbenchState, [], [], SanitizerSlice>>[0];
type SanitizerGet = () => WorkbenchState;
type Progress = (change: Partial<NonNullable<SanitizerSlice['sanitizeProgress']>>) => void;
/** What one run under a tool does once it may start: its report, and where the report came from. */
type ToolWork = (signal: AbortSignal, progress: Progress) => Promise<{ report: SanitizeReport; origin: SanitizeOrigin }>;

/** The re-run under way, to cancel it. */
let sanitizeAbort: AbortController | null = null;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
const codeOf = (error: unknown) => (error as { code?: unknown } | null)?.code;

/** Where the run on screen is cancelled, as a refusal in this window says it. */
const CANCEL_HERE = 'the Cancel button beside its progress, in the Sanitizer tab';

/**
 * One run under a tool, whatever it runs: the report on screen (and its marks) goes, progress shows, Cancel
 * reaches it, and it ends in a report or in the reason there is none.
 */
function toolRunner(set: SanitizerSet, get: SanitizerGet) {
  const refuse = (text: string) => set((s) => ({ sanitizeRefused: { message: text, seq: (s.sanitizeRefused?.seq ?? 0) + 1 }, sanitizeSeq: s.sanitizeSeq + 1 }));
  return async (tool: SanitizerTool, label: string, stopped: string, work: ToolWork): Promise<void> => {
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
}

/** Runs under compute-sanitizer: a plan made here, a program on the host, and the Cancel that stops either. */
export function sanitizerRunActions(set: SanitizerSet, get: SanitizerGet): Pick<SanitizerSlice, 'sanitizeRun' | 'sanitizeProgram' | 'cancelSanitize'> {
  const underTool = toolRunner(set, get);
  return {
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

    cancelSanitize: () => sanitizeAbort?.abort(),
  };
}
