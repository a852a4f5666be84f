/**
 * Paths on the host, handled as text (the renderer has no path module): POSIX paths, as the host is
 * Linux; backslashes are read as separators too, so a Windows path still splits into its folders.
 */

const SEPARATOR = /[\\/]+/;

export const isAbsolutePath = (path: string): boolean => path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path);

export function basenameOf(path: string): string {
  const parts = path.split(SEPARATOR).filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

/** The folder a path is in; "/" for a file at the root. */
export function dirnameOf(path: string): string {
  const parts = path.split(SEPARATOR);
  parts.pop();
  const dir = parts.join('/');
  return dir === '' ? '/' : dir;
}

/** `relative` against `folder`, with "." and ".." resolved; an absolute `relative` stands as it is. */
export function joinPath(folder: string, relative: string): string {
  if (isAbsolutePath(relative)) return normalizePath(relative);
  return normalizePath(`${folder}/${relative}`);
}

export function normalizePath(path: string): string {
  const absolute = path.startsWith('/');
  const out: string[] = [];
  for (const part of path.split(SEPARATOR)) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length && out[out.length - 1] !== '..') out.pop();
      else if (!absolute) out.push('..');
      continue;
    }
    out.push(part);
  }
  return `${absolute ? '/' : ''}${out.join('/')}` || (absolute ? '/' : '.');
}

/**
 * Where a path typed into a save box goes: a full path as typed, a name or a relative path inside the
 * folder the box shows. Empty text has nowhere to go.
 */
export function resolveShownPath(folder: string, typed: string): string | null {
  const text = typed.trim();
  if (!text) return null;
  return joinPath(folder, text);
}
