import { randomBytes } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { parseDiagnosisReport } from '../../core/diagnose/report-schema';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { defaultStateDir } from '../services/draft-store';
import { KEPT_SNAPSHOTS, keepNewest } from '../services/kept-files';
import { runReader } from '../readers/reader-process';

/** A saved report at most: seven runs' bounded output (4 MiB each) and their findings. */
export const MAX_DIAGNOSIS_BYTES = 32 * 2 ** 20;

export class DiagnosisFileError extends Error {
  override readonly name = 'DiagnosisFileError';
}

/** The folder of the snapshots below: the Memory tab opens them by path. */
export const diagnosisSnapshotDir = (): string => join(defaultStateDir(), 'diagnoses');

/** Where the host keeps the allocator history's snapshots of diagnoses run from the UI (private to the user). */
export async function snapshotKeepPath(): Promise<string> {
  const dir = diagnosisSnapshotDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await keepNewest(dir, KEPT_SNAPSHOTS - 1);
  return join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}.pickle`);
}

const isFile = async (path: string) => (await stat(path).catch(() => null))?.isFile() ?? false;

/**
 * A diagnosis saved as JSON, read (a regular file, bounded), parsed and checked in a child process of its own
 * (main/readers/file-reader-child.ts), so a hostile file costs that child, never the host. Its snapshot is looked
 * for beside the report only — by the name the report gives it, else the report's own name — never where the file
 * points: a report and its snapshot travel together.
 */
export async function openDiagnosisFile(path: string): Promise<DiagnosisReport> {
  const answer = await runReader<unknown>({ kind: 'diagnosis', path, maxBytes: MAX_DIAGNOSIS_BYTES }, basename(path)).catch((error: unknown) => {
    throw new DiagnosisFileError(error instanceof Error ? error.message : String(error));
  });
  // The reader checked it; the host checks its answer again (the reader is ours, its input was not).
  const parsed = parseDiagnosisReport(answer.value);
  if (!parsed.ok) throw new DiagnosisFileError(`${basename(path)} was not opened: its reader's answer is not a report (${parsed.error}).`);
  for (const run of parsed.report.evidence.runs) {
    const picture = run.oomPicture;
    if (!picture) continue;
    // Only beside the report: the file does not choose a path the user did not open.
    const named = picture.snapshotPath;
    const candidates = [named ? join(dirname(path), basename(named)) : null, path.replace(/\.json$/i, '.pickle')].filter((p): p is string => !!p);
    let found: string | null = null;
    for (const candidate of candidates) if (!found && (await isFile(candidate))) found = candidate;
    picture.snapshotPath = found;
  }
  return parsed.report;
}
