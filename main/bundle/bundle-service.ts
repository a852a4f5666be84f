import { hostname, homedir, userInfo } from 'node:os';

import type { AbortLike } from '../../core/api/channels';
import type { BundleExportEvent, BundleExportResult, BundlePhase, BundlePreview } from '../../core/bundle/bundle-export';
import { kernelCompileOptions, runArch, type PtxLookup } from '../../core/bundle/bundle-compile';
import { sampleSeriesSchema } from '../../core/bundle/bundle-samples';
import { sanitizeReportSchema, type RawSanitizerXml } from '../../core/bundle/bundle-sanitizer';
import { makeRedactor, NO_REDACTION, type RedactionFacts, type Redactor } from '../../core/bundle/redact';
import { evaluateDoctor } from '../../core/doctor/evaluate';
import { shareableFacts, type DoctorFacts } from '../../core/doctor/facts';
import type { Profile } from '../../core/kernel-profile/profile';
import type { SampleSeries } from '../../core/memory/samples';
import { describeIssues, launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import type { RunOutcome } from '../../core/runner/run-outcome';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import type { DeviceProfile } from '../../core/validate/device-limits';
import type { CompileService } from '../compile/compile-service';
import { runDoctor } from '../doctor/gather';
import { appVersion } from '../paths';
import { listProfiles } from '../services/profile-service';
import { buildBundleEntries, writeBundle, type BundleEntries } from './write-bundle';
import type { DoctorMachine } from '../../core/bundle/bundle-view';

/**
 * One path for making a bundle, whoever asks (the CLI's `bundle export`, the UI's bundle.preview and
 * bundle.export): the request's plan checked as data from outside, then what the host adds — the doctor's
 * report (time-limited), the profile of the run's device, each kernel's PTX (from the compile cache, where the
 * run's own compile left it, else compiled again off the event loop) — then the entries, then the zip.
 */

/**
 * What the caller gives: the run, its plan, and what was seen. The outcome, report, samples and profile are the
 * host's own (files it read and checked — checkSanitizerReport, checkSamples — or what it holds by id for the UI);
 * the plan, a user's document, is checked here whatever sent it.
 */
export interface BundleRequest {
  /** Null for a recorded result whose plan is not at hand: the bundle holds what there is and says what it lacks. */
  plan: unknown;
  outcome: RunOutcome;
  /** Where the plan came from, in words (a file, "sample oob-off-by-one (broken)"). */
  origin: string;
  sanitizer?: SanitizeReport | null;
  sanitizerXml?: RawSanitizerXml[];
  /** NVML samples taken while it ran (default: the outcome's own). */
  samples?: SampleSeries | null;
  /** The kernel profile made with this run (profile.run). */
  profile?: Profile | null;
  /** A device profile to use for the run's device, with where it came from (the CLI's --devices). */
  devices?: { profiles: DeviceProfile[]; from: string } | null;
  includeSources: boolean;
  redact: boolean;
  /** The doctor's time limit. */
  doctorLimitMs?: number;
  /** Facts the doctor recorded elsewhere (`doctor --facts-out`), judged instead of asking this machine's doctor. */
  doctorFacts?: DoctorFacts;
  /**
   * Whether the run was made on this machine (this session's run): then this machine's doctor is the run's. A result
   * recorded elsewhere gets this machine's doctor labelled as the exporting machine's, never passed off as the run's.
   */
  recordedHere?: boolean;
}

export type BundleEvent = BundleExportEvent;

/** The request's plan, or a report or samples read from a file, are not what they say: in words, nothing was written. */
export class BundleInputError extends Error {}

export interface BundleHooks {
  signal?: AbortLike;
  onEvent?: (event: BundleEvent) => void;
}

export interface BundleServices {
  /** Compiles PTX that the cache does not hold; null where no compile is possible (then the bundle says so per kernel). */
  compiler: CompileService | null;
  /** Why there is no compiler, in words, for the kernels' notes (default: no compile service). */
  noCompiler?: string;
}

/**
 * The doctor's report with the facts it judged, or what stopped it: a wedged GPU must not hang an export. Each
 * driver and NVML query has half the limit (main/doctor/time-limit.ts); the whole has the limit, as a backstop.
 * Redacted bundles leave process command lines out (core/doctor/facts.ts, shareableFacts).
 */
export async function doctorReport(limitMs: number, redacted = true): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<unknown>((resolve) => {
    timer = setTimeout(() => resolve({ timedOut: true, limitMs, detail: `the doctor did not finish in ${limitMs} ms (a wedged GPU or driver?)` }), limitMs);
    timer.unref();
  });
  const report = runDoctor({ limitMs: Math.max(100, limitMs / 2) })
    .then(({ checks, facts }) => {
      const kept = redacted ? shareableFacts(facts) : facts;
      return { checks, discovery: kept.discovery, facts: kept };
    })
    .catch((error: unknown) => ({ failed: true, detail: error instanceof Error ? error.message : String(error) }));
  try {
    return await Promise.race([report, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** The names this machine would leak: the user's, the host's, the home folder. */
export function hostRedactionFacts(env: Record<string, string | undefined> = process.env): RedactionFacts {
  const user = (() => {
    try {
      return userInfo().username;
    } catch {
      return '';
    }
  })();
  return {
    userNames: [env['USER'], env['LOGNAME'], user].filter((v): v is string => !!v),
    hostNames: [env['HOSTNAME'], hostname()].filter((v): v is string => !!v),
    homeDirs: [env['HOME'], homedir()].filter((v): v is string => !!v),
  };
}

/** A redactor of the names this machine would leak. */
export const hostRedactor = (env: Record<string, string | undefined> = process.env): Redactor => makeRedactor(hostRedactionFacts(env));

interface CheckedRequest {
  plan: LaunchPlan | null;
  outcome: RunOutcome;
  sanitizer: SanitizeReport | null;
  samples: SampleSeries | null;
  profile: Profile | null;
}

const issues = (error: Parameters<typeof describeIssues>[0]) => describeIssues(error).split('\n').slice(0, 3).join('; ');

/** A sanitizer report read from a file (`bundle export --sanitizer`): checked as data from outside. */
export function checkSanitizerReport(value: unknown): SanitizeReport {
  const parsed = sanitizeReportSchema.safeParse(value);
  if (!parsed.success) throw new BundleInputError(`The sanitizer report is not one the workbench wrote: ${issues(parsed.error)}`);
  return parsed.data as SanitizeReport;
}

/** NVML samples read from a file (`bundle export --samples`): checked as data from outside. */
export function checkSamples(value: unknown): SampleSeries {
  const parsed = sampleSeriesSchema.safeParse(value);
  if (!parsed.success) throw new BundleInputError(`The NVML samples are not a sample series: ${issues(parsed.error)}`);
  return parsed.data;
}

/** The request with its plan checked as data from outside. */
function checkBundleRequest(request: BundleRequest): CheckedRequest {
  const plan = request.plan === null || request.plan === undefined ? null : launchPlanSchema.safeParse(request.plan);
  if (plan && !plan.success) throw new BundleInputError(`The plan is not valid:\n${describeIssues(plan.error).split('\n').slice(0, 5).join('\n')}`);
  return {
    plan: plan?.data ?? null,
    outcome: request.outcome,
    sanitizer: request.sanitizer ?? null,
    samples: request.samples ?? null,
    profile: request.profile ?? null,
  };
}

/**
 * A profile of the device the run was on, by its name: this machine's device where it is that device, else a
 * profile (shipped or the user's) of it. Null when none is at hand (the bundle then says its launches were not checked).
 */
export async function runDeviceProfiles(outcome: RunOutcome, plan: LaunchPlan | null): Promise<{ profiles: DeviceProfile[]; from: string } | null> {
  const entries = await listProfiles().catch(() => []);
  const name = outcome.result?.device.name;
  const pick =
    (name
      ? (entries.find((e) => e.source === 'device' && e.profile.device.name === name) ??
        entries.find((e) => e.source === 'user' && e.profile.device.name === name) ??
        entries.find((e) => e.source === 'shipped' && e.profile.device.name === name))
      : entries.find((e) => e.source === 'device' && e.profile.device.ordinal === (plan?.device ?? 0))) ?? null;
  if (!pick) return null;
  return { profiles: [pick.profile], from: pick.source === 'device' ? "this machine's device" : `the workbench's ${pick.label}` };
}

/** Each kernel's PTX: the compile cache's (the run's own compile), else a compile now; or why there is none. */
async function kernelPtx(plan: LaunchPlan, outcome: RunOutcome, services: BundleServices, signal?: AbortLike): Promise<Map<string, PtxLookup>> {
  const out = new Map<string, PtxLookup>();
  const arch = runArch(outcome);
  for (const kernel of plan.kernels) {
    const record = outcome.compile.find((c) => c.kernel === kernel.id);
    if (!services.compiler) {
      out.set(kernel.id, { missing: services.noCompiler ?? 'this export could not compile (no compile service)' });
      continue;
    }
    if (!arch) {
      out.set(kernel.id, { missing: 'the run never compiled it, so the architecture it was built for is not known' });
      continue;
    }
    const request = { source: kernel.source, sourceName: kernel.sourceName, options: kernelCompileOptions(kernel, arch), backend: 'auto' as const };
    try {
      const cached = await services.compiler.cached(request);
      const result = cached ?? (await services.compiler.compile(request, 120_000, null, signal));
      if (signal?.aborted) break;
      if (!result.ptx) {
        out.set(kernel.id, { missing: result.ok ? `${result.backend} gave no PTX for it` : 'it does not compile here, so no PTX could be made' });
        continue;
      }
      const other = record && record.backend !== result.backend ? ` (the run used ${record.backend})` : '';
      out.set(kernel.id, {
        text: result.ptx,
        from: result.cached
          ? `taken from the compile cache (${other ? 'an earlier compile' : "the run's own compile"} with ${result.backend} ${result.compilerVersion} for ${arch})${other}`
          : `compiled again at export with ${result.backend} ${result.compilerVersion} for ${arch}${other}`,
      });
    } catch (error) {
      if (signal?.aborted) break;
      out.set(kernel.id, { missing: `it could not be compiled at export (${error instanceof Error ? error.message : String(error)})` });
    }
  }
  return out;
}

export const cancelledError = () => new BundleInputError('The export was cancelled. Nothing was written.');

/** Whose machine the bundle's doctor and environment describe. */
export const doctorMachine = (request: Pick<BundleRequest, 'doctorFacts' | 'recordedHere'>): DoctorMachine =>
  request.doctorFacts || request.recordedHere ? 'recording' : 'exporting';

/** Every entry of the bundle the request describes: what a preview shows and an export writes. */
export async function gatherBundle(request: BundleRequest, services: BundleServices, hooks: BundleHooks = {}): Promise<BundleEntries> {
  const phase = (p: BundlePhase) => hooks.onEvent?.({ kind: 'phase', phase: p });
  const stopIfCancelled = () => {
    if (hooks.signal?.aborted) throw cancelledError();
  };
  phase('check');
  const checked = checkBundleRequest(request);
  phase('doctor');
  const recorded = request.doctorFacts && (request.redact ? shareableFacts(request.doctorFacts) : request.doctorFacts);
  const report = recorded
    ? { checks: evaluateDoctor(request.doctorFacts!), discovery: recorded.discovery, facts: recorded }
    : await doctorReport(request.doctorLimitMs ?? 10_000, request.redact);
  // Whose doctor it is: the run's machine's (facts it recorded, or a run made here), else the exporting machine's.
  const doctor = { ...(report as object), machine: doctorMachine(request) };
  stopIfCancelled();
  phase('devices');
  const devices = request.devices ?? (await runDeviceProfiles(checked.outcome, checked.plan));
  stopIfCancelled();
  phase('ptx');
  const ptx = request.includeSources && checked.plan ? await kernelPtx(checked.plan, checked.outcome, services, hooks.signal) : new Map<string, PtxLookup>();
  stopIfCancelled();
  phase('pack');
  return buildBundleEntries({
    plan: checked.plan,
    outcome: checked.outcome,
    origin: request.origin,
    workbenchVersion: appVersion(),
    createdAt: new Date().toISOString(),
    includeSources: request.includeSources,
    redactor: request.redact ? hostRedactor() : NO_REDACTION,
    env: process.env,
    doctor,
    devices,
    sanitizer: checked.sanitizer,
    sanitizerXml: request.sanitizerXml ?? [],
    ptx,
    samples: checked.samples,
    profile: checked.profile,
  });
}

export function previewOf(built: BundleEntries, request: Pick<BundleRequest, 'redact' | 'includeSources'>): BundlePreview {
  return {
    files: [...built.entries].map(([name, bytes]) => ({ name, bytes: bytes.byteLength })),
    environment: built.environment,
    redacted: request.redact,
    sources: request.includeSources,
    notes: built.notes,
  };
}

/** Gathers and writes the bundle to `path` (atomically; a cancel or a failure leaves nothing behind). */
export async function exportBundle(path: string, request: BundleRequest, services: BundleServices, hooks: BundleHooks = {}): Promise<BundleExportResult> {
  const built = await gatherBundle(request, services, hooks);
  hooks.onEvent?.({ kind: 'phase', phase: 'write' });
  const written = await writeBundle(path, built.entries, new Date(), {
    ...(hooks.signal ? { signal: hooks.signal } : {}),
    onProgress: (p) => hooks.onEvent?.({ kind: 'progress', ...p }),
  });
  return { ...written, files: previewOf(built, request).files, notes: built.notes };
}
