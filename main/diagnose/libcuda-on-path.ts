import { realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';

import { libcudaVersionOf, type LibcudaOnPath } from '../../core/diagnose/libcuda-rules';

/** Folders past this many on LD_LIBRARY_PATH are not looked in: a real path has a few, and each costs two stats. */
const MAX_DIRS = 64;

/**
 * Each `libcuda.so.1` in the folders of a program's LD_LIBRARY_PATH, in the order the dynamic loader searches them
 * (before its cache and the system folders): the first is the driver library the program loads. An empty entry is
 * the program's folder, as ld.so reads it; a relative one is taken from there too. A name that resolves to anything
 * but a regular file (a FIFO, a device, a folder) is no library, and a folder that cannot be read is passed over, as
 * the loader does.
 */
export function libcudaOnPath(ldLibraryPath: string | undefined, cwd: string): LibcudaOnPath[] {
  if (!ldLibraryPath) return [];
  const dirs = [...new Set(ldLibraryPath.split(/[:;]/).map((d) => (d === '' ? '.' : d)))].slice(0, MAX_DIRS);
  return dirs.flatMap((dir) => {
    const path = join(isAbsolute(dir) ? dir : resolve(cwd, dir), 'libcuda.so.1');
    try {
      const resolved = realpathSync(path);
      if (!statSync(resolved).isFile()) return [];
      return [{ dir, path, resolved, version: libcudaVersionOf(basename(resolved)) }];
    } catch {
      return [];
    }
  });
}
