import { realpath, stat } from 'node:fs/promises';
import { basename, isAbsolute, join, resolve } from 'node:path';

import { libcudaVersionOf, type LibcudaOnPath } from '../../core/diagnose/libcuda-rules';
import { within } from './time-bound';

/** Folders past this many on LD_LIBRARY_PATH are not looked in: a real path has a few, and each costs two stats. */
const MAX_DIRS = 64;
/** How long the folders may take to answer: a hung network mount on the path must not hold the diagnosis. */
export const LIBCUDA_LOOKUP_MS = 2000;

/**
 * Each `libcuda.so.1` in the folders of a program's LD_LIBRARY_PATH, in the order the dynamic loader searches them
 * (before its cache and the system folders): the first is the driver library the program loads. An empty entry is
 * the program's folder, as ld.so reads it; a relative one is taken from there too. A name that resolves to anything
 * but a regular file (a FIFO, a device, a folder) is no library, and a folder that cannot be read is passed over, as
 * the loader does. The stats run off the event loop, and past LIBCUDA_LOOKUP_MS the answer is null: not looked at.
 */
export async function libcudaOnPath(ldLibraryPath: string | undefined, cwd: string, limitMs = LIBCUDA_LOOKUP_MS): Promise<LibcudaOnPath[] | null> {
  if (!ldLibraryPath) return [];
  if (limitMs <= 0) return null; // the diagnosis's budget is spent: not looked at
  const dirs = [...new Set(ldLibraryPath.split(/[:;]/).map((d) => (d === '' ? '.' : d)))].slice(0, MAX_DIRS);
  const lookUp = async (dir: string): Promise<LibcudaOnPath | null> => {
    const path = join(isAbsolute(dir) ? dir : resolve(cwd, dir), 'libcuda.so.1');
    try {
      const resolved = await realpath(path);
      return (await stat(resolved)).isFile() ? { dir, path, resolved, version: libcudaVersionOf(basename(resolved)) } : null;
    } catch {
      return null;
    }
  };
  const found = Promise.all(dirs.map(lookUp)).then((all) => all.filter((f): f is LibcudaOnPath => f !== null));
  return within<LibcudaOnPath[] | null>(found, limitMs, () => null);
}
