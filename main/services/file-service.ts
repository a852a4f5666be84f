import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

import { ApiError } from '../../core/api/channels';
import { formatBytes } from '../../core/format';
import { MAX_SOURCE_BYTES } from '../../core/limits';
import { SNIFF_HEAD_BYTES, sniffFileKind, type FileKind } from '../../core/workspace/file-kind';
import { FileRefusedError, openRegularFile, readRegularFile, writeFileAtomic } from './safe-fs';
import { openPaths, type PathPolicy } from './workspace-paths';

const explain = (error: unknown, path: string, verb: string): ApiError => {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new ApiError(`Cannot ${verb} ${path}: it does not exist.`, 'NOT_FOUND');
  if (code === 'EACCES' || code === 'EPERM') return new ApiError(`Cannot ${verb} ${path}: permission denied.`, 'FORBIDDEN');
  if (code === 'EISDIR') return new ApiError(`Cannot ${verb} ${path}: it is a folder.`, 'IS_DIRECTORY');
  return new ApiError(`Cannot ${verb} ${path}: ${(error as Error).message}`, 'IO_ERROR');
};

export async function readTextFile(path: string): Promise<{ path: string; text: string; mtimeMs: number }> {
  const full = resolve(path);
  try {
    const { bytes, mtimeMs } = await readRegularFile(full, MAX_SOURCE_BYTES);
    if (bytes.includes(0)) throw new ApiError(`${full} is a binary file, not CUDA source.`, 'BINARY');
    return { path: full, text: bytes.toString('utf8'), mtimeMs };
  } catch (error) {
    if (error instanceof FileRefusedError)
      throw new ApiError(
        error.code === 'TOO_LARGE' ? `${full} is larger than the ${formatBytes(MAX_SOURCE_BYTES)} the editor opens.` : error.message,
        error.code,
      );
    throw error instanceof ApiError ? error : explain(error, full, 'open');
  }
}

/**
 * What a file is (core/workspace/file-kind.ts), from its first SNIFF_HEAD_BYTES only: a 2 GB result or trace
 * costs one bounded read, and nothing of it is parsed here.
 */
export async function sniffFile(path: string): Promise<{ path: string; kind: FileKind; size: number }> {
  const full = resolve(path);
  try {
    const { handle, size } = await openRegularFile(full);
    try {
      const head = Buffer.alloc(Math.min(SNIFF_HEAD_BYTES, size));
      let length = 0;
      while (length < head.length) {
        const { bytesRead } = await handle.read(head, length, head.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      return { path: full, kind: sniffFileKind(new Uint8Array(head.subarray(0, length)), basename(full)), size };
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof FileRefusedError) throw new ApiError(error.message, error.code);
    throw error instanceof ApiError ? error : explain(error, full, 'open');
  }
}

/**
 * Saves atomically (temporary file, then rename). With `expectedMtimeMs`, refuses to overwrite a file
 * that changed on disk since it was opened, so an edit made elsewhere is never silently lost.
 */
export async function writeTextFile(path: string, text: string, expectedMtimeMs: number | null): Promise<{ path: string; mtimeMs: number }> {
  const full = resolve(path);
  try {
    if (expectedMtimeMs !== null) {
      const current = await stat(full).catch(() => null);
      if (current && Math.abs(current.mtimeMs - expectedMtimeMs) > 1) {
        throw new ApiError(
          `${basename(full)} changed on disk since you opened it. Your edits are kept in the editor; save under another name, or reopen the file to see the other change.`,
          'CONFLICT',
        );
      }
    }
    await writeFileAtomic(full, text);
    return { path: full, mtimeMs: (await stat(full)).mtimeMs };
  } catch (error) {
    throw error instanceof ApiError ? error : explain(error, full, 'save');
  }
}

/** The files a listing offers: what Open… can place (sources, plans, results, reports, snapshots, bundles, traces). */
const OPENABLE = /\.(cu|cuh|h|hh|hpp|c|cc|cpp|inl|ptx|json|xml|txt|log|pickle|pkl|zip)$/i;

/** A folder's sub-folders and the files Open… opens; its parent only where `paths` would list it too. */
export async function listFolder(
  dir: string | null,
  paths: Pick<PathPolicy, 'reaches'> = openPaths,
): Promise<{ dir: string; parent: string | null; entries: { name: string; kind: 'file' | 'dir'; size: number }[] }> {
  const full = resolve(dir ?? homedir());
  try {
    const names = await readdir(full, { withFileTypes: true });
    const entries = await Promise.all(
      names
        .filter((d) => !d.name.startsWith('.') && (d.isDirectory() || OPENABLE.test(d.name)))
        .map(async (d) => ({
          name: d.name,
          kind: d.isDirectory() ? ('dir' as const) : ('file' as const),
          size: d.isDirectory() ? 0 : (await stat(join(full, d.name)).catch(() => ({ size: 0 }))).size,
        })),
    );
    entries.sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'dir' ? -1 : 1));
    const parent = dirname(full) === full || !(await paths.reaches(dirname(full))) ? null : dirname(full);
    return { dir: full, parent, entries };
  } catch (error) {
    throw explain(error, full, 'list');
  }
}
