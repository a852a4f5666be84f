import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

import type { AbortLike } from '../../core/api/channels';
import { DIAGNOSIS_ENTRY, DIAGNOSIS_SNAPSHOT_ENTRY, shareableDiagnosis } from '../../core/bundle/bundle-diagnosis';
import { BUNDLE_FILE_LIMITS, BUNDLE_SCHEMA } from '../../core/bundle/bundle-limits';
import type { BundleView } from '../../core/bundle/bundle-view';
import type { BundleManifest } from '../../core/bundle/manifest';
import { bundleEnvironment, NO_REDACTION } from '../../core/bundle/redact';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { formatBytes } from '../../core/format';
import { appVersion } from '../paths';
import { defaultStateDir } from '../services/draft-store';
import { KEPT_SNAPSHOTS, keepNewest } from '../services/kept-files';
import { runReader } from '../readers/reader-process';
import { readRegularFile } from '../services/safe-fs';
import { doctorReport, hostRedactionFacts, hostRedactor } from './bundle-service';
import { writeBundle } from './write-bundle';

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2) + '\n');

export interface DiagnosisBundleOptions {
  redact: boolean;
  signal?: AbortLike;
  /** The doctor's time limit (the bundle carries this machine's doctor beside the diagnosis). */
  doctorLimitMs?: number;
  /** The diagnosis ran on this machine (default): its doctor and CUDA variables go beside it. A report opened from a file was recorded elsewhere: they would describe another machine, and stay out. */
  withDoctor?: boolean;
}

/**
 * The allocator history's snapshot as the bundle carries it: redacted, its strings (the stack frames' paths) copied
 * through the redactor in a reader process (the file may be from outside: a report opened from a folder); or null,
 * with a note, when it cannot be read or redacted — never a redacted bundle with the snapshot's paths as they were.
 */
async function snapshotForBundle(path: string, redact: boolean, notes: string[], signal?: AbortLike): Promise<Uint8Array | null> {
  // A larger history would make a bundle that no workbench opens.
  const maxBytes = BUNDLE_FILE_LIMITS.diagnosisSnapshot;
  try {
    if (!redact) return new Uint8Array((await readRegularFile(path, maxBytes)).bytes);
    const { value } = await runReader<{ bytes: Uint8Array }>({ kind: 'redacted-snapshot', path, maxBytes, facts: hostRedactionFacts() }, basename(path), {
      signal,
    });
    if (!(value.bytes instanceof Uint8Array)) throw new Error('its reader did not answer with the snapshot');
    // Redaction can lengthen it (a placeholder longer than the name it hides, a byte that was not UTF-8 read as U+FFFD).
    if (value.bytes.byteLength > maxBytes)
      throw new Error(`redacted, it is ${formatBytes(value.bytes.byteLength)}, over the ${formatBytes(maxBytes)} a bundle's snapshot may hold`);
    return value.bytes;
  } catch (error) {
    notes.push(
      `The allocator history's snapshot (${path}) is not in the bundle: ${error instanceof Error ? error.message : String(error)}.${redact ? ' Export without redaction to include it as it is.' : ''}`,
    );
    return null;
  }
}

/**
 * A diagnosis as one zip a colleague can open: the report (every run's output, the steps, the sanitizer's findings,
 * the environment the program saw), the allocator history's snapshot when one was recorded, this machine's doctor
 * and CUDA variables — user and host names, home folders and the user's own variables hidden unless asked not to.
 */
export async function exportDiagnosisBundle(
  report: DiagnosisReport,
  path: string,
  options: DiagnosisBundleOptions,
): Promise<{ path: string; bytes: number; notes: string[] }> {
  const redactor = options.redact ? hostRedactor() : NO_REDACTION;
  const notes: string[] = [];
  const snapshotPath = report.evidence.runs.map((r) => r.oomPicture?.snapshotPath).find((p): p is string => !!p) ?? null;
  const snapshot = snapshotPath ? await snapshotForBundle(snapshotPath, options.redact, notes, options.signal) : null;
  const files = new Map<string, Uint8Array>([[DIAGNOSIS_ENTRY, encode(shareableDiagnosis(report, redactor, snapshot ? DIAGNOSIS_SNAPSHOT_ENTRY : null))]]);
  if (snapshot) files.set(DIAGNOSIS_SNAPSHOT_ENTRY, snapshot);
  const here = options.withDoctor ?? true;
  if (here) {
    files.set('environment.json', encode({ redacted: redactor.enabled, variables: bundleEnvironment(process.env, redactor) }));
    files.set('doctor.json', encode(redactor.json(await doctorReport(options.doctorLimitMs ?? 10_000, options.redact))));
  } else notes.push('The diagnosis was recorded on another machine (opened from a file): this machine’s doctor and environment stay out of the bundle.');
  const manifest: BundleManifest = {
    schema: BUNDLE_SCHEMA,
    createdAt: new Date().toISOString(),
    workbench: { version: appVersion() },
    redacted: redactor.enabled,
    sources: false,
    contents: {
      plan: null,
      result: null,
      sources: [],
      environment: here ? 'environment.json' : null,
      doctor: here ? 'doctor.json' : null,
      devices: null,
      sanitizer: null,
      repro: [],
      compile: null,
      ptx: [],
      validation: null,
      samples: null,
      sanitizerRaw: [],
      diagnosis: DIAGNOSIS_ENTRY,
      diagnosisSnapshot: snapshot ? DIAGNOSIS_SNAPSHOT_ENTRY : null,
      profile: null,
    },
  };
  const written = await writeBundle(path, new Map([['manifest.json', encode(manifest)], ...files]), new Date(), { signal: options.signal });
  return { ...written, notes };
}

/** The folder of opened bundles' diagnosis snapshots: the Memory tab opens them by path. */
export const bundleSnapshotDir = (): string => join(defaultStateDir(), 'bundles');

/**
 * An opened bundle's diagnosis snapshot, written where the Memory tab can open it by path: the host's state folder
 * (0700), named by its content, so opening the same bundle twice writes it once.
 */
export async function placeDiagnosisSnapshot(view: BundleView, bytes: Uint8Array | undefined): Promise<BundleView> {
  if (!view.diagnosis || !view.diagnosisSnapshot || !bytes) return view;
  const dir = bundleSnapshotDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${createHash('sha256').update(bytes).digest('hex').slice(0, 24)}.pickle`);
  await keepNewest(dir, KEPT_SNAPSHOTS - 1);
  await writeFile(path, bytes, { mode: 0o600 });
  for (const run of view.diagnosis.evidence.runs) if (run.oomPicture?.snapshotPath === view.diagnosisSnapshot) run.oomPicture.snapshotPath = path;
  return view;
}
