import { z } from 'zod';

import { compileOptionsSchema } from '../compile/compile-options';
import type { CompileResult } from '../compile/compile-result';
import type { DeviceInfo, DeviceMemory } from '../devices';
import type { DeviceProfile } from '../validate/device-limits';
import { MAX_SOURCE_BYTES } from '../limits';
import { draftSchema, type RestoredDraft } from './drafts';
import { workspaceSettingsSchema, type WorkspaceSettings } from './workspace';
import type { FileKind } from '../workspace/file-kind';
import type { DiscoveryReport, DoctorCheck, Problem } from '../discovery';
import type { MemoryOpenEvent, MemoryOpenResult } from '../memory/memory-open';
import type { RunOutcome } from '../runner/run-outcome';
import type { BufferPage } from '../runner/protocol';
import { MAX_PAGE_ELEMENTS } from '../runner/protocol';
import type { SampleManifest } from '../samples/sample-manifest';
import { SANITIZER_TOOLS } from '../sanitizer/findings';
import type { SanitizeReport } from '../sanitizer/sanitize-report';
import type { DiagnoseEvent, DiagnosisReport } from '../diagnose/report';
import type { MonitorReport } from '../memory/monitor-report';
import type { BundleExportEvent, BundleExportResult, BundlePreview } from '../bundle/bundle-export';
import type { BundleView } from '../bundle/bundle-view';
import type { CheckEvent, CheckReport } from '../check/check-model';
import type { MemorySample, SampledProcess } from '../memory/samples';
import type { Profile } from '../kernel-profile/profile';

const path = z.string().min(1).max(4096);
/** The variables a program run from the UI gets beside the host's: names as a shell allows, bounded. */
const programEnv = z
  .record(
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .max(256),
    z.string().max(32_768),
  )
  .refine((env) => Object.keys(env).length <= 64, 'at most 64 variables')
  .default({});

/** What a compile is asked with, from the editor or anywhere else. */
const compileRequestFields = {
  source: z.string().max(MAX_SOURCE_BYTES),
  sourceName: z.string().min(1).max(256),
  options: compileOptionsSchema.partial({ arch: true }),
  backend: z.enum(['auto', 'nvrtc', 'nvcc']).default('auto'),
};

/**
 * Every renderer -> host call, declared once (ARCHITECTURE.md §4). The host validates each request
 * with its schema whichever transport carried it (Electron IPC or the serve WebSocket).
 */
const response = <T>() => undefined as unknown as T;
/** The events a call streams before its answer (progress, steps finished, samples). */
const events = <T>() => undefined as unknown as T;

/** What run.plan streams: the phase it entered. */
export type RunEvent = { kind: 'phase'; phase: 'checks' | 'compile' | 'run' | 'diagnose' };

/** What profile.run streams: the phase it entered ('profile': the launch runs under Nsight Compute). */
export type ProfileEvent = { kind: 'phase'; phase: RunEvent['phase'] | 'profile' };

/** What sanitize.plan streams: the run's phases, and the findings the tool has printed so far. */
export type SanitizeEvent = RunEvent | { kind: 'findings'; count: number };

/**
 * What monitor.start streams, batched (about four times a second): the samples taken since the last batch,
 * and the processes listed in them or whose name or flag changed (merge them by pid); problems as they happen.
 */
export type MonitorEvent = { kind: 'samples'; samples: MemorySample[]; processes: SampledProcess[] } | { kind: 'problem'; text: string };

/** A monitoring session's name, chosen by its caller, for monitor.stop. */
const monitorId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);

export type DevicesResult =
  | { ok: true; devices: DeviceInfo[]; memory: DeviceMemory[] | null; driverVersion: string | null; memoryProblem: string | null }
  | { ok: false; problem: Problem };

export interface AppInfo {
  name: string;
  version: string;
  transport: 'electron' | 'serve';
  node: string;
  platform: string;
  /** The host user's home folder. */
  homeDir: string;
  /** Where a file box starts, and what a relative name is shown against: the home folder, or serve's first root when home is not in one. */
  startDir: string;
  /** What a relative path typed in a path box is resolved against, as the host resolves it: the folder serve runs in; the desktop app's working folder. */
  workDir: string;
  /** The folders a serve host reads and writes under (the folder it was started in, then each --root); null: not confined (Electron). */
  roots: readonly string[] | null;
  /** The host's total memory, in bytes: what a plan's uploads and read-backs are checked against. */
  hostMemBytes: number;
  /** Whether this host runs programs the UI names (sanitize.program): Electron does; serve only when started with --allow-programs. */
  runsPrograms: boolean;
}

export interface RunnerPoolStatus {
  /** startupMs: how long the runner took to start and open its CUDA context (null while it starts). */
  runners: { pid: number; ordinal: number; role: 'active' | 'spare'; contextReady: boolean; busy: boolean; startupMs: number | null }[];
  recentExits: { pid: number; kind: string; summary: string; at: string }[];
}

/**
 * The name the host holds a result it made or read under, for this session (main/services/held-results.ts): a run's
 * outcome, an opened timeline, a monitoring session's samples. Calls name it instead of sending the data back.
 */
const heldId = z.string().regex(/^[A-Za-z0-9_:-]{1,80}$/);

/** A run's outcome as the host answers it: with the id it holds it under (run.save, bundle.export, memory.export). */
export type HeldOutcome = RunOutcome & { outcomeId: string };

/** The id memory.export takes for a monitoring session's samples (monitor.start's id): the host keeps them as they stream. */
export const monitorTimelineId = (id: string): string => `monitor:${id}`;

/**
 * What bundle.preview and bundle.export are asked: the run on screen (by the id the host holds it under), the plan
 * it ran, and what was seen with it (the sanitizer's report, NVML samples). The host checks what the renderer sends as
 * data from outside (main/bundle/bundle-service.ts).
 */
const bundleRequestFields = {
  plan: z.unknown(),
  outcomeId: heldId,
  /** Where the plan came from, in words, for repro.cu's header. */
  origin: z.string().max(4096),
  sanitizer: z.unknown().nullable().default(null),
  samples: z.unknown().nullable().default(null),
  /** The kernel profile made with this run (profile.run), checked against its schema on the host. */
  profile: z.unknown().nullable().default(null),
  includeSources: z.boolean().default(true),
  redact: z.boolean().default(true),
  /** The run was made on this machine: its doctor is the run's. Otherwise the bundle labels it the exporting machine's. */
  recordedHere: z.boolean().default(false),
};

export const channels = {
  'app.info': { request: z.object({}).strict(), response: response<AppInfo>() },
  'discovery.get': { request: z.object({}).strict(), response: response<DiscoveryReport>() },
  'devices.list': { request: z.object({}).strict(), response: response<DevicesResult>() },
  'doctor.get': { request: z.object({}).strict(), response: response<{ checks: DoctorCheck[] }>() },
  'runners.status': { request: z.object({}).strict(), response: response<RunnerPoolStatus>() },
  /** Compiles for the editor; `arch` defaults to the first device's, or sm_90 without a GPU. */
  'compile.run': {
    request: z
      .object({
        ...compileRequestFields,
        /** The editor document it is for: a newer compile of the same document supersedes this one. */
        document: z.string().min(1).max(64).optional(),
      })
      .strict(),
    response: response<CompileResult>(),
  },
  /** What the compile cache holds for this source and these options, without compiling: null on a miss. */
  'compile.cached': {
    request: z.object(compileRequestFields).strict(),
    response: response<CompileResult | null>(),
  },
  'compile.sass': { request: z.object({ key: z.string().regex(/^[0-9a-f]{64}$/) }).strict(), response: response<{ sass: string | null }>() },
  'compile.cancel': { request: z.object({}).strict(), response: response<{ cancelled: boolean }>() },
  'files.read': { request: z.object({ path: z.string().min(1).max(4096) }).strict(), response: response<{ path: string; text: string; mtimeMs: number }>() },
  /** What a file is, by its content (a bounded head): where Open… sends it. */
  'files.sniff': {
    request: z.object({ path: z.string().min(1).max(4096) }).strict(),
    response: response<{ path: string; kind: FileKind; size: number }>(),
  },
  'files.write': {
    request: z.object({ path: z.string().min(1).max(4096), text: z.string().max(MAX_SOURCE_BYTES), expectedMtimeMs: z.number().nullable() }).strict(),
    response: response<{ path: string; mtimeMs: number }>(),
  },
  'files.list': {
    request: z.object({ dir: z.string().max(4096).nullable() }).strict(),
    response: response<{ dir: string; parent: string | null; entries: { name: string; kind: 'file' | 'dir'; size: number }[] }>(),
  },
  /** Devices to validate launches against: this machine's, the shipped profiles, the user's own. */
  'profiles.list': {
    request: z.object({}).strict(),
    response: response<{ id: string; label: string; source: 'device' | 'shipped' | 'user'; profile: DeviceProfile }[]>(),
  },
  'samples.list': { request: z.object({}).strict(), response: response<{ name: string; path: string }[]>() },
  /** Runs a launch plan (schema-checked by the run itself, whose diagnosis explains what is wrong). */
  'run.plan': {
    request: z
      .object({
        plan: z.unknown(),
        timeoutMs: z.number().int().min(100).max(3_600_000).default(30_000),
        planPath: path.nullable().default(null),
        /** Overrides the plan's determinism check: 0 turns it off. */
        determinismRuns: z.number().int().min(0).max(16).optional(),
        /** Samples device memory through NVML every this many ms while it runs (the memory timeline's device and process tracks). */
        sampleIntervalMs: z.number().int().min(10).max(1000).optional(),
      })
      .strict(),
    response: response<HeldOutcome>(),
    events: events<RunEvent>(),
  },
  /**
   * Runs a plan under compute-sanitizer (a runner of its own, started as the tool's target): the grouped
   * findings, each address named against the plan's buffers, and the run's own outcome.
   */
  'sanitize.plan': {
    request: z
      .object({
        plan: z.unknown(),
        planPath: path.nullable().default(null),
        tool: z.enum(SANITIZER_TOOLS as unknown as [string, ...string[]]),
        timeoutMs: z.number().int().min(1000).max(3_600_000).default(600_000),
      })
      .strict(),
    response: response<{ report: SanitizeReport; run: RunOutcome }>(),
    events: events<SanitizeEvent>(),
  },
  /**
   * Profiles one launch of a plan (the step given, else its first) under Nsight Compute: the run's outcome, and the
   * kernel profile (null when the plan could not run; the outcome's diagnosis says why). Without ncu or without
   * permission to read the counters, the profile says why and gives what needs none.
   */
  'profile.run': {
    request: z
      .object({
        plan: z.unknown(),
        planPath: path.nullable().default(null),
        step: z.number().int().min(0).max(1_000_000).nullable().default(null),
        /** The run's time limit; absent: the service's own (a minute for a plain run, ten under ncu, which replays the launch). */
        timeoutMs: z.number().int().min(1000).max(3_600_000).optional(),
      })
      .strict(),
    response: response<{ outcome: HeldOutcome; profile: Profile | null }>(),
    events: events<ProfileEvent>(),
  },
  /** A kernel profile saved as JSON (`gpu-workbench profile --save file.json`): read and checked in a reader process, never run. */
  'profile.open': { request: z.object({ path }).strict(), response: response<Profile>() },
  /**
   * Check everything (issue 28), as `gpu-workbench check` does for one plan: the launch validator on this machine's
   * device, a run with the determinism check, memcheck (leak check on), racecheck, initcheck and synccheck, and Nsight
   * Compute's coalescing and occupancy; each check as it ends, then the report. The settings are those of the
   * gpu-workbench-check.json beside the plan's file, or the defaults. It runs compute-sanitizer, so it takes the host's
   * one run under the tool (a second is refused in words, as sanitize.plan is).
   */
  'check.plan': {
    request: z
      .object({
        plan: z.unknown(),
        planPath: path.nullable().default(null),
        /** How the report names the plan: its file, or "the plan of broken.cu". */
        label: z.string().min(1).max(4096).optional(),
        /** The run's time limit (the Run section's); a gpu-workbench-check.json beside the plan may set its own. */
        timeoutMs: z.number().int().min(100).max(3_600_000).optional(),
      })
      .strict(),
    response: response<CheckReport>(),
    events: events<CheckEvent>(),
  },
  /**
   * Runs a program under compute-sanitizer (any program: a Python script, a binary), as `gpu-workbench sanitize --`
   * does. Refused unless the host was started to allow it (see AppInfo.runsPrograms): a request never chooses a
   * program on its own authority.
   */
  'sanitize.program': {
    request: z
      .object({
        command: z.array(z.string().min(1).max(4096)).min(1).max(256),
        cwd: path,
        env: programEnv,
        tool: z.enum(SANITIZER_TOOLS as unknown as [string, ...string[]]),
        timeoutMs: z.number().int().min(1000).max(3_600_000).default(600_000),
      })
      .strict(),
    response: response<SanitizeReport>(),
    events: events<SanitizeEvent>(),
  },
  /**
   * Diagnoses a program (as `gpu-workbench diagnose --` does): the environment, a monitored run, then each re-run the
   * evidence calls for, within a time budget. Refused unless the host was started to allow it (AppInfo.runsPrograms).
   * The allocator history's snapshot, where one was recorded, is kept on the host and named in the report.
   */
  'diagnose.program': {
    request: z
      .object({
        command: z.array(z.string().min(1).max(4096)).min(1).max(256),
        cwd: path,
        env: programEnv,
        thorough: z.boolean().default(false),
        budgetMs: z.number().int().min(1000).max(86_400_000).default(600_000),
      })
      .strict(),
    response: response<DiagnosisReport>(),
    events: events<DiagnoseEvent>(),
  },
  /** A diagnosis the host holds (by the id it gave the report) as a bundle: the report, its snapshot, the doctor; redacted unless asked not to. */
  'diagnose.export': {
    request: z.object({ id: z.string().regex(/^[a-z0-9-]{1,64}$/), path, redact: z.boolean().default(true) }).strict(),
    response: response<{ path: string; bytes: number; notes: string[] }>(),
  },
  /** A diagnosis saved as JSON (`gpu-workbench diagnose --json > file`): read and checked, never run. */
  'diagnose.open': { request: z.object({ path }).strict(), response: response<DiagnosisReport>() },
  /**
   * A report compute-sanitizer saved (--xml --save), with the text it printed beside it when there is one, or that
   * text alone (xmlPath null): read, never run.
   */
  'sanitize.open': {
    request: z
      .object({
        xmlPath: path.nullable(),
        textPath: path.nullable().default(null),
        tool: z
          .enum(SANITIZER_TOOLS as unknown as [string, ...string[]])
          .nullable()
          .default(null),
      })
      .strict()
      .refine((r) => r.xmlPath !== null || r.textPath !== null, 'give the report (xmlPath) or the text the tool printed (textPath)'),
    response: response<SanitizeReport>(),
  },
  /** A page of a buffer the last run read back; null when that runner has run again or gone. */
  'run.page': {
    request: z
      .object({
        runnerPid: z.number().int().positive(),
        runId: z.string().max(64),
        buffer: z.string().max(64),
        offset: z.number().int().min(0),
        count: z.number().int().min(1).max(MAX_PAGE_ELEMENTS),
      })
      .strict(),
    response: response<BufferPage | null>(),
  },
  /**
   * Samples every GPU's memory, and each process's, through NVML until `durationS` passes, the followed `pid`
   * exits, or monitor.stop names it: then answers the report. Cancelling stops sampling too (without a report).
   * A process can be followed, never started: no request names a program to run.
   */
  'monitor.start': {
    request: z
      .object({
        id: monitorId.optional(),
        intervalMs: z.number().int().min(10).max(60_000).default(100),
        /** List processes at most this often (default: at every sample). */
        processIntervalMs: z.number().int().min(10).max(60_000).optional(),
        durationS: z
          .number()
          .positive()
          .max(7 * 86_400)
          .optional(),
        pid: z.number().int().min(1).max(4_194_304).optional(),
      })
      .strict(),
    response: response<MonitorReport>(),
    events: events<MonitorEvent>(),
  },
  /** Ends the monitor.start call of that id, which then answers its report. */
  'monitor.stop': { request: z.object({ id: monitorId }).strict(), response: response<{ stopped: boolean }>() },
  /** A saved run result (a colleague's, or one the GPU suite recorded). */
  'run.open': { request: z.object({ path }).strict(), response: response<HeldOutcome>() },
  /**
   * The memory timelines of a file the user chose: a PyTorch memory snapshot pickle (one timeline per device with
   * data) or a saved run result. Read in a reader process (nothing in a pickle runs); decode each with decodeTimeline.
   * Two opened files are compared in the renderer with compareTimelines.
   */
  'memory.open': {
    request: z.object({ path }).strict(),
    /** timelineIds: the id the host holds each timeline under (memory.export), in the same order. */
    response: response<MemoryOpenResult & { timelineIds: string[] }>(),
    events: events<MemoryOpenEvent>(),
  },
  /**
   * The timeline shown, written where the user chose: as a Chrome trace (Perfetto, chrome://tracing; refused past
   * what they open), or — a run's or a monitoring session's — its samples as CSV. Named by the id the host holds it
   * under: a timeline memory.open or bundle.open gave, a run's outcomeId (its timeline; `monitorId`: drawn with that
   * monitoring session's samples, as the Memory tab draws a run that took none of its own), or monitorTimelineId(id).
   */
  'memory.export': {
    request: z.object({ format: z.enum(['trace', 'csv']), path, timelineId: heldId, monitorId: monitorId.optional() }).strict(),
    response: response<{ path: string; bytes: number; events: number | null }>(),
  },
  /** The outcome the host holds under that id (run.plan, run.open, profile.run, bundle.open gave it), written as a result file. */
  'run.save': { request: z.object({ path, outcomeId: heldId }).strict(), response: response<{ path: string }>() },
  'plans.read': { request: z.object({ path }).strict(), response: response<{ plan: unknown; path: string }>() },
  'plans.write': { request: z.object({ path, plan: z.unknown() }).strict(), response: response<{ path: string }>() },
  /** Exactly what a bundle of this run would hold (files and sizes, the environment as it goes in, what it lacks); writes nothing. */
  'bundle.preview': { request: z.object(bundleRequestFields).strict(), response: response<BundlePreview>() },
  /**
   * Writes the bundle to the path the user chose (a full path; atomically: a failure or a cancel leaves nothing),
   * streaming its phases and the bytes written.
   */
  'bundle.export': {
    request: z.object({ ...bundleRequestFields, path }).strict(),
    response: response<BundleExportResult>(),
    events: events<BundleExportEvent>(),
  },
  /**
   * A bundle someone sent, opened read-only into memory within limits (nothing extracted, compiled or run): what
   * every view needs, from the bundle alone. A hostile one is refused with its reason.
   */
  'bundle.open': { request: z.object({ path }).strict(), response: response<HeldBundleView>() },
  'gallery.list': { request: z.object({}).strict(), response: response<({ name: string } & SampleManifest)[]>() },
  'gallery.load': {
    request: z.object({ name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), variant: z.enum(['broken', 'fixed']) }).strict(),
    response: response<{ plan: unknown; planPath: string; sourcePath: string }>(),
  },
  /** The drafts kept for the workspace, each plan checked on return (or dropped, with why). */
  'drafts.list': { request: z.object({}).strict(), response: response<RestoredDraft[]>() },
  'drafts.save': { request: draftSchema, response: response<{ saved: true }>() },
  'drafts.discard': { request: z.object({ id: draftSchema.shape.id }).strict(), response: response<{ discarded: true }>() },
  /** The workspace's settings, kept on the host beside the drafts. */
  'workspace.get': { request: z.object({}).strict(), response: response<WorkspaceSettings>() },
  'workspace.set': { request: workspaceSettingsSchema.partial(), response: response<WorkspaceSettings>() },
} as const;

/** An opened bundle as the host answers it: its outcome and its timelines with the ids the host holds them under. */
export type HeldBundleView = Omit<BundleView, 'outcome'> & { outcome: HeldOutcome | null; timelineIds: string[] };

export type Channels = typeof channels;
export type ChannelName = keyof Channels;
export type ChannelRequest<C extends ChannelName> = z.input<Channels[C]['request']>;
export type ChannelResponse<C extends ChannelName> = Channels[C]['response'];
export type ChannelEvent<C extends ChannelName> = Channels[C] extends { events: infer E } ? E : never;

/** An AbortSignal, as core/ sees one (it has neither the DOM's types nor Node's). */
export interface AbortLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
}

/** What a call's caller may add: a way to cancel it, a listener for its events, and its own time limit. */
export interface CallOptions<C extends ChannelName> {
  signal?: AbortLike;
  onEvent?: (event: ChannelEvent<C>) => void;
  timeoutMs?: number;
}

/** What the host's handler gets beside the request: cancellation, and a way to stream events. */
export interface CallContext<E = unknown> {
  signal: AbortLike;
  emit(event: E): void;
}

/**
 * Calls whose handler answers a cancel with its own result: a diagnosis cancelled midway is still a report (the
 * runs before the cancel, the step stopped, what was not run), and the host's is fuller than what streamed. The
 * caller waits for it up to CANCEL_ANSWER_GRACE_MS after cancelling.
 */
export const ANSWERED_AFTER_CANCEL: ReadonlySet<ChannelName> = new Set<ChannelName>(['diagnose.program']);
/** A stopped program gets 2 s between SIGTERM and SIGKILL, and its monitor a bounded settle: well inside this. */
export const CANCEL_ANSWER_GRACE_MS = 15_000;

/** How long a renderer waits for an answer when the call names no limit: above the host's own limits. */
export function defaultCallTimeoutMs(channel: ChannelName, request: unknown): number {
  const asked = (request as { timeoutMs?: unknown } | null)?.timeoutMs;
  // A run compiles each of its kernels first (up to 120 s each) and then runs under its own limit.
  if (channel === 'run.plan') {
    const kernels = (request as { plan?: { kernels?: unknown[] } } | null)?.plan?.kernels;
    return (typeof asked === 'number' ? asked : 30_000) + 150_000 * Math.max(1, Array.isArray(kernels) ? kernels.length : 1);
  }
  if (channel === 'compile.run' || channel === 'compile.sass') return 150_000;
  if (channel === 'sanitize.program') return (typeof asked === 'number' ? asked : 600_000) + 30_000;
  // The budget, then the last step's stop (SIGTERM, a grace, SIGKILL) and the snapshot's import.
  if (channel === 'diagnose.program') {
    const budget = (request as { budgetMs?: unknown } | null)?.budgetMs;
    return (typeof budget === 'number' ? budget : 600_000) + 120_000;
  }
  // A 1 GiB snapshot (the most read) takes well under a minute; a loaded machine gets room.
  if (channel === 'memory.open') return 300_000;
  // The doctor (10 s at most) and a compile per kernel the cache does not hold, then the zip.
  if (channel === 'bundle.export' || channel === 'bundle.preview') return 300_000;
  if (channel === 'bundle.open') return 120_000;
  if (channel === 'diagnose.export') return 120_000;
  // Its compile, then ncu's run (slow: it replays the launch per section) and the export of its pages.
  if (channel === 'profile.run') return (typeof asked === 'number' ? asked : 600_000) + 300_000;
  if (channel === 'sanitize.plan') return (typeof asked === 'number' ? asked : 600_000) + 150_000;
  // Each kernel's compile and profile, the run, and the four tools (at once) each within the default limits of core/check/check-config.ts.
  if (channel === 'check.plan') {
    const kernels = (request as { plan?: { kernels?: unknown[] } } | null)?.plan?.kernels;
    return 1_200_000 + 450_000 * Math.max(1, Array.isArray(kernels) ? kernels.length : 1);
  }
  if (channel === 'monitor.start') {
    // Without a duration it runs until stopped: the longest a timer can wait.
    const duration = (request as { durationS?: unknown } | null)?.durationS;
    return typeof duration === 'number' ? duration * 1000 + 60_000 : 2 ** 31 - 1;
  }
  return 60_000;
}

/** What every transport answers: the handler's value, or a user-facing error. Never a stack trace. */
export type Envelope<T> = { ok: true; value: T } | { ok: false; error: { message: string; code: string } };

/** The one interface the renderer depends on. */
export interface WorkbenchApi {
  invoke<C extends ChannelName>(channel: C, request: ChannelRequest<C>, options?: CallOptions<C>): Promise<ChannelResponse<C>>;
}

export const isChannelName = (name: unknown): name is ChannelName => typeof name === 'string' && Object.hasOwn(channels, name);

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}
