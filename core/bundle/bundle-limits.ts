/** What a bundle may hold, at most, before it is refused unread: sane for any real run, small for a bomb. */
export interface BundleLimits {
  fileBytes: number;
  entries: number;
  entryBytes: number;
  totalBytes: number;
  /** Uncompressed to compressed size, per entry, past which an entry is a zip bomb. */
  ratio: number;
}

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = {
  fileBytes: 2 * 1024 ** 3,
  entries: 10_000,
  entryBytes: 512 * 1024 ** 2,
  totalBytes: 1024 ** 3,
  ratio: 200,
};

/** The newest manifest schema this version reads. */
export const BUNDLE_SCHEMA = 1;

/**
 * Why an entry name is refused, or null when it is fine: relative, forward slashes, no `..`, no empty or
 * dot segments, printable, not too long. (yauzl checks absolute paths and `..` too; this is the same rule
 * for every name, stated once.)
 */
export function entryNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > 1024) return 'is empty or longer than 1,024 characters';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'is an absolute path';
  if (name.includes('\\')) return 'holds a backslash';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'holds a control character';
  const segments = name.replace(/\/$/, '').split('/');
  if (segments.some((s) => s === '..')) return 'climbs out of the bundle with ..';
  if (segments.some((s) => s === '' || s === '.')) return 'has an empty or "." segment';
  if (segments.some((s) => s.length > 255)) return 'has a segment longer than 255 characters';
  return null;
}
