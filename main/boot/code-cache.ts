import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/**
 * Loads one of the workbench's bundles (the CLI, serve, the runner, the compile worker) with V8's code cache,
 * as Node 22's module.enableCompileCache() does (Node 20 has none): the first start compiles and saves what V8
 * compiled; later starts read it instead of parsing megabytes again. On an H100 host, loading the CLI bundle
 * cost 135 ms over Node's own start, on every sanitizer run and every runner start (a spare after a fault).
 *
 * The cache is V8's own format; V8 checks it against the source, its version and its flags and rejects a
 * mismatch, and then the bundle is compiled as usual and the cache written again. Nothing here can change
 * what runs: a missing, stale or unreadable cache only costs the time it would have saved.
 */
export function runWithCodeCache(file: string, mod: NodeModule, variant?: string): void {
  const source = readFileSync(file, 'utf8');
  const cacheFile = cachePathFor(file, variant);
  let cachedData: Buffer | undefined;
  if (cacheFile) cachedData = readCache(cacheFile);
  const script = new Script(Module.wrap(source), { filename: file, cachedData });
  if (cacheFile && (!cachedData || script.cachedDataRejected)) saveLater(script, cacheFile);
  else if (cacheFile) markUsed(cacheFile);
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: NodeModule, filename: string, dirname: string) => void;
  mod.filename = file;
  wrapper.call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
}

/** A cache larger than this is not V8's for our bundles: left unread. */
const MAX_CACHE_BYTES = 64 * 2 ** 20;

/** The cached data, read only from a regular file of a sane size: a FIFO or a device there must not stall start-up. */
function readCache(cacheFile: string): Buffer | undefined {
  try {
    const info = statSync(cacheFile);
    return info.isFile() && info.size <= MAX_CACHE_BYTES ? readFileSync(cacheFile) : undefined;
  } catch {
    return undefined;
  }
}

/** Cache files kept at most; the oldest go first (each build of a bundle has its own, and each CLI command its own). */
const MAX_CACHE_FILES = 48;

/**
 * What a start of this bundle runs, when that decides what V8 compiles: the CLI's command. The CLI initialises only the
 * command it runs (main/cli/cli.ts), and a cache holds only what its first start compiled, so one cache for every
 * command would leave `diagnose` compiling its code at every start after a first `devices`. Only a command's shape of
 * name counts; anything else (help, a mistake) shares one cache.
 */
export const commandVariant = (argv: string[]): string => (/^[a-z][a-z-]{0,31}$/.test(argv[2] ?? '') ? argv[2]! : '');

/** The cache file for this bundle as built now, under this Node; null when caching is off or has no home. */
function cachePathFor(file: string, variant = ''): string | null {
  if (process.env['GPU_WORKBENCH_NO_CODE_CACHE']) return null;
  try {
    const { size, mtimeMs } = statSync(file);
    const base = process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
    const key = createHash('sha256').update(`${file}\0${size}\0${mtimeMs}\0${process.version}\0${process.arch}\0${variant}`).digest('hex').slice(0, 32);
    return join(base, 'gpu-workbench', 'code-cache', `${key}.bin`);
  } catch {
    return null;
  }
}

/**
 * Saves what V8 compiled once the bundle has run a while (it then holds the functions that start-up ran, too): a
 * second after loading, for a process that may never exit by itself, and again at exit, when it holds every function
 * the whole command ran. A cache made at the first second alone left the CLI compiling, at every later start, all
 * that a command runs after its first second (a diagnosis's later steps, its report). Only a process younger than
 * EXIT_SAVE_MAX_S writes at exit, and only what is larger than its first write: V8 drops the compiled code of
 * functions unused for a while, so a server's exit after hours would hold less than its first second did.
 */
function saveLater(script: Script, cacheFile: string): void {
  let savedBytes = 0;
  const save = (data: Buffer) => {
    try {
      const dir = dirname(cacheFile);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const temp = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(temp, data, { mode: 0o600 });
      renameSync(temp, cacheFile);
      savedBytes = data.byteLength;
      prune(dir);
    } catch {
      // a cache that cannot be written is only a slower next start
    }
  };
  const early = setTimeout(() => save(script.createCachedData()), 1000).unref();
  process.once('exit', () => {
    clearTimeout(early);
    if (process.uptime() > EXIT_SAVE_MAX_S) return;
    const data = script.createCachedData();
    if (data.byteLength > savedBytes) save(data);
  });
}

/**
 * A cache read is a cache used: its time moves to now, so the pruning (the oldest go first) keeps what runs and drops
 * what no longer does. By write time alone, the diagnose command's cache went as soon as 48 others had been written
 * after it (a test run writes many), and its next start compiled again (28 ms).
 */
function markUsed(cacheFile: string): void {
  try {
    const now = new Date();
    utimesSync(cacheFile, now, now);
  } catch {
    // a cache whose time cannot be moved is only pruned sooner
  }
}

/** A process older than this at its exit keeps the cache of its first second (see saveLater). */
const EXIT_SAVE_MAX_S = 600;

function prune(dir: string): void {
  const files = readdirSync(dir)
    .filter((n) => n.endsWith('.bin') || n.endsWith('.tmp'))
    .map((n) => {
      try {
        return { path: join(dir, n), at: statSync(join(dir, n)).mtimeMs };
      } catch {
        return null;
      }
    })
    .filter((f): f is { path: string; at: number } => f !== null)
    .sort((a, b) => b.at - a.at);
  for (const f of files.slice(MAX_CACHE_FILES)) {
    try {
      unlinkSync(f.path);
    } catch {
      // gone already
    }
  }
}
