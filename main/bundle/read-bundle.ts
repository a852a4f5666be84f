import { stat } from 'node:fs/promises';
import { placeDiagnosisSnapshot } from './diagnosis-bundle';

import yauzl from 'yauzl';

import { DEFAULT_BUNDLE_LIMITS, entryNameProblem, type BundleLimits } from '../../core/bundle/bundle-limits';
import { BundleContentError, bundleView, type BundleView } from '../../core/bundle/bundle-view';
import { bundleManifestSchema, namedEntries, schemaProblem, type BundleManifest } from '../../core/bundle/manifest';
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

/**
 * Reads a bundle (a zip) read-only, into memory, under limits no library enforces for you: entry count,
 * per-entry and total bytes, compression ratio, names (no absolute paths, `..`, backslashes, control
 * characters), no symlinks, no duplicates. Then the manifest (its schema version checked) and a plan
 * inside, which must pass the same schema as any plan file (so no compiler flag outside the allow-list).
 * Nothing in a bundle runs by being opened.
 */
export async function readBundle(path: string, limits: BundleLimits = DEFAULT_BUNDLE_LIMITS): Promise<OpenedBundle> {
  const refuse = (reason: string) => new BundleRefusedError(path, reason);
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
    const entries = new Map<string, Uint8Array>();
    let total = 0;
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (error: Error) => reject(refuse(`the zip is damaged (${error.message})`)));
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        const check = (): string | null => {
          const name = entry.fileName;
          const problem = entryNameProblem(name);
          if (problem) return `the entry name "${name.slice(0, 80)}" ${problem}`;
          if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) return `the entry "${name}" is a symbolic link`;
          if (entries.has(name)) return `the entry "${name}" appears twice`;
          if (entry.uncompressedSize > limits.entryBytes)
            return `the entry "${name}" is ${entry.uncompressedSize} bytes, over the limit of ${limits.entryBytes}`;
          total += entry.uncompressedSize;
          if (total > limits.totalBytes) return `its entries total more than ${limits.totalBytes} bytes`;
          if (entry.uncompressedSize > 1024 * 1024 && entry.uncompressedSize > limits.ratio * Math.max(1, entry.compressedSize))
            return `the entry "${name}" expands ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} times (a zip bomb's ratio; the limit is ${limits.ratio})`;
          return null;
        };
        const problem = check();
        if (problem) return reject(refuse(problem));
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(entry, (error, stream) => {
          if (error || !stream) return reject(refuse(`the entry "${entry.fileName}" cannot be read (${error?.message ?? 'no stream'})`));
          const chunks: Buffer[] = [];
          let read = 0;
          stream.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > entry.uncompressedSize) stream.destroy(refuse(`the entry "${entry.fileName}" holds more than it declares`));
            else chunks.push(chunk);
          });
          stream.on('error', (e: Error) => reject(e instanceof BundleRefusedError ? e : refuse(`the entry "${entry.fileName}" is damaged (${e.message})`)));
          stream.on('end', () => {
            entries.set(entry.fileName, new Uint8Array(Buffer.concat(chunks)));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
    const manifest = parseManifest(entries, refuse);
    for (const name of namedEntries(manifest)) if (!entries.has(name)) throw refuse(`the manifest names "${name}", which the bundle does not hold`);
    if (manifest.contents.plan) {
      const plan = json(entries.get(manifest.contents.plan)!, manifest.contents.plan, refuse);
      const parsed = launchPlanSchema.safeParse(plan);
      if (!parsed.success) throw refuse(`its plan is not valid: ${describeIssues(parsed.error).split('\n').slice(0, 3).join('; ')}`);
    }
    return { manifest, entries };
  } finally {
    zip.close();
  }
}

function json(bytes: Uint8Array, name: string, refuse: (reason: string) => BundleRefusedError): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (error) {
    throw refuse(`${name} is not valid JSON (${(error as Error).message})`);
  }
}

function parseManifest(entries: Map<string, Uint8Array>, refuse: (reason: string) => BundleRefusedError): BundleManifest {
  const raw = entries.get('manifest.json');
  if (!raw) throw refuse('it has no manifest.json: it is not a GPU Workbench bundle');
  const value = json(raw, 'manifest.json', refuse) as { schema?: unknown };
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
    const view = bundleView(path, opened.manifest, opened.entries, {
      encode: { base64: (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') },
    });
    return await placeDiagnosisSnapshot(view, view.diagnosisSnapshot ? opened.entries.get(view.diagnosisSnapshot) : undefined);
  } catch (error) {
    if (error instanceof BundleContentError) throw new BundleRefusedError(path, error.message);
    throw error;
  }
}
