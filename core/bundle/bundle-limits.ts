import type { JsonLimits } from '../json-limits';
import { MAX_RESULT_FILE_BYTES, MAX_SOURCE_BYTES } from '../limits';

const KiB = 1024;
const MiB = 1024 ** 2;

/** The roles of a bundle's JSON entries (the manifest's contents by name, and the manifest itself). */
export type JsonRole =
  'manifest' | 'plan' | 'result' | 'environment' | 'doctor' | 'devices' | 'sanitizer' | 'compile' | 'validation' | 'samples' | 'diagnosis' | 'profile';
/** The roles of its other entries; `unnamed`: an entry the manifest does not name (nothing reads it). */
export type FileRole = 'sources' | 'repro' | 'ptx' | 'sanitizerRaw' | 'diagnosisSnapshot' | 'unnamed';
export type BundleRole = JsonRole | FileRole;

/** What a bundle may hold, at most, before it is refused unread: sane for any real run, small for a bomb. */
export interface BundleLimits {
  fileBytes: number;
  entries: number;
  /** The most one entry may hold, whatever its role (the largest role's limit). */
  entryBytes: number;
  /** All entries together, as declared and as inflated. */
  totalBytes: number;
  /** Uncompressed to compressed size, per entry, past which an entry is a zip bomb. */
  ratio: number;
  /** Each JSON entry by its role: checked before it is inflated (its size) and before it is parsed (its shape). */
  json: Record<JsonRole, JsonLimits>;
  /** The most an entry of each other role may hold. */
  files: Record<FileRole, number>;
}

/** Each role in words, for the messages: "over the limit of 262144 for a bundle manifest". */
export const BUNDLE_ROLE_NAMES: Record<BundleRole, string> = {
  manifest: 'a bundle manifest',
  plan: 'a launch plan',
  result: 'a run result',
  environment: 'an environment record',
  doctor: 'a doctor report',
  devices: 'device profiles',
  sanitizer: 'a sanitizer report',
  compile: 'a compile record',
  validation: 'validator findings',
  samples: 'NVML samples',
  diagnosis: 'a diagnosis report',
  profile: 'a kernel profile',
  sources: 'a kernel source',
  repro: 'a repro/ file',
  ptx: 'PTX',
  sanitizerRaw: 'the sanitizer’s own output',
  diagnosisSnapshot: 'an allocator history snapshot',
  unnamed: 'an entry the manifest does not name',
};

const json = (role: JsonRole, bytes: number, items: number, stringBytes: number, depth = 32): JsonLimits => ({
  role: BUNDLE_ROLE_NAMES[role],
  bytes,
  items,
  stringBytes,
  depth,
});

/**
 * Real bundles (test/fixtures/bundles, recorded on H100s) hold about 70 KB: the largest JSON entry is a 25 KB result
 * of 1,300 values, nested 8 deep at most (a diagnosis, 13). The limits are each role's own file limit where it has one
 * (a plan, a result, a diagnosis opened alone), else a few times what the role holds at every cap of what writes it:
 * a result with the full event log (100,000 events and GPU times) is about 1.6 million values, a samples.json with
 * all 200,000 samples of one GPU 1.8 million. A JSON text takes a heap several times its size to parse, so the
 * values are counted, not only the bytes: 64 MiB of `[]` is 22 million arrays.
 */
export const BUNDLE_JSON_LIMITS: Record<JsonRole, JsonLimits> = {
  // The schema names at most 605 entries; a real manifest is 900 bytes of 50 values.
  manifest: json('manifest', 256 * KiB, 4096, 8 * KiB, 16),
  plan: json('plan', MAX_SOURCE_BYTES, 1_000_000, MAX_SOURCE_BYTES),
  result: json('result', MAX_RESULT_FILE_BYTES, 4_000_000, 16 * MiB),
  samples: json('samples', MAX_RESULT_FILE_BYTES, 4_000_000, 64 * KiB, 16),
  sanitizer: json('sanitizer', 64 * MiB, 2_000_000, 32 * MiB),
  // As `gpu-workbench diagnose --json`'s file is opened alone (main/diagnose/diagnose-files.ts); a run's output in it is at most 16 MiB.
  diagnosis: json('diagnosis', 32 * MiB, 2_000_000, 16 * MiB),
  // A profile of a kernel with 100,000 source lines (the schema's cap), about 30 values each.
  profile: json('profile', 32 * MiB, 4_000_000, 1 * MiB),
  compile: json('compile', 16 * MiB, 1_000_000, 16 * MiB),
  validation: json('validation', 16 * MiB, 1_000_000, 1 * MiB),
  devices: json('devices', 4 * MiB, 250_000, 64 * KiB),
  doctor: json('doctor', 4 * MiB, 250_000, 1 * MiB),
  environment: json('environment', 4 * MiB, 10_000, 1 * MiB, 8),
};

export const BUNDLE_FILE_LIMITS: Record<FileRole, number> = {
  sources: MAX_SOURCE_BYTES,
  // repro.cu carries the plan's sources and initialisers.
  repro: 64 * MiB,
  ptx: 64 * MiB,
  // MAX_RAW_SANITIZER_BYTES characters, 3 bytes each at most in UTF-8, and the line saying what was left out.
  sanitizerRaw: 16 * MiB,
  // A PyTorch allocator history; the exporter leaves a larger one out (main/bundle/diagnosis-bundle.ts).
  diagnosisSnapshot: 256 * MiB,
  unnamed: 1 * MiB,
};

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = {
  // A zip is never much larger than what it holds, stored.
  fileBytes: 512 * MiB,
  // The manifest names at most 605 entries (256 sources, 256 PTX, 64 of the sanitizer's own, 16 of repro/, 13 roles).
  entries: 1024,
  entryBytes: Math.max(...Object.values(BUNDLE_FILE_LIMITS), ...Object.values(BUNDLE_JSON_LIMITS).map((l) => l.bytes)),
  // The largest real pair, a diagnosis with its allocator history (32 + 256 MiB), or a run's result, samples and
  // sanitizer report at their limits (64 + 64 + 64 MiB) with its sources and PTX, with room: everything is in memory at once.
  totalBytes: 384 * MiB,
  ratio: 200,
  json: BUNDLE_JSON_LIMITS,
  files: BUNDLE_FILE_LIMITS,
};

/** The most an entry of this role may hold. */
export function roleBytes(limits: BundleLimits, role: BundleRole): number {
  return role in limits.json ? limits.json[role as JsonRole].bytes : limits.files[role as FileRole];
}

/**
 * The newest manifest schema this version reads (and the one it writes). 1: plan, result, sources, environment,
 * doctor, devices, sanitizer report, repro/. 2 adds compile.json (options, commands, logs, diagnostics), ptx/,
 * validation.json (the validator's findings), samples.json (NVML samples) and sanitizer/ (the tool's own output).
 * 3 adds diagnosis.json (a program's diagnosis) and diagnosis/oom-snapshot.pickle (its allocator history).
 * 4 adds profile.json (the kernel profile made with the run): a schema 3 reader would refuse its manifest's new
 * role unread, so it is told the bundle is newer instead.
 */
export const BUNDLE_SCHEMA = 4;

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
