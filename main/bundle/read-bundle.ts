import { stat } from 'node:fs/promises';
import { placeDiagnosisSnapshot } from './diagnosis-bundle';

import yauzl from 'yauzl';

import { BUNDLE_ROLE_NAMES, DEFAULT_BUNDLE_LIMITS, entryNameProblem, roleBytes, type BundleLimits, type BundleRole } from '../../core/bundle/bundle-limits';
import { BundleContentError, bundleView, type BundleView } from '../../core/bundle/bundle-view';
import { bundleManifestSchema, namedEntries, roleEntries, schemaProblem, type BundleManifest } from '../../core/bundle/manifest';
import { JsonRefusedError, parseJsonWithin, type JsonLimits } from '../../core/json-limits';
import { describeIssues, launchPlanSchema } from '../../core/plan/plan-schema';

/** A bundle refused: what is wrong with it, in words; nothing was written anywhere. */
export class BundleRefusedError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`The bundle ${path} was not opened: ${reason}. Nothing was written.`);
    this.name = 'BundleRefusedError';
  }
}

export interface OpenedBundle {
  manifest: BundleManifest;
  /** Every entry's bytes, in memory: a bundle is read, never extracted to disk. */
  entries: Map<string, Uint8Array>;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
/** A local file header's fixed part; its name (and an extra field) follow, then the compressed data. */
const LOCAL_HEADER_BYTES = 30;

type Refuse = (reason: string) => BundleRefusedError;

/**
 * Reads a bundle (a zip) read-only, into memory, under limits no library enforces for you: entry count, names (no
 * absolute paths, `..`, backslashes, control characters), no symlinks, no duplicates, no entries sharing compressed
 * bytes, compression ratio, and bytes — per entry by its role in the manifest, before it is inflated, and for the
 * whole bundle, counted as they are inflated. Then the manifest (its shape bounded before it is parsed, its schema
 * version checked) and a plan inside, which must pass the same schema as any plan file (so no compiler flag outside
 * the allow-list). Nothing in a bundle runs by being opened.
 */
export async function readBundle(path: string, limits: BundleLimits = DEFAULT_BUNDLE_LIMITS): Promise<OpenedBundle> {
  const refuse: Refuse = (reason) => new BundleRefusedError(path, reason);
  const info = await stat(path).catch(() => null);
  if (!info?.isFile()) throw refuse('it is not a regular file');
  if (info.size > limits.fileBytes) throw refuse(`it is ${info.size} bytes, over the limit of ${limits.fileBytes}`);

  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false, strictFileNames: true, validateEntrySizes: true, decodeStrings: true }, (error, file) =>
      error || !file ? reject(refuse(`it is not a readable zip (${error?.message ?? 'no file'})`)) : resolve(file),
    ),
  ).catch((error: unknown) => {
    throw error instanceof BundleRefusedError ? error : refuse(String(error));
  });
  try {
    if (zip.entryCount > limits.entries) throw refuse(`it has ${zip.entryCount} entries, over the limit of ${limits.entries}`);
    const listed = await listEntries(zip, limits, refuse);
    const manifestEntry = listed.get('manifest.json');
    if (!manifestEntry) throw refuse('it has no manifest.json: it is not a GPU Workbench bundle');
    const budget = { left: limits.totalBytes, total: limits.totalBytes };
    const manifestBytes = await inflate(zip, manifestEntry, budget, refuse);
    const manifest = parseManifest(manifestBytes, limits, refuse);
    for (const name of namedEntries(manifest)) if (!listed.has(name)) throw refuse(`the manifest names "${name}", which the bundle does not hold`);
    const roles = entryRoles(manifest, limits);
    for (const [name, entry] of listed) {
      const role = roles.get(name) ?? 'unnamed';
      const most = roleBytes(limits, role);
      if (entry.uncompressedSize > most)
        throw refuse(`the entry "${name}" is ${entry.uncompressedSize} bytes, over the limit of ${most} for ${BUNDLE_ROLE_NAMES[role]}`);
    }
    const entries = new Map<string, Uint8Array>();
    for (const [name, entry] of listed)
      if (!name.endsWith('/')) entries.set(name, entry === manifestEntry ? manifestBytes : await inflate(zip, entry, budget, refuse));
    if (manifest.contents.plan) {
      const plan = json(entries.get(manifest.contents.plan)!, manifest.contents.plan, limits.json.plan, refuse);
      const parsed = launchPlanSchema.safeParse(plan);
      if (!parsed.success) throw refuse(`its plan is not valid: ${describeIssues(parsed.error).split('\n').slice(0, 3).join('; ')}`);
    }
    return { manifest, entries };
  } finally {
    zip.close();
  }
}

/** Each named entry's role: of two roles for one name, the one that allows less. */
function entryRoles(manifest: BundleManifest, limits: BundleLimits): Map<string, BundleRole> {
  const roles = new Map<string, BundleRole>([['manifest.json', 'manifest']]);
  for (const [name, role] of roleEntries(manifest)) {
    const had = roles.get(name);
    if (!had || roleBytes(limits, role) < roleBytes(limits, had)) roles.set(name, role);
  }
  return roles;
}

/**
 * The zip's directory, read without inflating anything: every entry checked on its own (name, type, declared size,
 * ratio), then together (declared total, and no two entries' bytes in the same place: a zip whose entries all point
 * at one compressed stream inflates it once per entry).
 */
async function listEntries(zip: yauzl.ZipFile, limits: BundleLimits, refuse: Refuse): Promise<Map<string, yauzl.Entry>> {
  const listed = new Map<string, yauzl.Entry>();
  const starts = new Map<number, string>();
  let declared = 0;
  await new Promise<void>((resolve, reject) => {
    zip.on('error', (error: Error) => reject(refuse(`the zip is damaged (${error.message})`)));
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      declared += entry.uncompressedSize;
      const same = starts.get(entry.relativeOffsetOfLocalHeader);
      const problem =
        entryProblem(entry, listed, limits) ??
        (same !== undefined ? overlapProblem(same, entry.fileName, entry.relativeOffsetOfLocalHeader, true) : null) ??
        (declared > limits.totalBytes ? `its entries declare more than ${limits.totalBytes} bytes in all` : null);
      if (problem) return reject(refuse(problem));
      listed.set(entry.fileName, entry);
      starts.set(entry.relativeOffsetOfLocalHeader, entry.fileName);
      zip.readEntry();
    });
    zip.readEntry();
  });
  const overlap = overlappingEntries([...listed.values()]);
  if (overlap) throw refuse(overlap);
  return listed;
}

function entryProblem(entry: yauzl.Entry, listed: ReadonlyMap<string, yauzl.Entry>, limits: BundleLimits): string | null {
  const name = entry.fileName;
  const problem = entryNameProblem(name);
  if (problem) return `the entry name "${name.slice(0, 80)}" ${problem}`;
  if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) return `the entry "${name}" is a symbolic link`;
  if (listed.has(name)) return `the entry "${name}" appears twice`;
  const most = name === 'manifest.json' ? limits.json.manifest.bytes : limits.entryBytes;
  if (entry.uncompressedSize > most)
    return `the entry "${name}" is ${entry.uncompressedSize} bytes, over the limit of ${most}${name === 'manifest.json' ? ` for ${BUNDLE_ROLE_NAMES.manifest}` : ''}`;
  if (entry.uncompressedSize > 1024 * 1024 && entry.uncompressedSize > limits.ratio * Math.max(1, entry.compressedSize))
    return `the entry "${name}" expands ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} times (a zip bomb's ratio; the limit is ${limits.ratio})`;
  return null;
}

/** Two entries whose local header and data overlap (each spans at least its fixed header, its name and its compressed bytes), in words. */
export function overlappingEntries(entries: readonly yauzl.Entry[]): string | null {
  const spans = entries
    .map((e) => ({
      name: e.fileName,
      start: e.relativeOffsetOfLocalHeader,
      end: e.relativeOffsetOfLocalHeader + LOCAL_HEADER_BYTES + e.fileNameLength + e.compressedSize,
    }))
    .sort((a, b) => a.start - b.start);
  for (let i = 1; i < spans.length; i++) {
    const [a, b] = [spans[i - 1]!, spans[i]!];
    if (b.start < a.end) return overlapProblem(a.name, b.name, b.start, b.start === a.start);
  }
  return null;
}

const overlapProblem = (a: string, b: string, at: number, sameStart: boolean) =>
  `the entries "${a}" and "${b}" overlap in the zip (${sameStart ? 'both start at' : 'the second starts inside the first, at'} byte ${at}): entries that share compressed bytes inflate them once each`;

/** One entry's bytes, inflated into a buffer of its declared size (already within its role's limit), counted against the bundle's budget as they come. */
function inflate(zip: yauzl.ZipFile, entry: yauzl.Entry, budget: { left: number; total: number }, refuse: Refuse): Promise<Uint8Array> {
  const name = entry.fileName;
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (error, stream) => {
      if (error || !stream) return reject(refuse(`the entry "${name}" cannot be read (${error?.message ?? 'no stream'})`));
      const out = new Uint8Array(entry.uncompressedSize);
      let read = 0;
      stream.on('data', (chunk: Buffer) => {
        budget.left -= chunk.length;
        if (budget.left < 0) stream.destroy(refuse(`its entries inflate to more than ${budget.total} bytes in all`));
        else if (read + chunk.length > out.length) stream.destroy(refuse(`the entry "${name}" holds more than it declares`));
        else {
          out.set(chunk, read);
          read += chunk.length;
        }
      });
      stream.on('error', (e: Error) => reject(e instanceof BundleRefusedError ? e : refuse(`the entry "${name}" is damaged (${e.message})`)));
      stream.on('end', () => (read === out.length ? resolve(out) : reject(refuse(`the entry "${name}" holds less than it declares`))));
    }),
  );
}

function json(bytes: Uint8Array, name: string, limits: JsonLimits, refuse: Refuse): unknown {
  try {
    return parseJsonWithin(bytes, limits, name);
  } catch (error) {
    if (error instanceof JsonRefusedError) throw refuse(error.message);
    throw error;
  }
}

function parseManifest(raw: Uint8Array, limits: BundleLimits, refuse: Refuse): BundleManifest {
  const value = json(raw, 'manifest.json', limits.json.manifest, refuse) as { schema?: unknown };
  if (typeof value?.schema === 'number') {
    const newer = schemaProblem(value.schema);
    if (newer) throw refuse(newer);
  }
  const parsed = bundleManifestSchema.safeParse(value);
  if (!parsed.success) throw refuse(`manifest.json is not valid: ${describeIssues(parsed.error).split('\n').slice(0, 3).join('; ')}`);
  return parsed.data;
}

/**
 * Opens a bundle for the views (bundle.open): read into memory within the limits above, then every entry read
 * for what its role says (core/bundle/bundle-view.ts). Nothing is written, compiled or run.
 */
export async function openBundleView(path: string, limits: BundleLimits = DEFAULT_BUNDLE_LIMITS): Promise<BundleView> {
  const opened = await readBundle(path, limits);
  try {
    const view = bundleView(path, opened.manifest, opened.entries, { limits: limits.json });
    return await placeDiagnosisSnapshot(view, view.diagnosisSnapshot ? opened.entries.get(view.diagnosisSnapshot) : undefined);
  } catch (error) {
    if (error instanceof BundleContentError) throw new BundleRefusedError(path, error.message);
    throw error;
  }
}
