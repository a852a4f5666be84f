import { mkdir } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';

import { cupySourceName, findKernelLine, type PythonSource } from '../../core/sanitizer/cupy-kernel-source';
import type { DeviceLocation, FindingGroup, SourceMapped } from '../../core/sanitizer/findings';
import { userPythonFiles } from '../../core/sanitizer/group';
import { readRegularFile } from '../services/safe-fs';

/** CuPy's saved kernel sources are read up to this size; a larger one is not a RawKernel's. */
export const MAX_KERNEL_SOURCE_BYTES = 1 * 2 ** 20;
/** A Python file is read up to this size. */
export const MAX_PYTHON_FILE_BYTES = 4 * 2 ** 20;
/** Python files read for one run, at most. */
export const MAX_PYTHON_FILES = 32;

/** Where CuPy caches kernels for the program, and the environment that tells it so. */
export interface CupyKernelCache {
  dir: string;
  /** Whether the folder is the run's own (made empty in its temporary folder, removed with it). */
  private: boolean;
  env: Record<string, string>;
}

/**
 * CuPy's kernel cache for a program under the tool: the caller's CUPY_CACHE_DIR when its environment sets one
 * (relative to the program's folder, as CuPy reads it), else a folder of the run's own inside `tempDir`, so every
 * kernel is compiled in this run and its source saved (CUPY_CACHE_SAVE_CUDA_SOURCE=1) beside its cubin.
 */
export async function cupyKernelCache(programEnv: Readonly<Record<string, string | undefined>>, cwd: string, tempDir: string): Promise<CupyKernelCache> {
  const save = { CUPY_CACHE_SAVE_CUDA_SOURCE: '1' };
  const given = programEnv.CUPY_CACHE_DIR;
  if (given) return { dir: resolve(cwd, given), private: false, env: save };
  const dir = join(tempDir, 'cupy-kernel-cache');
  await mkdir(dir, { mode: 0o700 });
  return { dir, private: true, env: { ...save, CUPY_CACHE_DIR: dir } };
}

/** The program's script: the first argument that names a .py file (`python3 -u train.py …`). */
export const scriptOf = (command: readonly string[], cwd: string): string | null => {
  const script = command.find((a) => a.endsWith('.py') && !a.startsWith('-'));
  return script ? resolve(cwd, script) : null;
};

/** Reads each file once, bounded, regular files only; a file that cannot be read is null. */
function boundedReader(maxBytes: number, maxFiles: number) {
  const texts = new Map<string, Promise<string | null>>();
  return (path: string): Promise<string | null> => {
    let text = texts.get(path);
    if (text === undefined) {
      text =
        texts.size >= maxFiles
          ? Promise.resolve(null)
          : readRegularFile(path, maxBytes).then(
              (r) => r.bytes.toString('utf8'),
              () => null,
            );
      texts.set(path, text);
    }
    return text;
  };
}

export interface CupyPlacing {
  cache: Pick<CupyKernelCache, 'dir' | 'private'>;
  command: readonly string[];
  cwd: string;
}

/**
 * Each group whose kernel line is in CuPy's copy of a source (`<sha>.cubin.cu`) gets that line's place in the user's
 * Python file (`sourceMapped`, and `raceSourceMapped` for both sides of a race); the tool's own `where` is kept.
 * Returns the groups, and a sentence for each saved source that could not be read.
 */
export async function placeCupyKernels(groups: readonly FindingGroup[], placing: CupyPlacing): Promise<{ groups: FindingGroup[]; problems: string[] }> {
  if (!groups.some(namesCupySource)) return { groups: [...groups], problems: [] };
  const readSource = boundedReader(MAX_KERNEL_SOURCE_BYTES, Infinity);
  const readPython = boundedReader(MAX_PYTHON_FILE_BYTES, MAX_PYTHON_FILES);
  const script = scriptOf(placing.command, placing.cwd);
  const missing = new Set<string>();

  const place = async (w: DeviceLocation | null | undefined, files: readonly string[]): Promise<SourceMapped | null> => {
    const name = cupySourceName(w?.path ?? null);
    if (!w || name === null || w.line === null) return null;
    const source = await readSource(join(placing.cache.dir, name));
    if (source === null) {
      missing.add(name);
      return null;
    }
    const python: PythonSource[] = [];
    for (const path of files) {
      const text = await readPython(path);
      if (text !== null) python.push({ path, text });
    }
    const found = findKernelLine(source, w.line, python);
    return found && { file: found.file, line: found.line, cachePath: w.path!, cacheLine: w.line, how: found.how };
  };

  const out: FindingGroup[] = [];
  for (const g of groups) {
    const files = [...new Set([...userPythonFiles(g.example).map((f) => (isAbsolute(f) ? f : resolve(placing.cwd, f))), ...(script ? [script] : [])])];
    const race = g.kind === 'race' ? g.example.race : null;
    const sourceMapped = await place(g.where, files);
    const raceSourceMapped = race ? { first: await place(race.first.where, files), second: await place(race.second.where, files) } : null;
    out.push(sourceMapped || raceSourceMapped?.first || raceSourceMapped?.second ? { ...g, sourceMapped, raceSourceMapped } : g);
  }
  return { groups: out, problems: [...missing].map((name) => missingSource(name, placing.cache)) };
}

const namesCupySource = (g: FindingGroup): boolean =>
  [g.where, g.example.race?.first.where, g.example.race?.second.where].some((w) => cupySourceName(w?.path ?? null) !== null);

const missingSource = (name: string, cache: Pick<CupyKernelCache, 'dir' | 'private'>): string =>
  cache.private
    ? `CuPy's copy of the kernel source ${name} was not in the run's kernel cache (${cache.dir}): the kernel's line is shown as CuPy named it, not in your .py.`
    : `CuPy's copy of the kernel source ${name} is not in CUPY_CACHE_DIR (${cache.dir}): CuPy saves it only when it compiles the kernel, and this one was cached already. ` +
      'Unset CUPY_CACHE_DIR (the workbench then gives the run a cache of its own), or remove that kernel from the cache, to see its line in your .py.';
