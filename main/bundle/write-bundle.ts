import type { FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';

import { ZipFile } from 'yazl';

import type { AbortLike } from '../../core/api/channels';
import { NO_GPU_ARCH } from '../../core/devices';
import { bundleCompile, runArch, type PtxLookup } from '../../core/bundle/bundle-compile';
import { BUNDLE_SCHEMA, entryNameProblem } from '../../core/bundle/bundle-limits';
import { shareableSamples } from '../../core/bundle/bundle-samples';
import { sanitizerRawEntries, type RawSanitizerXml } from '../../core/bundle/bundle-sanitizer';
import { bundleValidation } from '../../core/bundle/bundle-validation';
import type { BundleManifest } from '../../core/bundle/manifest';
import { bundleEnvironment, type Redactor } from '../../core/bundle/redact';
import { generateRepro } from '../../core/bundle/repro';
import type { Profile } from '../../core/kernel-profile/profile';
import type { SampleSeries } from '../../core/memory/samples';
import type { LaunchPlan } from '../../core/plan/plan-schema';
import type { RunOutcome } from '../../core/runner/run-outcome';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import type { DeviceProfile } from '../../core/validate/device-limits';
import { writeStreamAtomic } from '../services/safe-fs';

export { runArch };

/** What goes into a bundle; everything optional but the outcome (and the plan, where it is at hand) comes from the caller. */
export interface BundleInput {
  /** Null for a recorded result whose plan is not at hand: what there is goes in, and the notes say what is missing. */
  plan: LaunchPlan | null;
  outcome: RunOutcome;
  /** Where the plan came from, in words (a file name, "sample oob-off-by-one (broken)"), for repro.cu's header. */
  origin: string;
  workbenchVersion: string;
  createdAt: string;
  includeSources: boolean;
  redactor: Redactor;
  env: Record<string, string | undefined>;
  /** `gpu-workbench doctor --json`'s report, gathered under a time limit; null when it could not be. */
  doctor: unknown;
  /** Profiles of the devices: the run's own first, where known; where they came from, in words. */
  devices?: { profiles: DeviceProfile[]; from: string } | null;
  sanitizer?: SanitizeReport | null;
  /** The XML reports compute-sanitizer wrote for that report, when the exporter has them. */
  sanitizerXml?: RawSanitizerXml[];
  /** Each kernel's PTX (by the plan's kernel id), or why there is none. */
  ptx?: ReadonlyMap<string, PtxLookup>;
  /** NVML samples taken while the run ran (default: the outcome's own). */
  samples?: SampleSeries | null;
  /** nvcc's -arch for repro/: the run's own when known. */
  arch?: string;
  /** The kernel profile made with this run (profile.run), when it goes in. */
  profile?: Profile | null;
}

export interface BundleEntries {
  manifest: BundleManifest;
  /** Every entry, in the order written; the manifest first. */
  entries: Map<string, Uint8Array>;
  /** The environment as it goes in (allow-listed, redacted unless asked not to). */
  environment: Record<string, string>;
  /** What the bundle will lack, one sentence each (no PTX for a kernel, no device profile, no samples). */
  notes: string[];
}

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2) + '\n');
const utf8 = (text: string) => new TextEncoder().encode(text);

/** A source's name inside the bundle: its base name under sources/, made unique, never a path. */
function sourceEntryName(name: string, taken: Set<string>): string {
  const base = basename(name.replace(/\\/g, '/')).replace(/[^\w.+-]/g, '_') || 'kernel.cu';
  let candidate = `sources/${base}`;
  for (let i = 2; taken.has(candidate) || entryNameProblem(candidate); i++) candidate = `sources/${i}-${base}`;
  taken.add(candidate);
  return candidate;
}

/** The profile of the device the run was on, among those given: by name (ordinals differ between machines). */
function runProfile(input: BundleInput): { profile: DeviceProfile; from: string } | null {
  const profiles = input.devices?.profiles ?? [];
  const name = input.outcome.result?.device.name;
  const profile = name ? profiles.find((p) => p.device.name === name) : profiles[0];
  return profile && input.devices ? { profile, from: input.devices.from } : null;
}

/** What the plan brings into a bundle: the sources, plan.json, compile records and PTX, the validator's findings, repro/. */
function planEntries(input: BundleInput & { plan: LaunchPlan }, files: Map<string, Uint8Array>, notes: string[]) {
  const r = input.redactor;
  const sources: string[] = [];
  const taken = new Set<string>();
  const bySource = new Map<string, string>();
  if (input.includeSources) {
    for (const k of input.plan.kernels) {
      if (bySource.has(k.source)) continue;
      const name = sourceEntryName(k.sourceName, taken);
      bySource.set(k.source, name);
      sources.push(name);
      files.set(name, utf8(r.code(k.source)));
    }
  } else notes.push('Sources are left out: the plan keeps its shape with its kernels’ text emptied; no PTX and no repro/.');
  // Without sources the plan keeps its shape, its kernels' text emptied (a valid plan, not a runnable one).
  // Only paths, UUIDs and serials: the plan's ids, entries and buffer names are code, and the repro is generated from it.
  const redacted: LaunchPlan = r.codeJson(input.plan);
  const plan: LaunchPlan = { ...redacted, kernels: redacted.kernels.map((k) => ({ ...k, source: input.includeSources ? k.source : '' })) };
  files.set('plan.json', encode(plan));

  // Each kernel's compile as the run made it, and its PTX (which is compiled code: without sources it stays out too).
  const arch = input.arch ?? runArch(input.outcome) ?? NO_GPU_ARCH;
  const ptx = input.includeSources
    ? (input.ptx ?? new Map<string, PtxLookup>())
    : new Map(input.plan.kernels.map((k) => [k.id, { missing: 'sources were left out' }]));
  const { compile, ptxEntries } = bundleCompile(input.plan, input.outcome, arch, (k) => bySource.get(k.source) ?? null, ptx);
  files.set('compile.json', encode(r.json(compile)));
  for (const [name, text] of ptxEntries) files.set(name, utf8(r.code(text)));
  if (input.includeSources) for (const k of compile.kernels) if (k.ptxMissing) notes.push(`No PTX for kernel ${k.kernel}: ${k.ptxMissing}.`);

  const validation = bundleValidation(input.plan, runProfile(input), input.outcome.result);
  files.set('validation.json', encode(r.json(validation)));
  if (validation.note) notes.push(validation.note);

  const repro: string[] = [];
  if (input.includeSources) {
    // Generated from the plan as it goes in (redacted), so repro.cu holds nothing the sources do not.
    for (const [name, text] of generateRepro(plan, { arch: input.arch ?? runArch(input.outcome) ?? 'native', origin: r.text(input.origin) })) {
      files.set(name, utf8(text));
      repro.push(name);
    }
  }
  return { sources, repro, ptx: [...ptxEntries.keys()] };
}

/** What a bundle without its plan lacks, in words: it is still made, and says so. */
export const NO_PLAN_NOTE =
  'The plan that produced this result is not at hand here (a result file keeps no copy of it): the bundle holds no plan, sources, PTX, validator findings or repro/. Load its plan (Load plan, or its sample from the Failure gallery) before exporting to include them.';

/** The sanitizer report's entries: its findings in sanitizer.json, what the tool wrote (its XML, its text) in sanitizer/, once. */
function sanitizerEntries(input: BundleInput, files: Map<string, Uint8Array>, notes: string[]): string[] {
  const r = input.redactor;
  const sanitizerRaw: string[] = [];
  if (!input.sanitizer) return sanitizerRaw;
  const { rawXml, ...report } = input.sanitizer;
  files.set('sanitizer.json', encode(r.json(report)));
  const xml = input.sanitizerXml?.length ? input.sanitizerXml : (rawXml ?? []);
  for (const [name, text] of sanitizerRawEntries(input.sanitizer, xml)) {
    files.set(name, utf8(r.text(text)));
    sanitizerRaw.push(name);
  }
  if (!xml.length) notes.push('The sanitizer’s XML report is not at hand: its findings and its text output go in, the XML does not.');
  return sanitizerRaw;
}

/** Every entry of the bundle, built in memory (a bundle of a run is kilobytes): the preview shows exactly this. */
export function buildBundleEntries(input: BundleInput): BundleEntries {
  const r = input.redactor;
  const files = new Map<string, Uint8Array>();
  const notes: string[] = [];
  const fromPlan = input.plan ? planEntries({ ...input, plan: input.plan }, files, notes) : null;
  if (!fromPlan) notes.push(NO_PLAN_NOTE);
  // The samples the run took go in once, as samples.json (redacted as samples are): not a second time inside the result.
  const { samples: runSamples, ...outcome } = input.outcome;
  const samples = input.samples ?? runSamples ?? null;
  files.set('result.json', encode(r.json(outcome)));

  const environment = bundleEnvironment(input.env, r);
  files.set('environment.json', encode({ redacted: r.enabled, variables: environment }));
  files.set('doctor.json', encode(r.json(input.doctor)));
  if (input.devices?.profiles.length) files.set('devices.json', encode(r.json({ from: input.devices.from, profiles: input.devices.profiles })));
  else notes.push('No device profile goes in: the bundle cannot say which limits the launches were checked against.');
  if (samples) files.set('samples.json', encode(r.enabled ? r.json(shareableSamples(samples)) : samples));
  else if (input.outcome.result)
    notes.push(
      `No NVML samples were taken while this run ran${input.outcome.samplingProblem ? ` (${r.text(input.outcome.samplingProblem)})` : ''}: the memory timeline will show the run’s own allocations only.`,
    );
  const sanitizerRaw = sanitizerEntries(input, files, notes);
  // A profile names the kernel's file as the machine that made it saw it: a path, redacted as paths are.
  if (input.profile) files.set('profile.json', encode(r.json(input.profile)));
  const manifest: BundleManifest = {
    schema: BUNDLE_SCHEMA,
    createdAt: input.createdAt,
    workbench: { version: input.workbenchVersion },
    redacted: r.enabled,
    sources: input.includeSources && fromPlan !== null,
    contents: {
      plan: fromPlan ? 'plan.json' : null,
      result: 'result.json',
      sources: fromPlan?.sources ?? [],
      environment: 'environment.json',
      doctor: 'doctor.json',
      devices: files.has('devices.json') ? 'devices.json' : null,
      sanitizer: files.has('sanitizer.json') ? 'sanitizer.json' : null,
      repro: fromPlan?.repro ?? [],
      compile: fromPlan ? 'compile.json' : null,
      ptx: fromPlan?.ptx ?? [],
      validation: fromPlan ? 'validation.json' : null,
      samples: files.has('samples.json') ? 'samples.json' : null,
      sanitizerRaw,
      diagnosis: null,
      diagnosisSnapshot: null,
      profile: files.has('profile.json') ? 'profile.json' : null,
    },
  };
  const entries = new Map<string, Uint8Array>([['manifest.json', encode(manifest)], ...files]);
  return { manifest, entries, environment, notes };
}

/** The bundle could not be written; nothing was left behind (an existing file at the path is untouched). */
export class BundleWriteError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`The bundle was not written to ${path}: ${reason}. Nothing was left behind.`);
    this.name = 'BundleWriteError';
  }
}

const REASONS: Record<string, string> = {
  ENOENT: 'its folder does not exist',
  EACCES: 'its folder is not writable',
  EPERM: 'its folder is not writable',
  EROFS: 'its folder is on a read-only file system',
  ENOSPC: 'the disk is full',
  EISDIR: 'it is a folder',
};

/** The export was cancelled: nothing was left behind (an existing file at the path is untouched). */
export class BundleCancelledError extends Error {
  constructor(readonly path: string) {
    super(`The bundle was not written to ${path}: the export was cancelled. Nothing was left behind.`);
    this.name = 'BundleCancelledError';
  }
}

export interface WriteProgress {
  /** Bytes of the zip written so far. */
  written: number;
  /** Entries handed to the zip so far, and in all. */
  entries: number;
  totalEntries: number;
}

/**
 * Writes the zip atomically through writeStreamAtomic: streamed into a temporary file in the same folder (a
 * name of its own), flushed to disk (fsync), then renamed over the target; a symlink is written through and an
 * existing file keeps its mode. A failure or a cancel at any point removes the temporary file, so the path holds
 * the old file or the whole new one, never a part. yazl (maintained, already used to write test bundles)
 * validates entry names and streams, so memory stays at one entry.
 */
export async function writeBundle(
  path: string,
  entries: Map<string, Uint8Array>,
  mtime = new Date(),
  options: { signal?: AbortLike; onProgress?: (progress: WriteProgress) => void } = {},
): Promise<{ path: string; bytes: number }> {
  let bytes = 0;
  const cancelled = () => new BundleCancelledError(path);
  const writeZip = async (handle: FileHandle) => {
    if (options.signal?.aborted) throw cancelled();
    const zip = new ZipFile();
    let added = 0;
    const done = (async () => {
      for await (const chunk of zip.outputStream) {
        if (options.signal?.aborted) throw cancelled();
        const b = chunk as Buffer;
        await handle.write(b);
        bytes += b.length;
        options.onProgress?.({ written: bytes, entries: added, totalEntries: entries.size });
      }
    })();
    const stop = () => (zip.outputStream as Readable).destroy();
    options.signal?.addEventListener('abort', stop, { once: true });
    try {
      for (const [name, data] of entries) {
        zip.addBuffer(Buffer.from(data.buffer, data.byteOffset, data.byteLength), name, { mtime, mode: 0o100644 });
        added++;
      }
      zip.end();
    } catch (error) {
      stop();
      await done.catch(() => undefined);
      throw error;
    }
    try {
      await done;
    } catch (error) {
      throw options.signal?.aborted ? cancelled() : error;
    }
    if (options.signal?.aborted) throw cancelled();
  };
  try {
    const { path: target } = await writeStreamAtomic(path, writeZip);
    return { path: target, bytes };
  } catch (error) {
    if (error instanceof BundleWriteError || error instanceof BundleCancelledError) throw error;
    if (options.signal?.aborted) throw cancelled();
    const e = error as NodeJS.ErrnoException;
    throw new BundleWriteError(path, REASONS[e.code ?? ''] ?? (e.code === 'EINVAL' ? 'it is not a regular file' : e.message));
  }
}
