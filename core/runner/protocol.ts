import * as z from 'zod';

import { launchPlanSchema } from '../plan/plan-schema';
import type { CudaErrorInfo, FunctionAttributes, RunResult } from './run-result';

export const MAX_PAGE_ELEMENTS = 65536;

export interface BufferPage {
  runId: string;
  buffer: string;
  offset: number;
  /** Elements in the whole buffer. */
  total: number;
  values: number[];
}

/** Host -> runner. Every request has an id; the runner answers each with exactly one reply. */
export const compiledModuleSchema = z.object({
  kernel: z.string().min(1).max(64),
  /** The lowered (mangled) symbol to look up in the image. */
  symbol: z.string().min(1).max(4096),
  image: z
    .custom<Uint8Array>((v) => v instanceof Uint8Array, 'image must be bytes')
    .refine((b) => b.byteLength > 0 && b.byteLength <= 256 * 1024 * 1024, 'image must be 1 byte to 256 MiB'),
});
export type CompiledModule = z.infer<typeof compiledModuleSchema>;

/** Every request's id: the runner answers with it. */
export const requestIdSchema = z.number().int().nonnegative();

export const runnerRequestSchema = z.discriminatedUnion('type', [
  z.object({ id: requestIdSchema, type: z.literal('status') }),
  z.object({
    id: requestIdSchema,
    type: z.literal('run'),
    plan: launchPlanSchema,
    modules: z.array(compiledModuleSchema).min(1).max(64),
    /** The host's watchdog for this run: the determinism check is skipped when it could not fit. */
    timeLimitMs: z.number().int().positive().optional(),
  }),
  z.object({ id: requestIdSchema, type: z.literal('memInfo') }),
  /** A page of a buffer the last run read back: the runner keeps that data until its next run. */
  z.object({
    id: requestIdSchema,
    type: z.literal('page'),
    runId: z.string().max(64),
    buffer: z.string().max(64),
    offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    count: z.number().int().min(1).max(MAX_PAGE_ELEMENTS),
  }),
  /** Loads modules and reports each function's attributes as the driver sees them, then unloads. */
  z.object({ id: requestIdSchema, type: z.literal('inspect'), modules: z.array(compiledModuleSchema).min(1).max(64) }),
  /** For the GPU suite: launches one kernel with many configurations and reports the driver's verdicts. */
  z.object({
    id: requestIdSchema,
    type: z.literal('probe'),
    module: compiledModuleSchema,
    args: z.array(z.custom<Uint8Array>((v) => v instanceof Uint8Array)).max(64),
    configs: z.custom<Float64Array>((v) => v instanceof Float64Array && v.length % 7 === 0),
    maxDynamicSharedBytes: z.number().int().min(0).nullable(),
    /** Per row, set the dynamic shared memory limit as the runner does for a launch (main/runner/run/dynamic-shared.ts). */
    raiseDynamicShared: z.boolean().default(false),
  }),
  /** Drops a request still waiting in the runner's queue (its caller cancelled it); answered at once. */
  z.object({ id: requestIdSchema, type: z.literal('drop'), target: z.number().int().nonnegative() }),
]);
export type RunnerRequest = z.infer<typeof runnerRequestSchema>;

export interface RunnerStatus {
  pid: number;
  ordinal: number;
  /** Whether the runner holds a usable CUDA context. */
  contextReady: boolean;
  deviceName: string | null;
  /** Why there is no context (no driver, no such device, ...). */
  error: CudaErrorInfo | null;
  startupMs: number;
  /**
   * Where its start-up went: Node starting and loading the runner (before startupMs begins), the driver library,
   * the context, the warm-up run (and what went wrong in it, where something did). Absent where no context was tried.
   */
  startupPhases?: { bootMs: number; librariesMs: number; contextMs: number; warmUpMs: number; warmUpProblem: string | null };
}

/** The runner's replies: core/process/child-reply.ts, the envelope every child shares. */
export interface RunnerResults {
  status: RunnerStatus;
  run: RunResult;
  memInfo: { freeBytes: number; totalBytes: number };
  drop: { dropped: boolean };
  page: BufferPage;
  inspect: { kernel: string; symbol: string; attributes: FunctionAttributes }[];
  probe: { attributes: FunctionAttributes; launch: Int32Array; sync: Int32Array; occupancy: Int32Array };
}

/** The runner's requests, each with the body the host sends and the result it answers: typed on both sides. */
export type RunnerProtocol = {
  [K in RunnerRequest['type']]: { request: Omit<Extract<z.input<typeof runnerRequestSchema>, { type: K }>, 'id' | 'type'>; result: RunnerResults[K] };
};

/** Why a child process ended, in words a user can act on. */
export type ExitKind = 'clean' | 'crashed' | 'watchdog' | 'sticky-cuda-error' | 'killed' | 'startup-failed' | 'cancelled';

/** Which child it was: each role's exit is told in its own words. */
export type ChildRole = 'runner' | 'compile worker' | 'sanitizer runner';

/** Electron's names for how a child went (`child-process-gone` details' `reason`), for both launchers alike. */
export type GoneReason = 'clean-exit' | 'abnormal-exit' | 'killed' | 'crashed' | 'launch-failed';

export interface ExitFacts {
  code: number | null;
  signal: string | null;
  /** The host killed it because a request overran its time limit. */
  watchdogMs: number | null;
  /** The runner reported a sticky CUDA error before it exited. */
  stickyError: CudaErrorInfo | null;
  /** The host asked it to stop. */
  requested: boolean;
  /** The host stopped it because its caller cancelled the work. */
  cancelled?: boolean;
  /** It exited before it ever said it was ready. */
  beforeReady: boolean;
  role?: ChildRole;
}

export interface ExitClassification {
  kind: ExitKind;
  summary: string;
  /** Electron's vocabulary for the same exit; absent in results saved before it was recorded. */
  reason?: GoneReason;
}

export const exitClassificationSchema = z.object({
  kind: z.enum(['clean', 'crashed', 'watchdog', 'sticky-cuda-error', 'killed', 'startup-failed', 'cancelled']),
  summary: z.string(),
  reason: z.enum(['clean-exit', 'abnormal-exit', 'killed', 'crashed', 'launch-failed']).optional(),
});

const SIGNAL_MEANING: Record<string, string> = {
  SIGSEGV: 'a segmentation fault (an invalid host memory access, often inside the driver or the addon)',
  SIGABRT: 'an abort (a failed assertion or an uncaught C++ exception)',
  SIGBUS: 'a bus error',
  SIGILL: 'an illegal instruction',
  SIGFPE: 'an arithmetic exception',
  SIGKILL: 'SIGKILL (killed from outside, or by the out-of-memory killer)',
  SIGTERM: 'SIGTERM',
};

const AFTER: Record<ChildRole, string> = {
  runner: 'Your work in the editor is safe; the next run gets a fresh runner.',
  'compile worker': 'Your source is safe; the next compile gets a fresh worker.',
  'sanitizer runner': 'The next sanitizer run starts a fresh one.',
};

/** The exit of a child in words, per role: what ended it, and what happens next. */
export function classifyExit(facts: ExitFacts): ExitClassification {
  const role = facts.role ?? 'runner';
  const The = `The ${role}`;
  if (facts.watchdogMs !== null) {
    return {
      kind: 'watchdog',
      reason: 'killed',
      summary:
        role === 'runner'
          ? `The runner did not answer within ${facts.watchdogMs} ms, so the watchdog killed it. A kernel that never finishes (an infinite loop, a barrier some threads never reach, a spin-wait on memory no one writes) is the usual cause. The next run gets a fresh runner.`
          : `${The} did not answer within ${facts.watchdogMs} ms, so the watchdog killed it. ${AFTER[role]}`,
    };
  }
  if (facts.cancelled) return { kind: 'cancelled', reason: 'killed', summary: `${The} was stopped because the work was cancelled. ${AFTER[role]}` };
  if (facts.stickyError) {
    return {
      kind: 'sticky-cuda-error',
      reason: 'abnormal-exit',
      summary: `${facts.stickyError.name} (${facts.stickyError.code}) in ${facts.stickyError.api} left the CUDA context unusable; that ${role} was discarded and the next run gets a fresh one.`,
    };
  }
  if (facts.requested) return { kind: 'clean', reason: 'clean-exit', summary: `${The} stopped when asked.` };
  if (facts.signal) {
    const meaning = SIGNAL_MEANING[facts.signal] ?? facts.signal;
    const killed = facts.signal === 'SIGKILL' || facts.signal === 'SIGTERM';
    return {
      kind: killed ? 'killed' : 'crashed',
      reason: killed ? 'killed' : 'crashed',
      summary: `${The} ${facts.beforeReady ? 'died while starting' : 'died'} from ${meaning}. ${AFTER[role]}`,
    };
  }
  if (facts.beforeReady) {
    return { kind: 'startup-failed', reason: 'launch-failed', summary: `${The} exited with code ${facts.code ?? '?'} before it was ready.` };
  }
  if (facts.code === 0) return { kind: 'clean', reason: 'clean-exit', summary: `${The} exited.` };
  return { kind: 'crashed', reason: 'abnormal-exit', summary: `${The} exited unexpectedly with code ${facts.code ?? '?'}. ${AFTER[role]}` };
}

/** The runner's exit status after a sticky CUDA error: it leaves on purpose, and a spare takes over. */
export const STICKY_EXIT_CODE = 70;
