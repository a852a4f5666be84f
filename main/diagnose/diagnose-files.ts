import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { parseDiagnosisReport } from '../../core/diagnose/report-schema';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { defaultStateDir } from '../services/draft-store';
import { KEPT_SNAPSHOTS, keepNewest } from '../services/kept-files';
import { runReader } from '../readers/reader-process';
import { openRegularFile } from '../services/safe-fs';

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

/** PROTO, the first opcode of every pickle of protocol 2 or later: what torch.cuda.memory._dump_snapshot writes. */
const PICKLE_PROTO = 0x80;

/**
 * A snapshot beside a report: a regular `.pickle` file that begins as a pickle does. A report from outside names the
 * file; without these checks a name such as `.env` would make an export ship whatever sits beside the report.
 */
async function isSnapshotFile(path: string): Promise<boolean> {
  if (!/\.pickle$/i.test(path)) return false;
  const opened = await openRegularFile(path).catch(() => null);
  if (!opened) return false;
  try {
    const { bytesRead, buffer } = await opened.handle.read(Buffer.alloc(1), 0, 1, 0);
    return bytesRead === 1 && buffer[0] === PICKLE_PROTO;
  } catch {
    return false;
  } finally {
    await opened.handle.close().catch(() => undefined);
  }
}

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
    for (const candidate of candidates) if (!found && (await isSnapshotFile(candidate))) found = candidate;
    picture.snapshotPath = found;
  }
  return parsed.report;
}
