import { randomBytes } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { parseDiagnosisReport } from '../../core/diagnose/report-schema';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { defaultStateDir } from '../services/draft-store';
import { readRegularFile } from '../services/safe-fs';

/** A saved report at most: seven runs' bounded output (4 MiB each) and their findings. */
export const MAX_DIAGNOSIS_BYTES = 32 * 2 ** 20;

export class DiagnosisFileError extends Error {
  override readonly name = 'DiagnosisFileError';
}

/** Where the host keeps the allocator history's snapshots of diagnoses run from the UI (private to the user). */
export async function snapshotKeepPath(): Promise<string> {
  const dir = join(defaultStateDir(), 'diagnoses');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}.pickle`);
}

const isFile = async (path: string) => (await stat(path).catch(() => null))?.isFile() ?? false;

/**
 * A diagnosis saved as JSON, read (a regular file, bounded), parsed and checked. Its snapshot is looked for where the
 * report names it, else beside the report under the same name: a report and its snapshot travel together.
 */
export async function openDiagnosisFile(path: string): Promise<DiagnosisReport> {
  const { bytes } = await readRegularFile(path, MAX_DIAGNOSIS_BYTES).catch((error: unknown) => {
    throw new DiagnosisFileError(`${path} could not be read: ${error instanceof Error ? error.message : String(error)}`);
  });
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new DiagnosisFileError(
      `${basename(path)} is not JSON (${error instanceof Error ? error.message : String(error)}): open a file that \`gpu-workbench diagnose --json\` wrote.`,
    );
  }
  const parsed = parseDiagnosisReport(value);
  if (!parsed.ok)
    throw new DiagnosisFileError(`${basename(path)} is not a diagnosis report (${parsed.error}): open a file that \`gpu-workbench diagnose --json\` wrote.`);
  for (const run of parsed.report.evidence.runs) {
    const picture = run.oomPicture;
    if (!picture) continue;
    const named = picture.snapshotPath;
    const candidates = [named, named ? join(dirname(path), basename(named)) : null, path.replace(/\.json$/i, '.pickle')].filter((p): p is string => !!p);
    let found: string | null = null;
    for (const candidate of candidates) if (!found && (await isFile(candidate))) found = candidate;
    picture.snapshotPath = found;
  }
  return parsed.report;
}
