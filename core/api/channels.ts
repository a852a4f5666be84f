import * as z from 'zod';

import { checkReportSchema, type CheckEvent } from '../check/check-model';
import { compileOptionsSchema } from '../compile/compile-options';
import { compileResultSchema } from '../compile/compile-result';
import { deviceInfoSchema, deviceMemorySchema, type DeviceInfo } from '../devices';
import { deviceProfileSchema } from '../validate/device-limits';
import { MAX_SOURCE_BYTES } from '../limits';
import { draftSchema, restoredDraftSchema } from './drafts';
import { schemaFor } from './typed-schema';
import { workspaceSettingsSchema } from './workspace';
import { discoverySchema } from '../doctor/facts';
import { FILE_KINDS } from '../workspace/file-kind';
import type { DiscoveryReport } from '../discovery';
import { doctorCheckSchema, problemSchema } from '../discovery-schema';
import { memoryOpenResultSchema, type MemoryOpenEvent } from '../memory/memory-open';
import { runOutcomeSchema, type RunOutcome } from '../runner/run-outcome';
import { savedRunOutcomeSchema } from '../runner/result-file';
import { MAX_PAGE_ELEMENTS, type BufferPage } from '../runner/protocol';
import { readBackValueSchema } from '../runner/run-result';
import { sampleManifestSchema } from '../samples/sample-manifest';
import { SANITIZER_TOOLS } from '../sanitizer/findings';
import { sanitizeAnswerSchema } from '../bundle/bundle-sanitizer';
import type { DiagnoseEvent } from '../diagnose/report';
import { diagnosisAnswerSchema } from '../diagnose/report-schema';
import { monitorReportSchema } from '../memory/monitor-report-schema';
import { bundleExportResultSchema, bundlePreviewSchema, type BundleExportEvent } from '../bundle/bundle-export';
import { bundleViewSchema, type BundleView } from '../bundle/bundle-view';
import type { MemorySample, SampledProcess } from '../memory/samples';
import type { SanitizeReport } from '../sanitizer/sanitize-report';
import { profileSchema } from '../kernel-profile/profile';

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

/** The events a call streams before its answer (progress, steps finished, samples): a type only, never checked. */
const events = <T>() => undefined as unknown as T;

/**
 * One channel, declared once (ARCHITECTURE.md §4): what it is asked, which the host checks whichever transport
 * carried it (Electron IPC or the serve WebSocket); what it answers, which the host checks in development and tests
 * (main/host-api.ts) and whose type callers see; how long a caller waits for the answer when the call names no limit
 * (above the host's own limits for it, from the request where they depend on it); what it streams.
 */
interface Declaration<Request extends z.ZodType, Response extends z.ZodType> {
  request: Request;
  response: Response;
  timeoutMs: number | ((request: z.input<Request>) => number);
  /**
   * Its answer may hold typed arrays (a timeline's columns): serve sends it as one binary frame with the arrays as
   * bytes (core/api/typed-wire.ts). Every other message, events included, is JSON text, written without looking for any.
   */
  binary?: true;
}
const channel = <Request extends z.ZodType, Response extends z.ZodType, Event = never>(
  declaration: Declaration<Request, Response> & { events?: Event },
): Declaration<Request, Response> & { events: Event } => declaration as Declaration<Request, Response> & { events: Event };

/** The calls that answer within a minute: the host's own limits are shorter. */
const MINUTE = 60_000;
/** The kernels of a plan as the caller sent it (not checked yet), at least one: each is compiled before anything runs. */
const kernelsOf = (plan: unknown): number => {
  const kernels = (plan as { kernels?: unknown } | null | undefined)?.kernels;
  return Math.max(1, Array.isArray(kernels) ? kernels.length : 1);
};

/** What run.plan streams: the phase it entered. */
export type RunEvent = { kind: 'phase'; phase: 'checks' | 'compile' | 'run' | 'diagnose' };

/** What profile.run streams: the phase it entered ('profile': the launch runs under Nsight Compute). */
export type ProfileEvent = { kind: 'phase'; phase: RunEvent['phase'] | 'profile' };

/** What sanitize.plan streams: the run's phases, and the findings the tool has printed so far. */
export type SanitizeEvent = RunEvent | { kind: 'findings'; count: number };

/**
 * What monitor.start streams: first the id the host gave the session (monitor.stop, memory.export and bundle.export
 * name it by that), then, batched (about four times a second), the samples taken since the last batch and the
 * processes listed in them or whose name or flag changed (merge them by pid); problems as they happen.
 */
export type MonitorEvent =
  { kind: 'started'; id: string } | { kind: 'samples'; samples: MemorySample[]; processes: SampledProcess[] } | { kind: 'problem'; text: string };

/** A monitoring session's id, as the host made it (monitor.start's 'started' event). */
const monitorId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);

const devicesResultSchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    devices: z.array(schemaFor<DeviceInfo>()(deviceInfoSchema)),
    memory: z.array(deviceMemorySchema).nullable(),
    driverVersion: z.string().nullable(),
    memoryProblem: z.string().nullable(),
  }),
  z.object({ ok: z.literal(false), problem: problemSchema }),
]);
export type DevicesResult = z.infer<typeof devicesResultSchema>;

const appInfoSchema = z.object({
  name: z.string(),
  version: z.string(),
  transport: z.enum(['electron', 'serve']),
  node: z.string(),
  platform: z.string(),
  /** The host user's home folder. */
  homeDir: z.string(),
  /** Where a file box starts, and what a relative name is shown against: the home folder, or serve's first root when home is not in one. */
  startDir: z.string(),
  /** What a relative path typed in a path box is resolved against, as the host resolves it: the folder serve runs in; the desktop app's working folder. */
  workDir: z.string(),
  /** The folders a serve host reads and writes under (the folder it was started in, then each --root); null: not confined (Electron). */
  roots: z.array(z.string()).readonly().nullable(),
  /** The host's total memory, in bytes: what a plan's uploads and read-backs are checked against. */
  hostMemBytes: z.number().min(0),
  /** Whether this host runs programs the UI names (sanitize.program): Electron does; serve only when started with --allow-programs. */
  runsPrograms: z.boolean(),
});
export type AppInfo = z.infer<typeof appInfoSchema>;

const runnerPoolStatusSchema = z.object({
  /** startupMs: how long the runner took to start and open its CUDA context (null while it starts). */
  runners: z.array(
    z.object({
      pid: z.number().int(),
      ordinal: z.number().int(),
      role: z.enum(['active', 'spare']),
      contextReady: z.boolean(),
      busy: z.boolean(),
      startupMs: z.number().nullable(),
      /** Where the start-up went (RunnerStatus.startupPhases); null while it starts, or where no context was tried. */
      startupPhases: z
        .object({ bootMs: z.number(), librariesMs: z.number(), contextMs: z.number(), warmUpMs: z.number(), warmUpProblem: z.string().nullable() })
        .nullable(),
    }),
  ),
  recentExits: z.array(z.object({ pid: z.number().int(), kind: z.string(), summary: z.string(), at: z.string() })),
});
export type RunnerPoolStatus = z.infer<typeof runnerPoolStatusSchema>;

/** An answer that names a file the host wrote, and its size. */
const written = z.object({ path: z.string(), bytes: z.number().int().min(0) });
const planFile = z.object({ plan: z.unknown(), path: z.string() });

/**
 * The name the host holds a result it made or read under, for this session (main/services/held-results.ts): a run's
 * outcome, an opened timeline, a monitoring session's samples, a sanitizer report, a kernel profile. Calls name it
 * instead of sending the data back.
 */
const heldId = z.string().regex(/^[A-Za-z0-9_:-]{1,80}$/);

/** A run's outcome as the host answers it: with the id it holds it under (run.save, bundle.export, memory.export). */
export type HeldOutcome = RunOutcome & { outcomeId: string };
const held = z.object({ outcomeId: heldId });
const heldOutcomeSchema = z.intersection(runOutcomeSchema, held);

/** A sanitizer report as the host answers it (sanitize.plan, sanitize.program, sanitize.open): with the id bundle.export names it by. */
export type HeldSanitizeReport = SanitizeReport & { reportId: string };
const heldSanitizeSchema = z.intersection(sanitizeAnswerSchema, z.object({ reportId: heldId }));

/** The id memory.export and bundle.export take for a monitoring session's samples (the id monitor.start's first event gave): the host keeps them as they stream. */
export const monitorTimelineId = (id: string): string => `monitor:${id}`;

/**
 * What bundle.preview and bundle.export are asked: the run on screen and what was seen with it, each by the id the
 * host holds it under, and the plan it ran (a user's document, checked on the host: main/bundle/bundle-service.ts).
 */
const bundleRequestFields = {
  plan: z.unknown(),
  outcomeId: heldId,
  /** Where the plan came from, in words, for repro.cu's header. */
  origin: z.string().max(4096),
  /** The sanitizer report shown with this run: the reportId a sanitize.* call answered. */
  sanitizerId: heldId.nullable().default(null),
  /** NVML samples taken while it ran, when it took none of its own: the monitoring session's monitorTimelineId. */
  samplesId: heldId.nullable().default(null),
  /** The kernel profile made with this run: the profileId profile.run answered. */
  profileId: heldId.nullable().default(null),
  includeSources: z.boolean().default(true),
  redact: z.boolean().default(true),
  /** The run was made on this machine: its doctor is the run's. Otherwise the bundle labels it the exporting machine's. */
  recordedHere: z.boolean().default(false),
};

export const channels = {
  'app.info': channel({ request: z.object({}).strict(), response: appInfoSchema, timeoutMs: MINUTE }),
  'discovery.get': channel({ request: z.object({}).strict(), response: schemaFor<DiscoveryReport>()(discoverySchema), timeoutMs: MINUTE }),
  'devices.list': channel({ request: z.object({}).strict(), response: devicesResultSchema, timeoutMs: MINUTE }),
  'doctor.get': channel({ request: z.object({}).strict(), response: z.object({ checks: z.array(doctorCheckSchema) }), timeoutMs: MINUTE }),
  'runners.status': channel({ request: z.object({}).strict(), response: runnerPoolStatusSchema, timeoutMs: MINUTE }),
  /** Compiles for the editor; `arch` defaults to the first device's, or sm_90 without a GPU. */
  'compile.run': channel({
    request: z
      .object({
        ...compileRequestFields,
        /** The editor document it is for: a newer compile of the same document supersedes this one. */
        document: z.string().min(1).max(64).optional(),
      })
      .strict(),
    response: compileResultSchema,
    // A compile takes up to 120 s.
    timeoutMs: 150_000,
  }),
  /** What the compile cache holds for this source and these options, without compiling: null on a miss. */
  'compile.cached': channel({
    request: z.object(compileRequestFields).strict(),
    response: compileResultSchema.nullable(),
    timeoutMs: MINUTE,
  }),
  'compile.sass': channel({
    request: z.object({ key: z.string().regex(/^[0-9a-f]{64}$/) }).strict(),
    response: z.object({ sass: z.string().nullable() }),
    timeoutMs: 150_000,
  }),
  'compile.cancel': channel({ request: z.object({}).strict(), response: z.object({ cancelled: z.boolean() }), timeoutMs: MINUTE }),
  'files.read': channel({
    request: z.object({ path: z.string().min(1).max(4096) }).strict(),
    response: z.object({ path: z.string(), text: z.string(), mtimeMs: z.number() }),
    timeoutMs: MINUTE,
  }),
  /** What a file is, by its content (a bounded head): where Open… sends it. */
  'files.sniff': channel({
    request: z.object({ path: z.string().min(1).max(4096) }).strict(),
    response: z.object({ path: z.string(), kind: z.enum(FILE_KINDS), size: z.number().int().min(0) }),
    timeoutMs: MINUTE,
  }),
  'files.write': channel({
    request: z.object({ path: z.string().min(1).max(4096), text: z.string().max(MAX_SOURCE_BYTES), expectedMtimeMs: z.number().nullable() }).strict(),
    response: z.object({ path: z.string(), mtimeMs: z.number() }),
    timeoutMs: MINUTE,
  }),
  'files.list': channel({
    request: z.object({ dir: z.string().max(4096).nullable() }).strict(),
    response: z.object({
      dir: z.string(),
      parent: z.string().nullable(),
      entries: z.array(z.object({ name: z.string(), kind: z.enum(['file', 'dir']), size: z.number().min(0) })),
    }),
    timeoutMs: MINUTE,
  }),
  /** Devices to validate launches against: this machine's, the shipped profiles, the user's own. */
  'profiles.list': channel({
    request: z.object({}).strict(),
    response: z.array(z.object({ id: z.string(), label: z.string(), source: z.enum(['device', 'shipped', 'user']), profile: deviceProfileSchema })),
    timeoutMs: MINUTE,
  }),
  'samples.list': channel({ request: z.object({}).strict(), response: z.array(z.object({ name: z.string(), path: z.string() })), timeoutMs: MINUTE }),
  /** Runs a launch plan (schema-checked by the run itself, whose diagnosis explains what is wrong). */
  'run.plan': channel({
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
    response: heldOutcomeSchema,
    // A run compiles each of its kernels first (up to 120 s each) and then runs under its own limit.
    timeoutMs: (request) => (request.timeoutMs ?? 30_000) + 150_000 * kernelsOf(request.plan),
    events: events<RunEvent>(),
  }),
  /**
   * Runs a plan under compute-sanitizer (a runner of its own, started as the tool's target): the grouped
   * findings, each address named against the plan's buffers, and the run's own outcome.
   */
  'sanitize.plan': channel({
    request: z
      .object({
        plan: z.unknown(),
        planPath: path.nullable().default(null),
        tool: z.enum(SANITIZER_TOOLS as unknown as [string, ...string[]]),
        timeoutMs: z.number().int().min(1000).max(3_600_000).default(600_000),
      })
      .strict(),
    response: z.object({ report: heldSanitizeSchema, run: runOutcomeSchema }),
    timeoutMs: (request) => (request.timeoutMs ?? 600_000) + 150_000,
    events: events<SanitizeEvent>(),
  }),
  /**
   * Profiles one launch of a plan (the step given, else its first) under Nsight Compute: the run's outcome, and the
   * kernel profile (null when the plan could not run; the outcome's diagnosis says why). Without ncu or without
   * permission to read the counters, the profile says why and gives what needs none.
   */
  'profile.run': channel({
    request: z
      .object({
        plan: z.unknown(),
        planPath: path.nullable().default(null),
        step: z.number().int().min(0).max(1_000_000).nullable().default(null),
        /** The run's time limit; absent: the service's own (a minute for a plain run, ten under ncu, which replays the launch). */
        timeoutMs: z.number().int().min(1000).max(3_600_000).optional(),
      })
      .strict(),
    /** profileId: the id the host holds the profile under (bundle.export), null with no profile. */
    response: z.object({ outcome: heldOutcomeSchema, profile: profileSchema.nullable(), profileId: heldId.nullable() }),
    // Its compile, then ncu's run (slow: it replays the launch per section) and the export of its pages.
    timeoutMs: (request) => (request.timeoutMs ?? 600_000) + 300_000,
    events: events<ProfileEvent>(),
  }),
  /** A kernel profile saved as JSON (`gpu-workbench profile --save file.json`): read and checked in a reader process, never run. */
  'profile.open': channel({ request: z.object({ path }).strict(), response: profileSchema, timeoutMs: MINUTE }),
  /**
   * Check everything (issue 28), as `gpu-workbench check` does for one plan: the launch validator on this machine's
   * device, a run with the determinism check, memcheck (leak check on), racecheck, initcheck and synccheck, and Nsight
   * Compute's coalescing and occupancy; each check as it ends, then the report. The settings are those of the
   * gpu-workbench-check.json beside the plan's file, or the defaults. It runs compute-sanitizer, so it takes the host's
   * one run under the tool (a second is refused in words, as sanitize.plan is).
   */
  'check.plan': channel({
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
    response: checkReportSchema,
    // Each kernel's compile and profile, the run, and the four tools (at once) each within the default limits of core/check/check-config.ts.
    timeoutMs: (request) => 1_200_000 + 450_000 * kernelsOf(request.plan),
    events: events<CheckEvent>(),
  }),
  /**
   * Runs a program under compute-sanitizer (any program: a Python script, a binary), as `gpu-workbench sanitize --`
   * does. Refused unless the host was started to allow it (see AppInfo.runsPrograms): a request never chooses a
   * program on its own authority.
   */
  'sanitize.program': channel({
    request: z
      .object({
        command: z.array(z.string().min(1).max(4096)).min(1).max(256),
        cwd: path,
        env: programEnv,
        tool: z.enum(SANITIZER_TOOLS as unknown as [string, ...string[]]),
        timeoutMs: z.number().int().min(1000).max(3_600_000).default(600_000),
      })
      .strict(),
    response: heldSanitizeSchema,
    timeoutMs: (request) => (request.timeoutMs ?? 600_000) + 30_000,
    events: events<SanitizeEvent>(),
  }),
  /**
   * Diagnoses a program (as `gpu-workbench diagnose --` does): the environment, a monitored run, then each re-run the
   * evidence calls for, within a time budget. Refused unless the host was started to allow it (AppInfo.runsPrograms).
   * The allocator history's snapshot, where one was recorded, is kept on the host and named in the report.
   */
  'diagnose.program': channel({
    request: z
      .object({
        command: z.array(z.string().min(1).max(4096)).min(1).max(256),
        cwd: path,
        env: programEnv,
        thorough: z.boolean().default(false),
        budgetMs: z.number().int().min(1000).max(86_400_000).default(600_000),
      })
      .strict(),
    response: diagnosisAnswerSchema,
    // The budget, then the last step's stop (SIGTERM, a grace, SIGKILL) and the snapshot's import.
    timeoutMs: (request) => (request.budgetMs ?? 600_000) + 120_000,
    events: events<DiagnoseEvent>(),
  }),
  /** A diagnosis the host holds (by the id it gave the report) as a bundle: the report, its snapshot, the doctor; redacted unless asked not to. */
  'diagnose.export': channel({
    request: z.object({ id: z.string().regex(/^[a-z0-9-]{1,64}$/), path, redact: z.boolean().default(true) }).strict(),
    response: written.extend({ notes: z.array(z.string()) }),
    timeoutMs: 120_000,
  }),
  /** A diagnosis saved as JSON (`gpu-workbench diagnose --json > file`): read and checked, never run. */
  'diagnose.open': channel({ request: z.object({ path }).strict(), response: diagnosisAnswerSchema, timeoutMs: MINUTE }),
  /**
   * A report compute-sanitizer saved (--xml --save), with the text it printed beside it when there is one, or that
   * text alone (xmlPath null): read, never run.
   */
  'sanitize.open': channel({
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
    response: heldSanitizeSchema,
    // Its reader may take two minutes (main/readers/reader-process.ts), after waiting for a reader's slot.
    timeoutMs: 180_000,
  }),
  /** A page of a buffer the last run read back; null when that runner has run again or gone. */
  'run.page': channel({
    request: z
      .object({
        runnerPid: z.number().int().positive(),
        runId: z.string().max(64),
        buffer: z.string().max(64),
        offset: z.number().int().min(0),
        count: z.number().int().min(1).max(MAX_PAGE_ELEMENTS),
      })
      .strict(),
    response: schemaFor<BufferPage>()(
      z.object({
        runId: z.string(),
        buffer: z.string(),
        offset: z.number().int().min(0),
        total: z.number().int().min(0),
        values: z.array(readBackValueSchema),
      }),
    ).nullable(),
    timeoutMs: MINUTE,
  }),
  /**
   * Samples every GPU's memory, and each process's, through NVML until `durationS` passes, the followed `pid`
   * exits, or monitor.stop names it: then answers the report. Its first event gives the session's id, which the
   * host makes (a caller cannot name it, so two sessions never share one). Cancelling stops sampling too (without a
   * report). A process can be followed, never started: no request names a program to run.
   */
  'monitor.start': channel({
    request: z
      .object({
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
    response: monitorReportSchema,
    // Without a duration it runs until stopped: the longest a timer can wait.
    timeoutMs: (request) => (request.durationS === undefined ? 2 ** 31 - 1 : request.durationS * 1000 + 60_000),
    events: events<MonitorEvent>(),
  }),
  /** Ends the monitor.start call of that id (its 'started' event gave it), which then answers its report. */
  'monitor.stop': channel({ request: z.object({ id: monitorId }).strict(), response: z.object({ stopped: z.boolean() }), timeoutMs: MINUTE }),
  /** A saved run result (a colleague's, or one the GPU suite recorded). */
  'run.open': channel({ request: z.object({ path }).strict(), response: z.intersection(savedRunOutcomeSchema, held), timeoutMs: MINUTE }),
  /**
   * The memory timelines of a file the user chose: a PyTorch memory snapshot pickle (one timeline per device with
   * data) or a saved run result. Read in a reader process (nothing in a pickle runs); decode each with decodeTimeline.
   * Two opened files are compared in the renderer with compareTimelines.
   */
  'memory.open': channel({
    request: z.object({ path }).strict(),
    /** timelineIds: the id the host holds each timeline under (memory.export), in the same order. */
    response: z.intersection(memoryOpenResultSchema, z.object({ timelineIds: z.array(heldId) })),
    // A 1 GiB snapshot (the most read) takes well under a minute; a loaded machine gets room.
    timeoutMs: 300_000,
    binary: true,
    events: events<MemoryOpenEvent>(),
  }),
  /**
   * The timeline shown, written where the user chose: as a Chrome trace (Perfetto, chrome://tracing; refused past
   * what they open), or — a run's or a monitoring session's — its samples as CSV. Named by the id the host holds it
   * under: a timeline memory.open or bundle.open gave, a run's outcomeId (its timeline; `monitorId`: drawn with that
   * monitoring session's samples, as the Memory tab draws a run that took none of its own), or monitorTimelineId(id).
   */
  'memory.export': channel({
    request: z.object({ format: z.enum(['trace', 'csv']), path, timelineId: heldId, monitorId: monitorId.optional() }).strict(),
    response: written.extend({ events: z.number().int().min(0).nullable() }),
    timeoutMs: MINUTE,
  }),
  /** The outcome the host holds under that id (run.plan, run.open, profile.run, bundle.open gave it), written as a result file. */
  'run.save': channel({ request: z.object({ path, outcomeId: heldId }).strict(), response: z.object({ path: z.string() }), timeoutMs: MINUTE }),
  'plans.read': channel({ request: z.object({ path }).strict(), response: planFile, timeoutMs: MINUTE }),
  'plans.write': channel({ request: z.object({ path, plan: z.unknown() }).strict(), response: z.object({ path: z.string() }), timeoutMs: MINUTE }),
  /** Exactly what a bundle of this run would hold (files and sizes, the environment as it goes in, what it lacks); writes nothing. */
  'bundle.preview': channel({
    request: z.object(bundleRequestFields).strict(),
    response: bundlePreviewSchema,
    // The doctor (10 s at most) and a compile per kernel the cache does not hold.
    timeoutMs: 300_000,
  }),
  /**
   * Writes the bundle to the path the user chose (a full path; atomically: a failure or a cancel leaves nothing),
   * streaming its phases and the bytes written.
   */
  'bundle.export': channel({
    request: z.object({ ...bundleRequestFields, path }).strict(),
    response: bundleExportResultSchema,
    // The doctor (10 s at most) and a compile per kernel the cache does not hold, then the zip.
    timeoutMs: 300_000,
    events: events<BundleExportEvent>(),
  }),
  /**
   * A bundle someone sent, opened read-only into memory within limits (nothing extracted, compiled or run): what
   * every view needs, from the bundle alone. A hostile one is refused with its reason.
   */
  'bundle.open': channel({
    request: z.object({ path }).strict(),
    response: z.intersection(bundleViewSchema, z.object({ outcome: held.nullable(), timelineIds: z.array(heldId) })),
    timeoutMs: 120_000,
    binary: true,
  }),
  'gallery.list': channel({
    request: z.object({}).strict(),
    response: z.array(z.intersection(z.object({ name: z.string() }), sampleManifestSchema)),
    timeoutMs: MINUTE,
  }),
  'gallery.load': channel({
    request: z.object({ name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), variant: z.enum(['broken', 'fixed']) }).strict(),
    response: z.object({ plan: z.unknown(), planPath: z.string(), sourcePath: z.string() }),
    timeoutMs: MINUTE,
  }),
  /** The drafts kept for the workspace, each plan checked on return (or dropped, with why). */
  'drafts.list': channel({ request: z.object({}).strict(), response: z.array(restoredDraftSchema), timeoutMs: MINUTE }),
  'drafts.save': channel({ request: draftSchema, response: z.object({ saved: z.literal(true) }), timeoutMs: MINUTE }),
  'drafts.discard': channel({
    request: z.object({ id: draftSchema.shape.id }).strict(),
    response: z.object({ discarded: z.literal(true) }),
    timeoutMs: MINUTE,
  }),
  /** The workspace's settings, kept on the host beside the drafts. */
  'workspace.get': channel({ request: z.object({}).strict(), response: workspaceSettingsSchema, timeoutMs: MINUTE }),
  'workspace.set': channel({ request: workspaceSettingsSchema.partial(), response: workspaceSettingsSchema, timeoutMs: MINUTE }),
} as const;

/** An opened bundle as the host answers it: its outcome and its timelines with the ids the host holds them under. */
export type HeldBundleView = Omit<BundleView, 'outcome'> & { outcome: HeldOutcome | null; timelineIds: string[] };

export type Channels = typeof channels;
export type ChannelName = keyof Channels;
export type ChannelRequest<C extends ChannelName> = z.input<Channels[C]['request']>;
export type ChannelResponse<C extends ChannelName> = z.output<Channels[C]['response']>;
export type ChannelEvent<C extends ChannelName> = Channels[C] extends { events: infer E } ? E : never;

/** An AbortSignal, as core/ sees one (it has neither the DOM's types nor Node's). */
export interface AbortLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener?(type: 'abort', listener: () => void): void;
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

/** Whether a channel's answer may hold typed arrays (its declaration's `binary`). */
export const answersBinary = (channel: ChannelName): boolean => channels[channel].binary === true;

/** How long a renderer waits for an answer when the call names no limit: its channel's declared limit. */
export function defaultCallTimeoutMs<C extends ChannelName>(channel: C, request: ChannelRequest<C>): number {
  // TypeScript does not follow which channel's request goes with which channel's limit: C names both.
  const limit = channels[channel].timeoutMs as number | ((request: ChannelRequest<C>) => number);
  return typeof limit === 'number' ? limit : limit(request);
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
