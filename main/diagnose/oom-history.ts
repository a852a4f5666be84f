import { join } from 'node:path';

import type { OomPicture } from '../../core/diagnose/evidence';
import type { AbortLike } from '../../core/api/channels';
import { noPicture, oomPicture } from '../../core/diagnose/oom-picture';
import { importSnapshot, SnapshotImportError, startSnapshotReader } from '../memory/snapshot-client';
import { READER_LIMITS, type WaitingReader } from '../readers/reader-process';
import { readRegularFile } from '../services/safe-fs';

/** The shim's notes at most (a few lines a run). */
const NOTES_MAX_BYTES = 64 * 1024;

/** Why the shim left no snapshot, from its own notes: it never saw torch imported, it could not arm, or no OOM came. */
async function whyNoSnapshot(notesPath: string): Promise<string> {
  const text = await readRegularFile(notesPath, NOTES_MAX_BYTES)
    .then((r) => r.bytes.toString('utf8'))
    .catch(() => '');
  const notes = text
    .split('\n')
    .filter(Boolean)
    .flatMap((line) => {
      try {
        const value = JSON.parse(line) as { kind?: unknown; error?: unknown };
        return typeof value.kind === 'string' ? [{ kind: value.kind, error: typeof value.error === 'string' ? value.error.slice(0, 300) : null }] : [];
      } catch {
        return [];
      }
    });
  const failed = notes.find((n) => n.kind !== 'armed' && n.kind !== 'snapshot');
  if (failed) return `the shim could not record it (${failed.kind}${failed.error ? `: ${failed.error}` : ''}).`;
  if (notes.some((n) => n.kind === 'armed'))
    return 'the history was recorded, but the re-run did not run out of memory in PyTorch’s allocator (another library may have asked the driver directly).';
  return 'the program did not import torch in the process the shim was loaded in (the shim is loaded through PYTHONPATH; a program that resets it, or a subprocess, is not covered).';
}

const snapshotPathOf = (folder: string, envChanges: Record<string, string>) => envChanges['GPU_WORKBENCH_SNAPSHOT'] ?? join(folder, 'oom-snapshot.pickle');

/** The reader of the allocator-history re-run's snapshot, started as the re-run starts (its start-up beside the program). */
export const startOomSnapshotReader = (folder: string, envChanges: Record<string, string>): WaitingReader =>
  startSnapshotReader(snapshotPathOf(folder, envChanges));

/**
 * The allocator-history re-run's snapshot, read in a reader process (`reader`: the one started with the re-run) and
 * summarised at its out-of-memory.
 */
export async function readOomPicture(
  folder: string,
  envChanges: Record<string, string>,
  reader?: WaitingReader,
  /** What stops the read: the diagnosis's Cancel, and what is left of its budget (never more than the reader's own limit). */
  read: { signal?: AbortLike; timeoutMs?: number } = {},
): Promise<OomPicture> {
  const path = snapshotPathOf(folder, envChanges);
  const own = READER_LIMITS['snapshot-model'].timeoutMs;
  try {
    const { model } = await importSnapshot(path, { reader, signal: read.signal, limits: { timeoutMs: Math.min(own, read.timeoutMs ?? own) } });
    return oomPicture(model, path);
  } catch (error) {
    const missing =
      error instanceof SnapshotImportError && /ENOENT|not found|does not exist/i.test(error.message)
        ? await whyNoSnapshot(envChanges['GPU_WORKBENCH_SHIM_NOTES'] ?? join(folder, 'shim-notes.jsonl'))
        : `the snapshot could not be read: ${error instanceof Error ? error.message : String(error)}`;
    return noPicture(null, missing);
  }
}
