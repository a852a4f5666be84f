import type { FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';

import { ZipFile } from 'yazl';

import { BUNDLE_SCHEMA, entryNameProblem } from '../../core/bundle/bundle-limits';
import type { BundleManifest } from '../../core/bundle/manifest';
import { bundleEnvironment, type Redactor } from '../../core/bundle/redact';
import { generateRepro } from '../../core/bundle/repro';
import type { LaunchPlan } from '../../core/plan/plan-schema';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { writeStreamAtomic } from '../services/safe-fs';

/** What goes into a bundle; everything optional but the plan and the outcome comes from the caller. */
export interface BundleInput {
  plan: LaunchPlan;
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
  devices?: unknown;
  sanitizer?: unknown;
  /** nvcc's -arch for repro/: the run's own when known. */
  arch?: string;
}

export interface BundleEntries {
  manifest: BundleManifest;
  /** Every entry, in the order written; the manifest first. */
  entries: Map<string, Uint8Array>;
  /** The environment as it goes in (allow-listed, redacted unless asked not to). */
  environment: Record<string, string>;
}

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2) + '\n');

/** The architecture the run compiled for, read from its compile command (sm_90), or null. */
export function runArch(outcome: RunOutcome): string | null {
  for (const c of outcome.compile) {
    const m = /(?:gpu-architecture=|-arch[= ])((?:sm|compute)_\d{2,3}[af]?)/.exec(c.command);
    if (m) return m[1]!.replace(/^compute_/, 'sm_');
  }
  return null;
}

/** A source's name inside the bundle: its base name under sources/, made unique, never a path. */
function sourceEntryName(name: string, taken: Set<string>): string {
  const base = basename(name.replace(/\\/g, '/')).replace(/[^\w.+-]/g, '_') || 'kernel.cu';
  let candidate = `sources/${base}`;
  for (let i = 2; taken.has(candidate) || entryNameProblem(candidate); i++) candidate = `sources/${i}-${base}`;
  taken.add(candidate);
  return candidate;
}

/** Every entry of the bundle, built in memory (a bundle of a run is kilobytes): the preview shows exactly this. */
export function buildBundleEntries(input: BundleInput): BundleEntries {
  const r = input.redactor;
  const files = new Map<string, Uint8Array>();
  const sources: string[] = [];
  const taken = new Set<string>();
  const bySource = new Map<string, string>();
  if (input.includeSources) {
    for (const k of input.plan.kernels) {
      if (bySource.has(k.source)) continue;
      const name = sourceEntryName(k.sourceName, taken);
      bySource.set(k.source, name);
      sources.push(name);
      files.set(name, new TextEncoder().encode(r.code(k.source)));
    }
  }
  // Without sources the plan keeps its shape, its kernels' text emptied (a valid plan, not a runnable one).
  // Only paths, UUIDs and serials: the plan's ids, entries and buffer names are code, and the repro is generated from it.
  const redacted: LaunchPlan = r.codeJson(input.plan);
  const plan: LaunchPlan = { ...redacted, kernels: redacted.kernels.map((k) => ({ ...k, source: input.includeSources ? k.source : '' })) };
  files.set('plan.json', encode(plan));
  files.set('result.json', encode(r.json(input.outcome)));
  const environment = bundleEnvironment(input.env, r);
  files.set('environment.json', encode({ redacted: r.enabled, variables: environment }));
  files.set('doctor.json', encode(r.json(input.doctor)));
  if (input.devices !== undefined) files.set('devices.json', encode(r.json(input.devices)));
  if (input.sanitizer !== undefined) files.set('sanitizer.json', encode(r.json(input.sanitizer)));
  const repro: string[] = [];
  if (input.includeSources) {
    // Generated from the plan as it goes in (redacted), so repro.cu holds nothing the sources do not.
    for (const [name, text] of generateRepro(plan, { arch: input.arch ?? runArch(input.outcome) ?? 'native', origin: r.text(input.origin) })) {
      files.set(name, new TextEncoder().encode(text));
      repro.push(name);
    }
  }
  const manifest: BundleManifest = {
    schema: BUNDLE_SCHEMA,
    createdAt: input.createdAt,
    workbench: { version: input.workbenchVersion },
    redacted: r.enabled,
    contents: {
      plan: 'plan.json',
      result: 'result.json',
      sources,
      environment: 'environment.json',
      doctor: 'doctor.json',
      devices: files.has('devices.json') ? 'devices.json' : null,
      sanitizer: files.has('sanitizer.json') ? 'sanitizer.json' : null,
      repro,
    },
  };
  const entries = new Map<string, Uint8Array>([['manifest.json', encode(manifest)], ...files]);
  return { manifest, entries, environment };
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

/**
 * Writes the zip atomically through writeStreamAtomic: streamed into a temporary file in the same folder (a
 * name of its own), flushed to disk (fsync), then renamed over the target; a symlink is written through and an
 * existing file keeps its mode. A failure at any point removes the temporary file, so the path holds the old
 * file or the whole new one, never a part. yazl (maintained, already
 * used to write test bundles) validates entry names and streams, so memory stays at one entry.
 */
export async function writeBundle(path: string, entries: Map<string, Uint8Array>, mtime = new Date()): Promise<{ path: string; bytes: number }> {
  let bytes = 0;
  const writeZip = async (handle: FileHandle) => {
    const zip = new ZipFile();
    const done = (async () => {
      for await (const chunk of zip.outputStream) {
        const b = chunk as Buffer;
        await handle.write(b);
        bytes += b.length;
      }
    })();
    try {
      for (const [name, data] of entries) zip.addBuffer(Buffer.from(data.buffer, data.byteOffset, data.byteLength), name, { mtime, mode: 0o100644 });
      zip.end();
    } catch (error) {
      (zip.outputStream as Readable).destroy();
      await done.catch(() => undefined);
      throw error;
    }
    await done;
  };
  try {
    const { path: target } = await writeStreamAtomic(path, writeZip);
    return { path: target, bytes };
  } catch (error) {
    if (error instanceof BundleWriteError) throw error;
    const e = error as NodeJS.ErrnoException;
    throw new BundleWriteError(path, REASONS[e.code ?? ''] ?? (e.code === 'EINVAL' ? 'it is not a regular file' : e.message));
  }
}
