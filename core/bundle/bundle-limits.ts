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

/**
 * The newest manifest schema this version reads (and the one it writes). 1: plan, result, sources, environment,
 * doctor, devices, sanitizer report, repro/. 2 adds compile.json (options, commands, logs, diagnostics), ptx/,
 * validation.json (the validator's findings), samples.json (NVML samples) and sanitizer/ (the tool's own output).
 * 3 adds diagnosis.json (a program's diagnosis) and diagnosis/oom-snapshot.pickle (its allocator history).
 */
export const BUNDLE_SCHEMA = 3;

/** The sanitizer's own output a bundle keeps, at most (each of the text and every XML): the start and the end of it. */
export const MAX_RAW_SANITIZER_BYTES = 4 * 1024 ** 2;

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
