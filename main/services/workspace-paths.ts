import { realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

import { ApiError } from '../../core/api/channels';
import { fullPathToWrite } from './write-path';

/**
 * Which files a host's requests may name. The desktop app and the CLI act for the person at the machine and
 * reach whatever they can (`openPaths`); `serve` answers whoever holds its token, so its requests reach only
 * its workspace (`workspacePaths`). Handlers and services ask this object, and nothing else, about a path.
 */
export interface PathPolicy {
  /** The folders requests are confined to, as started; null where they are not confined. */
  readonly roots: readonly string[] | null;
  /** Where a file box starts and what a relative name typed in the UI is joined to. */
  readonly startDir: string;
  /** What a relative path is resolved against: serve's cwd; the desktop app's working folder. */
  readonly workDir: string;
  /** A file to read: the full path to read it by, or an ApiError that says why not. */
  read(path: string): Promise<string>;
  /** A file to write (created or replaced): the full path to write, or an ApiError that says why not. */
  write(path: string): Promise<string>;
  /** A folder to list, search for #include or run a program in; null: startDir. */
  folder(path: string | null): Promise<string | null>;
  /** Whether `path` could be read: a listing does not offer a parent it could not list. */
  reaches(path: string): Promise<boolean>;
}

/** Every path the user can reach (the desktop app, the CLI); a write still names its full path. */
export const openPaths: PathPolicy = {
  roots: null,
  startDir: homedir(),
  get workDir() {
    return process.cwd();
  },
  read: async (path) => path,
  write: async (path) => fullPathToWrite(path),
  folder: async (path) => path,
  reaches: async () => true,
};

export interface WorkspaceOptions {
  /** The folder serve was started in: a root, and what relative paths are resolved against. */
  cwd: string;
  /** The folders given with --root. */
  roots: readonly string[];
  /** Folders never written, even inside a root: the workbench's own program files. */
  protectedDirs: readonly string[];
  /** Folders the app itself fills and the UI opens, read-only wherever they are: the samples, kept snapshots. */
  appDirs: readonly string[];
  home?: string;
}

type Zone = { dir: string; kind: 'root' | 'app' };

const within = (path: string, dir: string): boolean => {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

/** The first name below `dir` on the way to `path` that starts with a dot, or null. */
const hiddenBelow = (path: string, dir: string): string | null =>
  relative(dir, path)
    .split(sep)
    .find((name) => name.startsWith('.')) ?? null;

/** A shared library is code as much as a program is, whatever its mode. */
const LIBRARY_NAME = /\.(so(\.\d+)*|node)$/;

/**
 * The path with every link resolved: the real path of its longest existing part, then the rest as named. For a
 * file not yet there, that is its folder's real path; a link out of a root is seen for where it leads.
 */
async function realLocation(full: string): Promise<string> {
  const rest: string[] = [];
  let head = full;
  for (;;) {
    const real = await realpath(head).catch(() => null);
    if (real !== null) return join(real, ...rest);
    const parent = dirname(head);
    if (parent === head) return full;
    rest.unshift(basename(head));
    head = parent;
  }
}

const realDir = async (dir: string): Promise<string> => realLocation(resolve(dir));

/**
 * A serve host's workspace: files are read and written under its roots (the folder it was started in and each
 * --root), and read in the app's own folders. Never reached: a hidden file or folder (a name starting with a dot)
 * below a root or below the home folder, such as ~/.bashrc, ~/.ssh or ~/.config/autostart. Never written: a
 * program or library (a file with an execute bit, a .so or .node), or anything in the workbench's own files.
 */
export async function workspacePaths(options: WorkspaceOptions): Promise<PathPolicy> {
  const cwd = resolve(options.cwd);
  const roots = [...new Set([cwd, ...options.roots.map((r) => resolve(cwd, r))])];
  const zones: Zone[] = [
    ...(await Promise.all(roots.map(async (dir) => ({ dir: await realDir(dir), kind: 'root' as const })))),
    ...(await Promise.all(options.appDirs.map(async (dir) => ({ dir: await realDir(dir), kind: 'app' as const })))),
  ];
  const protectedDirs = await Promise.all(options.protectedDirs.map(realDir));
  const home = await realDir(options.home ?? homedir());

  const outside = (full: string) =>
    new ApiError(
      `${full} is outside this workbench's folders. A browser reaches only files under ${roots.join(', ')}. To reach another folder, start serve again with --root <folder> (repeatable).`,
      'OUTSIDE_ROOTS',
    );
  const hiddenIn = (real: string, zone: Zone): string | null =>
    hiddenBelow(real, zone.dir) ?? (zone.kind === 'root' && within(real, home) ? hiddenBelow(real, home) : null);
  const hidden = (full: string, name: string) =>
    new ApiError(
      `${full} is hidden (${name}): serve never reads or writes hidden files or folders (names starting with a dot, such as ~/.bashrc or ~/.ssh). Open it in a terminal on the machine instead.`,
      'HIDDEN_PATH',
    );

  /** Why `real` may not be reached through a zone of these kinds; null when one lets it. */
  const unreachable = (full: string, real: string, kinds: Zone['kind'][]): ApiError | null => {
    const holding = zones.filter((z) => kinds.includes(z.kind) && within(real, z.dir));
    if (holding.length === 0) return outside(full);
    return holding.some((z) => hiddenIn(real, z) === null) ? null : hidden(full, hiddenIn(real, holding[0]!)!);
  };
  const ownFiles = (full: string) =>
    new ApiError(`${full} is one of the workbench's own files: serve opens them but never writes them. Save under another name.`, 'READ_ONLY');

  /** Why a write to `real` is refused, in order: out of the roots, hidden, the workbench's own, a program; null when it may go. */
  const writeRefusal = async (full: string, real: string): Promise<ApiError | null> => {
    const refused = unreachable(full, real, ['root']);
    if (refused) return refused.code === 'OUTSIDE_ROOTS' && unreachable(full, real, ['app']) === null ? ownFiles(full) : refused;
    if (protectedDirs.some((dir) => within(real, dir))) return ownFiles(full);
    const existing = await stat(real).catch(() => null);
    const why = LIBRARY_NAME.test(basename(real)) ? 'by its name' : existing?.isFile() && (existing.mode & 0o111) !== 0 ? 'it has an execute bit' : null;
    return why
      ? new ApiError(
          `${full} is a program or a library (${why}): serve never writes one, so a browser cannot change what runs. Save under another name.`,
          'EXECUTABLE',
        )
      : null;
  };

  /** The full path (relative ones from cwd) once `refusal` of its real location says nothing. */
  const checked = async (path: string, refusal: (full: string, real: string) => ApiError | null | Promise<ApiError | null>): Promise<string> => {
    const full = resolve(cwd, path);
    const refused = await refusal(full, await realLocation(full));
    if (refused) throw refused;
    return full;
  };
  const read = (path: string) => checked(path, (full, real) => unreachable(full, real, ['root', 'app']));
  const startDir = await read(home).then(
    () => home,
    () => cwd,
  );
  return {
    roots,
    startDir,
    workDir: cwd,
    read,
    write: (path) => checked(path, writeRefusal),
    folder: async (path) => (path === null ? startDir : read(path)),
    reaches: (path) =>
      read(path).then(
        () => true,
        () => false,
      ),
  };
}
