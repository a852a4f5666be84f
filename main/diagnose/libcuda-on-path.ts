import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';

import type { LibcudaOnPath } from '../../core/diagnose/libcuda-rules';
import { libcudaRelease } from '../../core/doctor/driver-rules';
import { within } from './time-bound';

/** Folders past this many on LD_LIBRARY_PATH are not looked in: a real path has a few, and each costs two stats. */
const MAX_DIRS = 64;
/** How long the folders may take to answer: a hung network mount on the path must not hold the diagnosis. */
export const LIBCUDA_LOOKUP_MS = 2000;

type Identity = { dev: number; ino: number } | null;

const identity = async (path: string | null): Promise<Identity> => {
  if (!path) return null;
  try {
    const s = await stat(path);
    return { dev: s.dev, ino: s.ino };
  } catch {
    return null;
  }
};

/**
 * Each `libcuda.so.1` in the folders of a program's LD_LIBRARY_PATH, in the order the dynamic loader searches them
 * (before its cache and the system folders): the first is the driver library the program loads. An empty entry is the
 * working folder, as ld.so reads it, and a relative one is taken from there too. A name that resolves to anything but
 * a regular file (a FIFO, a device, a folder) is no library, a folder that cannot be read is passed over, as the
 * loader does, and a file already found through an earlier entry is not listed again. `driverLibcuda` is the file the
 * workbench loaded as the driver's libcuda: the same file on the path is the driver's own.
 *
 * The folders are looked in one at a time, off the event loop, within `limitMs` in all: a folder on a hung network
 * mount blocks one of the thread pool's four threads, never all of them, and the answer is then null (not looked at).
 */
export async function libcudaOnPath(
  ldLibraryPath: string | undefined,
  cwd: string,
  driverLibcuda: string | null,
  limitMs = LIBCUDA_LOOKUP_MS,
): Promise<LibcudaOnPath[] | null> {
  if (!ldLibraryPath) return [];
  const until = performance.now() + limitMs;
  const dirs = [...new Set(ldLibraryPath.split(/[:;]/))].slice(0, MAX_DIRS);
  const late = Symbol('late');
  const inTime = <T>(work: Promise<T>): Promise<T | typeof late> => within<T | typeof late>(work, until - performance.now(), () => late);
  const driver = await inTime(identity(driverLibcuda));
  if (driver === late) return null;
  const found: (LibcudaOnPath & { id: Identity })[] = [];
  for (const dir of dirs) {
    if (until - performance.now() <= 0) return null;
    const path = join(isAbsolute(dir) ? dir : resolve(cwd, dir), 'libcuda.so.1');
    const entry = await inTime(lookUp(dir, path));
    if (entry === late) return null;
    if (!entry || found.some((f) => f.resolved === entry.resolved || (f.id && entry.id && f.id.dev === entry.id.dev && f.id.ino === entry.id.ino))) continue;
    found.push({ ...entry, driversOwn: !!driver && !!entry.id && driver.dev === entry.id.dev && driver.ino === entry.id.ino });
  }
  return found.map(({ id: _id, ...f }) => f);
}

async function lookUp(dir: string, path: string): Promise<(Omit<LibcudaOnPath, 'driversOwn'> & { id: Identity }) | null> {
  try {
    const resolved = await realpath(path);
    const s = await stat(resolved);
    if (!s.isFile()) return null;
    return { dir, path, resolved, version: libcudaRelease(resolved), id: { dev: s.dev, ino: s.ino } };
  } catch {
    return null;
  }
}
