import { NO_GPU_ARCH } from '../devices';
import { diagnosisAnswerSchema, parseDiagnosisReport } from '../diagnose/report-schema';
import type { DiagnosisReport } from '../diagnose/report';
import * as z from 'zod';

import { readAs, schemaFor } from '../api/typed-schema';
import type { DoctorCheck } from '../discovery';
import { doctorCheckSchema } from '../discovery-schema';
import { JsonRefusedError, parseJsonWithin, type JsonLimits } from '../json-limits';
import { evaluateDoctor } from '../doctor/evaluate';
import { parseDoctorFacts } from '../doctor/facts';
import type { SampleSeries } from '../memory/samples';
import { checkRunForTimeline, RunLogError } from '../memory/run-log-schema';
import { NoEventLogError, timelineFromRun } from '../memory/run-timeline';
import { summarizeTimeline, timelineSummarySchema, type TimelineSummary } from '../memory/timeline-model';
import { encodeTimeline, timelineWireSchema, type TimelineWire } from '../memory/timeline-wire';
import { profileSchema, type Profile } from '../kernel-profile/profile';
import { describeIssues, launchPlanSchema, type LaunchPlan } from '../plan/plan-schema';
import { checkSavedOutcome, savedRunOutcomeSchema } from '../runner/result-file';
import type { RunOutcome } from '../runner/run-outcome';
import type { SanitizeReport } from '../sanitizer/sanitize-report';
import { deviceProfileSchema, type DeviceProfile } from '../validate/device-limits';
import { bundleCompile, bundleCompileSchema, runArch, type BundleKernelCompile } from './bundle-compile';
import { sampleSeriesSchema } from './bundle-samples';
import { sanitizeAnswerSchema, sanitizeReportSchema } from './bundle-sanitizer';
import { bundleValidation, bundleValidationSchema, profilesFromDevicesEntry, type BundleValidation } from './bundle-validation';
import { BUNDLE_JSON_LIMITS, type JsonRole } from './bundle-limits';
import { bundleManifestSchema, type BundleManifest } from './manifest';

/**
 * Everything the views need from a bundle, read from its entries alone (pure: nothing runs, nothing is
 * compiled, no file is read or written): the plan, the outcome and its diagnosis, the sources, each kernel's
 * recorded compile and PTX, the validator's findings, the memory timeline (the run's event log with the
 * samples taken while it ran), the sanitizer report, the devices, the doctor's checks (judged again from the
 * facts it recorded, by this version's rules) and what the bundle lacks, in words.
 *
 * An entry that is there but is not what its role says (bad JSON, a result that is not a result) refuses the
 * whole bundle (BundleContentError): a half-read bundle would show a mixture of truths.
 */

export class BundleContentError extends Error {}

export interface BundleSource {
  /** The sources/ entry, when the bundle carries one for this text. */
  entry: string | null;
  /** The file name the plan gives it ("broken.cu"). */
  sourceName: string;
  text: string;
  /** The plan's kernels compiled from it. */
  kernels: string[];
}

/**
 * Whose machine a bundle's doctor and environment describe: the one the run was recorded on (a run made where it
 * was exported, or facts recorded there), or only the one that exported it (a result recorded elsewhere);
 * 'unknown' for bundles made before bundles said so.
 */
export type DoctorMachine = 'recording' | 'exporting' | 'unknown';

/** The doctor's and the environment's label in a bundle's view, by whose machine they describe. */
export function doctorMachineLabel(machine: DoctorMachine): string {
  switch (machine) {
    case 'recording':
      return 'The machine the run was recorded on.';
    case 'exporting':
      return 'The doctor of the machine that exported this bundle, not the one that ran it: the result was recorded elsewhere.';
    default:
      return 'The machine that made this bundle: this bundle does not say whether the run was recorded there.';
  }
}

export interface BundleDoctor {
  /** Whose machine it describes. */
  machine: DoctorMachine;
  checks: DoctorCheck[];
  /** 'facts': judged again from the recorded facts by this version's rules; 'saved': the checks as the exporter made them. */
  from: 'facts' | 'saved' | 'none';
  /** When the facts were gathered (the exporter's clock), when known. */
  gatheredAt: string | null;
  note: string | null;
}

export interface BundleView {
  path: string;
  manifest: BundleManifest;
  entries: { name: string; bytes: number }[];
  /**
   * For the banner: the device the run was on and when it ran (the result's own time; null when the result does
   * not say), and when the bundle was exported.
   */
  recorded: { device: string | null; at: string | null; exportedAt: string };
  plan: LaunchPlan | null;
  outcome: RunOutcome | null;
  sources: BundleSource[];
  kernels: { compile: BundleKernelCompile; ptx: string | null }[];
  validation: (BundleValidation & { from: 'bundle' | 'opened' }) | null;
  /** The run's memory timeline (decode with decodeTimeline), with the samples when the bundle has them. */
  timelines: TimelineWire[];
  timelineSummary: TimelineSummary[];
  samples: { count: number; devices: number } | null;
  sanitizer: SanitizeReport | null;
  sanitizerRaw: { name: string; bytes: number }[];
  devices: DeviceProfile[];
  doctor: BundleDoctor;
  environment: { redacted: boolean; variables: Record<string, string> } | null;
  /** A program's diagnosis (schema 3), and the entry holding its allocator history's snapshot. */
  diagnosis: DiagnosisReport | null;
  diagnosisSnapshot: string | null;
  /** The kernel profile made with the run (schema 4), read-only like the rest. */
  profile: Profile | null;
  /** What the bundle lacks, or what could not be shown from it, one sentence each. */
  notes: string[];
}

// TextDecoder is in every runtime the workbench runs in, but in no lib core/ compiles against (as in unpickle.ts).
declare const TextDecoder: new (label: string, options?: { fatal?: boolean }) => { decode(input: Uint8Array): string };
const decoder = new TextDecoder('utf-8', { fatal: false });

/** An entry's JSON, its shape checked against its role's limits before it is parsed. */
function jsonEntry(entries: ReadonlyMap<string, Uint8Array>, name: string | null, limits: JsonLimits): unknown {
  if (name === null) return undefined;
  const bytes = entries.get(name);
  if (!bytes) throw new BundleContentError(`the manifest names "${name}", which the bundle does not hold`);
  try {
    return parseJsonWithin(bytes, limits, name);
  } catch (error) {
    if (error instanceof JsonRefusedError) throw new BundleContentError(error.message);
    throw error;
  }
}

function parsed<T extends z.ZodType>(schema: T, value: unknown, name: string, what: string): z.infer<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new BundleContentError(`${name} is not ${what}: ${describeIssues(r.error).split('\n').slice(0, 3).join('; ')}`);
}

const environmentSchema = z.object({
  redacted: z.boolean(),
  variables: z.record(z.string().max(256), z.string().max(65_536)).refine((v) => Object.keys(v).length <= 256, 'at most 256 variables'),
});

const checkSchema = z.object({
  id: z.string().max(256),
  status: z.enum(['ok', 'warn', 'fail', 'not-run']),
  title: z.string().max(4096),
  detail: z.string().max(65_536),
  remedy: z.string().max(65_536).nullable(),
  area: z.enum(['driver', 'compilers', 'environment', 'gpu', 'processes']).optional(),
  searched: z.array(z.string().max(4096)).max(256).optional(),
});

const entryList = z.array(z.object({ name: z.string(), bytes: z.number().int().min(0) }));

/** What bundle.open answers: each part checked with the schema that read it from the bundle. */
export const bundleViewSchema = schemaFor<BundleView>()(
  z.object({
    path: z.string(),
    manifest: bundleManifestSchema,
    entries: entryList,
    recorded: z.object({ device: z.string().nullable(), at: z.string().nullable(), exportedAt: z.string() }),
    plan: launchPlanSchema.nullable(),
    outcome: savedRunOutcomeSchema.nullable(),
    sources: z.array(z.object({ entry: z.string().nullable(), sourceName: z.string(), text: z.string(), kernels: z.array(z.string()) })),
    kernels: z.array(
      z.object({ compile: readAs<BundleKernelCompile>("a kernel's compile", bundleCompileSchema.shape.kernels.element), ptx: z.string().nullable() }),
    ),
    validation: readAs<BundleValidation & { from: 'bundle' | 'opened' }>(
      "the validator's findings",
      bundleValidationSchema.extend({ from: z.enum(['bundle', 'opened']) }),
    ).nullable(),
    timelines: z.array(timelineWireSchema),
    timelineSummary: z.array(timelineSummarySchema),
    samples: z.object({ count: z.number().int().min(0), devices: z.number().int().min(0) }).nullable(),
    sanitizer: sanitizeAnswerSchema.nullable(),
    sanitizerRaw: entryList,
    devices: z.array(deviceProfileSchema),
    doctor: z.object({
      machine: z.enum(['recording', 'exporting', 'unknown']),
      checks: z.array(doctorCheckSchema),
      from: z.enum(['facts', 'saved', 'none']),
      gatheredAt: z.string().nullable(),
      note: z.string().nullable(),
    }),
    environment: environmentSchema.nullable(),
    diagnosis: diagnosisAnswerSchema.nullable(),
    diagnosisSnapshot: z.string().nullable(),
    profile: profileSchema.nullable(),
    notes: z.array(z.string()),
  }),
);

/** The doctor's report from doctor.json: judged again from its facts where they read, else the checks it saved. */
export function bundleDoctor(value: unknown): BundleDoctor {
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  const machine: DoctorMachine = record?.['machine'] === 'recording' || record?.['machine'] === 'exporting' ? record['machine'] : 'unknown';
  return { machine, ...doctorChecks(record) };
}

function doctorChecks(record: Record<string, unknown> | null): Omit<BundleDoctor, 'machine'> {
  if (!record) return { checks: [], from: 'none', gatheredAt: null, note: 'The bundle holds no doctor report.' };
  if (record['timedOut'] === true || record['failed'] === true)
    return {
      checks: [],
      from: 'none',
      gatheredAt: null,
      note: `The doctor did not report when the bundle was made: ${typeof record['detail'] === 'string' ? record['detail'].slice(0, 500) : 'no reason was kept'}.`,
    };
  const facts = record['facts'] === undefined ? null : parseDoctorFacts(record['facts']);
  if (facts?.ok) return { checks: evaluateDoctor(facts.facts), from: 'facts', gatheredAt: facts.facts.gatheredAt, note: null };
  const saved = z.array(checkSchema).max(1000).safeParse(record['checks']);
  if (saved.success)
    return {
      checks: saved.data as DoctorCheck[],
      from: 'saved',
      gatheredAt: null,
      note: facts
        ? `The doctor's facts in this bundle could not be read (${facts.problems.slice(0, 2).join('; ')}): these are the checks as the exporting workbench made them.`
        : 'This bundle keeps the doctor’s checks but not the facts they were made from: they are shown as the exporting workbench made them.',
    };
  return { checks: [], from: 'none', gatheredAt: null, note: 'The doctor report in this bundle could not be read.' };
}

export interface BundleViewOptions {
  /** Each JSON entry's limits by its role (default: BUNDLE_JSON_LIMITS). */
  limits?: Record<JsonRole, JsonLimits>;
}

/** The view of an opened bundle (its zip already read within limits and its manifest and plan checked). */
export function bundleView(path: string, manifest: BundleManifest, entries: ReadonlyMap<string, Uint8Array>, options: BundleViewOptions = {}): BundleView {
  const c = manifest.contents;
  const notes: string[] = [];
  const limits = options.limits ?? BUNDLE_JSON_LIMITS;
  const read = (name: string | null, role: JsonRole) => jsonEntry(entries, name, limits[role]);
  const plan = c.plan === null ? null : parsed(launchPlanSchema, read(c.plan, 'plan'), c.plan, 'a launch plan');
  let outcome = outcomeOf(read(c.result, 'result'), c.result);
  const diagnosis = diagnosisOf(entries, c.diagnosis, c.diagnosisSnapshot, limits.diagnosis);
  notes.push(...missingNotes(plan, outcome, diagnosis));

  const sources = sourcesOf(plan, c.sources, entries);
  if (plan && sources.length === 0) notes.push('The kernels’ sources were left out of this bundle: there is no source to show, and no repro/.');

  // Compile records and PTX: compile.json (schema 2), else the result's own records (schema 1 bundles have no PTX).
  let kernels: BundleView['kernels'] = [];
  if (c.compile !== null) {
    const compile = parsed(bundleCompileSchema, read(c.compile, 'compile'), c.compile, 'a compile record');
    kernels = compile.kernels.map((k) => {
      const bytes = k.ptx !== null ? entries.get(k.ptx) : undefined;
      if (k.ptx !== null && !bytes) throw new BundleContentError(`${c.compile} names "${k.ptx}", which the bundle does not hold`);
      return { compile: k, ptx: bytes ? decoder.decode(bytes) : null };
    });
  } else if (plan && outcome) {
    kernels = bundleCompile(plan, outcome, runArch(outcome) ?? NO_GPU_ARCH, () => null, new Map()).compile.kernels.map((k) => ({
      compile: { ...k, ptxMissing: 'this bundle was made before bundles carried PTX (schema 1)' },
      ptx: null,
    }));
  }
  for (const k of kernels)
    if (!k.ptx && k.compile.ptxMissing && c.compile !== null) notes.push(`No PTX for kernel ${k.compile.kernel}: ${k.compile.ptxMissing}.`);
  if (manifest.schema < 2)
    notes.push(`This bundle was made with bundle schema ${manifest.schema}: it has no PTX, compile options, validator findings or NVML samples.`);

  const devices = devicesOf(read(c.devices, 'devices'), c.devices, diagnosis, notes);

  // Validator findings: as the exporter made them, or (a schema 1 bundle with a profile) made now from the bundle's own profile.
  let validation: BundleView['validation'] = null;
  if (c.validation !== null)
    validation = { ...parsed(bundleValidationSchema, read(c.validation, 'validation'), c.validation, 'validator findings'), from: 'bundle' };
  else if (plan) {
    const profile = devices.find((d) => !outcome?.result || d.device.name === outcome.result.device.name) ?? null;
    validation = { ...bundleValidation(plan, profile && { profile, from: `the bundle's ${c.devices}` }, outcome?.result ?? null), from: 'opened' };
  }
  if (validation?.note) notes.push(validation.note);

  // Samples and the memory timeline.
  let samples: SampleSeries | null = null;
  if (c.samples !== null) samples = parsed(sampleSeriesSchema, read(c.samples, 'samples'), c.samples, 'NVML samples');
  else samples = outcome?.samples ?? null;
  const timelines: TimelineWire[] = [];
  const timelineSummary: TimelineSummary[] = [];
  if (outcome?.result) {
    try {
      const timeline = timelineFromRun(checkRunForTimeline(outcome.result), samples);
      timelines.push(encodeTimeline(timeline));
      timelineSummary.push(summarizeTimeline(timeline));
    } catch (error) {
      if (!(error instanceof NoEventLogError || error instanceof RunLogError)) throw error;
      notes.push(error.message);
    }
    if (samples && typeof outcome.result.startedAtMs !== 'number')
      notes.push('The NVML samples cannot be placed on the run’s timeline: the result does not say when the run started.');
  } else if (outcome) notes.push('The run never reached the GPU, so there is no memory timeline.');
  if (!samples && outcome?.result)
    notes.push(
      `No NVML samples were taken while this run ran${outcome.samplingProblem ? ` (${outcome.samplingProblem})` : ''}: the timeline shows the run’s own allocations, not the device’s memory.`,
    );

  // The sanitizer.
  const sanitizer =
    c.sanitizer === null ? null : (parsed(sanitizeReportSchema, read(c.sanitizer, 'sanitizer'), c.sanitizer, 'a sanitizer report') as SanitizeReport);
  const sanitizerRaw = c.sanitizerRaw.map((name) => ({ name, bytes: entries.get(name)?.byteLength ?? 0 }));
  if (!sanitizer && !diagnosis) notes.push('The bundle holds no compute-sanitizer report.');
  const profile = c.profile === null ? null : parsed(profileSchema, read(c.profile, 'profile'), c.profile, 'a kernel profile');
  // The samples travel with the outcome as a run's own do, so whatever draws the run draws the bundle's samples.
  if (outcome && samples && !outcome.samples) outcome = { ...outcome, samples };

  // The doctor and the environment.
  const doctorValue = read(c.doctor, 'doctor');
  const doctor = bundleDoctor(doctorValue);
  if (doctor.note) notes.push(doctor.note);
  const environment = c.environment === null ? null : parsed(environmentSchema, read(c.environment, 'environment'), c.environment, 'an environment record');

  return {
    path,
    manifest,
    entries: [...entries].map(([name, bytes]) => ({ name, bytes: bytes.byteLength })),
    recorded: {
      device: outcome?.result?.device.name ?? devices[0]?.device.name ?? diagnosis?.evidence.environment.gpus?.[0]?.name ?? null,
      at: recordedAt(outcome, diagnosis),
      exportedAt: manifest.createdAt,
    },
    plan,
    outcome,
    sources,
    kernels,
    validation,
    timelines,
    timelineSummary,
    samples: samples ? { count: samples.samples.length, devices: samples.devices.length } : null,
    sanitizer,
    sanitizerRaw,
    devices,
    doctor,
    environment,
    diagnosis,
    diagnosisSnapshot: c.diagnosisSnapshot,
    profile,
    notes,
  };
}

/** Sources: the plan's own text (what would run), one document per distinct text, with the entry that holds it. */
function sourcesOf(plan: LaunchPlan | null, names: readonly string[], entries: ReadonlyMap<string, Uint8Array>): BundleSource[] {
  const sources: BundleSource[] = [];
  const sourceEntries = new Map<string, string>();
  for (const name of names) sourceEntries.set(decoder.decode(entries.get(name) ?? new Uint8Array()), name);
  for (const k of plan?.kernels ?? []) {
    if (k.source === '') continue;
    const same = sources.find((s) => s.text === k.source);
    if (same) same.kernels.push(k.id);
    else sources.push({ entry: sourceEntries.get(k.source) ?? null, sourceName: k.sourceName, text: k.source, kernels: [k.id] });
  }
  return sources;
}

/** The device profiles a bundle holds; what it lacks of them said (a program's diagnosis carries its GPUs itself). */
function devicesOf(value: unknown, name: string | null, diagnosis: DiagnosisReport | null, notes: string[]): DeviceProfile[] {
  const devices = value === undefined ? [] : profilesFromDevicesEntry(value);
  if (name !== null && devices.length === 0) notes.push(`${name} holds no device profile this version can read.`);
  if (name === null && !diagnosis) notes.push('The bundle holds no profile of the device the run was on.');
  return devices;
}

/** When the run ran, by its own clock: the result's start, a program diagnosis's; null when neither says. */
function recordedAt(outcome: RunOutcome | null, diagnosis: DiagnosisReport | null): string | null {
  const started = outcome?.result?.startedAtMs;
  if (typeof started === 'number' && Number.isFinite(started) && started > 0) {
    const d = new Date(started);
    if (!Number.isNaN(d.getTime())) return d.toISOString();
  }
  const at = diagnosis ? new Date(diagnosis.startedAt) : null;
  return at && !Number.isNaN(at.getTime()) ? at.toISOString() : null;
}

function outcomeOf(value: unknown, name: string | null): RunOutcome | null {
  if (name === null) return null;
  const checked = checkSavedOutcome(value);
  if (!checked.ok) throw new BundleContentError(`${name} is not a run result: ${checked.problems.slice(0, 3).join('; ')}`);
  return checked.outcome;
}

/** What a bundle without a plan or a result lacks; a program's diagnosis has neither, and lacks nothing for it. */
function missingNotes(plan: LaunchPlan | null, outcome: RunOutcome | null, diagnosis: DiagnosisReport | null): string[] {
  if (diagnosis) return [];
  return [
    ...(plan ? [] : ['The bundle holds no launch plan: the launch panel has nothing to show, and nothing can be run again from it.']),
    ...(outcome ? [] : ['The bundle holds no run result: there is no diagnosis, memory timeline or validator context from a run.']),
  ];
}

function diagnosisOf(entries: ReadonlyMap<string, Uint8Array>, name: string | null, snapshotEntry: string | null, limits: JsonLimits): DiagnosisReport | null {
  if (name === null) return null;
  if (snapshotEntry !== null && !entries.has(snapshotEntry))
    throw new BundleContentError(`the manifest names ${snapshotEntry}, which the bundle does not hold`);
  const parsed = parseDiagnosisReport(jsonEntry(entries, name, limits));
  if (!parsed.ok) throw new BundleContentError(`${name} is not a diagnosis report: ${parsed.error}`);
  // The snapshot is the bundle's own entry, or none: a path the bundle names elsewhere is not followed.
  for (const run of parsed.report.evidence.runs) if (run.oomPicture && run.oomPicture.snapshotPath !== snapshotEntry) run.oomPicture.snapshotPath = null;
  return parsed.report;
}
