import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, readlink, realpath, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

import { processRuns } from '../process/process-state';

/** Why a file was not read: not a regular file, or larger than the caller's bound. */
export class FileRefusedError extends Error {
  constructor(
    message: string,
    readonly code: 'NOT_A_FILE' | 'TOO_LARGE',
  ) {
    super(message);
  }
}

/**
 * Reads a regular file of at most `maxBytes`. Opened non-blocking, so a FIFO or a device answers at
 * once instead of hanging the host, and checked on the open handle, so what is read is what was
 * checked; the read stops at the bound even if the file grows meanwhile.
 */
export async function readRegularFile(path: string, maxBytes: number): Promise<{ bytes: Buffer; mtimeMs: number }> {
  const { handle, size, mtimeMs } = await openRegularFile(path, maxBytes);
  try {
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, size + 1));
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) throw new FileRefusedError(`${path} grew past the limit of ${maxBytes} bytes while it was read.`, 'TOO_LARGE');
    return { bytes: buffer.subarray(0, length), mtimeMs };
  } finally {
    await handle.close();
  }
}

/**
 * Opens a regular file for reading: non-blocking, so a FIFO or a device answers at once instead of holding
 * one of the host's I/O threads, and checked on the open handle, so what is read is what was checked. With
 * `maxBytes`, a larger file is refused; the caller reads and closes the handle.
 */
export async function openRegularFile(path: string, maxBytes = Infinity): Promise<{ handle: FileHandle; size: number; mtimeMs: number }> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw Object.assign(new Error(`${path} is a folder`), { code: 'EISDIR' });
    if (!info.isFile()) throw new FileRefusedError(`${path} is not a regular file (a device, a pipe or a socket): only files on disk are read.`, 'NOT_A_FILE');
    if (info.size > maxBytes) throw new FileRefusedError(`${path} is ${info.size} bytes, over the limit of ${maxBytes}.`, 'TOO_LARGE');
    return { handle, size: info.size, mtimeMs: info.mtimeMs };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * A regular file's text in chunks (UTF-8 split only between characters), its first `maxBytes` — or, with
 * `fromEnd`, its last. Returns the file's size and the bytes read, so a caller can say what it left out.
 */
export async function streamRegularFile(
  path: string,
  maxBytes: number,
  onText: (text: string) => void,
  options: { fromEnd?: boolean; chunkBytes?: number } = {},
): Promise<{ size: number; read: number }> {
  const { handle, size } = await openRegularFile(path);
  try {
    const length = Math.min(size, maxBytes);
    const start = options.fromEnd ? size - length : 0;
    const decoder = new StringDecoder('utf8');
    const buffer = Buffer.alloc(Math.min(length, options.chunkBytes ?? 2 ** 20) || 1);
    let read = 0;
    while (read < length) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, length - read), start + read);
      if (bytesRead === 0) break;
      read += bytesRead;
      onText(decoder.write(buffer.subarray(0, bytesRead)));
    }
    const rest = decoder.end();
    if (rest) onText(rest);
    return { size, read };
  } finally {
    await handle.close();
  }
}

const TEMP_SUFFIX = /\.(\d+)\.[0-9a-f]{12}\.tmp$/;

/** Temporary files a killed save left beside `target` (their writer's process is gone): removed. */
export async function removeStaleTemps(dir: string, prefix = '.'): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = TEMP_SUFFIX.exec(name);
    if (!m || !name.startsWith(prefix) || processRuns(Number(m[1]))) continue;
    await unlink(join(dir, name)).then(
      () => removed++,
      () => undefined,
    );
  }
  return removed;
}

/**
 * Writes atomically: a temporary file with a name of its own (two saves of one path never share one),
 * flushed, then renamed over the target. A symlink is written through to its target and stays a link (a
 * dangling one gets its target made); the target keeps its permissions (unless `forceMode`), and its owner
 * when root saves another user's file; a new file gets `mode`.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: { mode?: number; forceMode?: boolean } = {}): Promise<void> {
  await writeStreamAtomic(path, (handle) => handle.writeFile(data), options);
}

/**
 * writeFileAtomic for what is written in pieces (a zip, a trace): `write` fills the temporary file through
 * its handle. A failure at any point, `write`'s own included, removes the temporary file, so the path holds
 * the old file or the whole new one, never a part.
 *
 * A file with other hard links is written in place once the temporary file is whole: a rename would leave the
 * other names on the old text.
 */
export async function writeStreamAtomic(
  path: string,
  write: (handle: FileHandle) => Promise<void>,
  options: { mode?: number; forceMode?: boolean } = {},
): Promise<{ path: string }> {
  const target = await writeTarget(path);
  const existing = await stat(target).catch(() => null);
  if (existing && !existing.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: existing.isDirectory() ? 'EISDIR' : 'EINVAL' });
  const dir = dirname(target);
  await removeStaleTemps(dir, `.${basename(target)}.`);
  const tmp = join(dir, `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fileMode = existing && !options.forceMode ? existing.mode & 0o7777 : (options.mode ?? 0o644);
  const handle = await open(tmp, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, fileMode);
  try {
    await write(handle);
    if (existing && process.getuid?.() === 0) await handle.chown(existing.uid, existing.gid); // before chmod: chown clears set-id bits
    await handle.chmod(fileMode); // the umask narrowed the mode given to open
    await handle.sync();
    if (existing && existing.nlink > 1) await copyInPlace(handle, target, existing, options.forceMode ? fileMode : null);
  } catch (error) {
    await handle.close();
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    if (existing && existing.nlink > 1) await unlink(tmp);
    else await rename(tmp, target);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
  return { path: target };
}

/**
 * The file a save of `path` writes: the end of its chain of links, even when that end does not exist yet
 * (the save makes it, as a write through the link would), in its folder's real path.
 */
async function writeTarget(path: string): Promise<string> {
  const real = await realpath(path).catch(() => null);
  if (real) return real;
  let end = path;
  for (let hops = 0; ; hops++) {
    const info = await lstat(end).catch(() => null);
    if (!info?.isSymbolicLink()) break;
    if (hops === 40) throw Object.assign(new Error(`${path} is a link that leads round in a loop of links, to no file to save into.`), { code: 'ELOOP' });
    end = resolve(dirname(end), await readlink(end));
  }
  const folder = await realpath(dirname(end)).catch(() => dirname(end));
  return join(folder, basename(end));
}

/**
 * The whole temporary file copied over `target`'s own bytes, then cut to length and flushed: the file keeps its
 * inode, so all its names, its owner and its mode (unless `mode`). Only the copy can fail half-way, not the writer.
 */
async function copyInPlace(from: FileHandle, target: string, expected: Stats, mode: number | null): Promise<void> {
  const to = await open(target, constants.O_WRONLY | constants.O_NONBLOCK);
  try {
    const info = await to.stat();
    if (info.ino !== expected.ino || info.dev !== expected.dev) throw new Error(`${target} was replaced while it was being saved; nothing was written to it.`);
    const buffer = Buffer.alloc(2 ** 20);
    let position = 0;
    for (;;) {
      const { bytesRead } = await from.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) break;
      let written = 0;
      while (written < bytesRead) written += (await to.write(buffer, written, bytesRead - written, position + written)).bytesWritten;
      position += bytesRead;
    }
    await to.truncate(position);
    if (mode !== null) await to.chmod(mode);
    await to.sync();
  } finally {
    await to.close();
  }
}

/** A folder only its owner can enter (0700), made if missing and narrowed if it was wider. */
export async function privateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
}
