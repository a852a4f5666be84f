import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
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
  /** Whether the folder is the workbench's (every kernel in it saved with its source), not the caller's CUPY_CACHE_DIR. */
  private: boolean;
  env: Record<string, string>;
}

/** The workbench's CuPy kernel cache is kept under this size, the least recently written files removed first. */
export const MAX_CUPY_CACHE_BYTES = 256 * 2 ** 20;

/** A variable's value when it names an absolute folder; empty or relative ones are unset (as the XDG spec says). */
const absoluteDir = (value: string | undefined): string | null => (value && isAbsolute(value) ? value : null);

/** The workbench's own CuPy kernel cache: GPU_WORKBENCH_CUPY_CACHE_DIR, else beside the compile cache. */
export const workbenchCupyCacheDir = (): string =>
  absoluteDir(process.env['GPU_WORKBENCH_CUPY_CACHE_DIR']) ??
  join(absoluteDir(process.env['XDG_CACHE_HOME']) ?? join(homedir(), '.cache'), 'gpu-workbench', 'cupy-kernels');

/** The names CuPy gives a kernel's files: `<hash>.cubin`, and its saved source `<hash>.cubin.cu`. Nothing else is touched. */
const KERNEL_FILE = /^([0-9a-f]{16,128})\.cubin(\.cu)?$/;

/**
 * CuPy's kernel cache for a program under the tool: the caller's CUPY_CACHE_DIR when its environment sets one
 * (relative to the program's folder, as CuPy reads it), else the workbench's own, where every kernel is compiled with
 * its source saved (CUPY_CACHE_SAVE_CUDA_SOURCE=1) beside its cubin. It is kept between runs, as the user's own cache
 * is: a diagnosis's second sanitizer step, or the next diagnosis, loads the kernel the first one compiled instead of
 * compiling it again (150–250 ms a step for a small RawKernel). Where that folder cannot be used safely (not ours, a
 * link, open to others), the run gets one of its own inside `tempDir`.
 */
export async function cupyKernelCache(programEnv: Readonly<Record<string, string | undefined>>, cwd: string, tempDir: string): Promise<CupyKernelCache> {
  const save = { CUPY_CACHE_SAVE_CUDA_SOURCE: '1' };
  const given = programEnv.CUPY_CACHE_DIR;
  if (given) return { dir: resolve(cwd, given), private: false, env: save };
  const kept = await keptCacheDir(workbenchCupyCacheDir());
  const dir = kept ?? join(tempDir, 'cupy-kernel-cache');
  if (!kept) await mkdir(dir, { mode: 0o700 });
  return { dir, private: true, env: { ...save, CUPY_CACHE_DIR: dir } };
}

/**
 * The folder, made private if missing and tidied (trimmed to its bound, kernels without their source removed); null
 * when it is not this user's own plain folder, which the run then does without.
 */
async function keptCacheDir(dir: string): Promise<string | null> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const info = await lstat(dir);
    const mine = typeof process.getuid !== 'function' || info.uid === process.getuid();
    if (!info.isDirectory() || !mine || (info.mode & 0o077) !== 0) return null;
    await tidyCache(dir, MAX_CUPY_CACHE_BYTES);
    return dir;
  } catch {
    return null;
  }
}

/**
 * Keeps the folder under `maxBytes`, removing the least recently written kernels first, and removes each cubin whose
 * saved source is not beside it (a run killed between CuPy writing the two): CuPy would load it, and its line could
 * never be found in the user's .py. A kernel's files go together. Only CuPy's kernel files are touched (KERNEL_FILE),
 * whatever else the folder holds. Answers how many kernels went.
 */
export async function tidyCache(dir: string, maxBytes: number): Promise<number> {
  const kernels = new Map<string, { paths: string[]; bytes: number; mtimeMs: number; source: boolean }>();
  const names = (await readdir(dir)).flatMap((name) => {
    const m = KERNEL_FILE.exec(name);
    return m ? [{ name, hash: m[1]!, source: m[2] !== undefined }] : [];
  });
  const infos = await Promise.all(names.map((n) => lstat(join(dir, n.name)).catch(() => null)));
  names.forEach(({ name, hash, source }, i) => {
    const info = infos[i];
    if (!info?.isFile()) return;
    const kernel = kernels.get(hash) ?? { paths: [], bytes: 0, mtimeMs: 0, source: false };
    kernel.paths.push(join(dir, name));
    kernel.bytes += info.size;
    kernel.mtimeMs = Math.max(kernel.mtimeMs, info.mtimeMs);
    kernel.source ||= source;
    kernels.set(hash, kernel);
  });
  const remove = (k: { paths: string[] }) => Promise.all(k.paths.map((p) => rm(p, { force: true })));
  const orphans = [...kernels.values()].filter((k) => !k.source);
  await Promise.all(orphans.map(remove));
  const kept = [...kernels.values()].filter((k) => k.source).sort((a, b) => a.mtimeMs - b.mtimeMs);
  let total = kept.reduce((sum, k) => sum + k.bytes, 0);
  let removed = orphans.length;
  for (const k of kept) {
    if (total <= maxBytes) break;
    await remove(k);
    total -= k.bytes;
    removed++;
  }
  return removed;
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
    ? `CuPy's copy of the kernel source ${name} was not in the workbench's kernel cache (${cache.dir}): the kernel's line is shown as CuPy named it, not in your .py. The next run compiles it again with its source (the workbench removes a kernel saved without it).`
    : `CuPy's copy of the kernel source ${name} is not in CUPY_CACHE_DIR (${cache.dir}): CuPy saves it only when it compiles the kernel, and this one was cached already. ` +
      'Unset CUPY_CACHE_DIR (the workbench then gives the run a cache of its own), or remove that kernel from the cache, to see its line in your .py.';
