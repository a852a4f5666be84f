/**
 * The hostile files of issue 25's attack review, written at test time at the review's sizes: the large ones streamed
 * to disk one chunk at a time, so the test's own memory stays small whatever the file's size.
 */
import { createWriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { bundleManifest, deflatedZip, DIGITS, EMPTY_OBJECTS, mebibyteEntriesZip, repeatedText, sharedStreamZip, streamedZip } from './bundle-zips';
import { laughs, long4, sharedFilename, sharedString, tuple1Nest } from './hostile-pickles';

const MiB = 2 ** 20;
const FILL = 4 * MiB;

/** `unit` `count` times over, in chunks of about 4 MiB (the same chunk each time). */
export function* repeated(count: number, unit: string | number): Generator<Buffer> {
  const unitBytes = typeof unit === 'number' ? Buffer.from([unit]) : Buffer.from(unit);
  const perChunk = Math.max(1, Math.floor(FILL / unitBytes.length));
  const fill = Buffer.alloc(perChunk * unitBytes.length, unitBytes);
  for (let left = count; left > 0; left -= perChunk) yield left >= perChunk ? fill : fill.subarray(0, left * unitBytes.length);
}

/** Writes the chunks to a file as they come. */
export async function writeChunks(path: string, chunks: Iterable<Uint8Array | string>): Promise<string> {
  await pipeline(Readable.from(chunks), createWriteStream(path));
  return path;
}

const manifestOf = (contents: object) => Buffer.from(bundleManifest({ contents: { plan: null, result: null, sources: [], ...contents } }));

const written = (dir: string, name: string, bytes: Uint8Array) => {
  writeFileSync(join(dir, name), bytes);
  return Promise.resolve(join(dir, name));
};

/** 1. Manifests that are text, deflated as text is: 140 million numbers (280 MB), 503 MB of `{}`. */
export const numbersManifestBundle = (dir: string) =>
  deflatedZip(join(dir, 'numbers-manifest.zip'), 'manifest.json', repeatedText(280_000_001, '[', DIGITS, '0]'));
export const objectsManifestBundle = (dir: string) =>
  deflatedZip(join(dir, 'objects-manifest.zip'), 'manifest.json', repeatedText(503_000_000, '[', EMPTY_OBJECTS, '{}]'));

/** 4. 1,000 entries of 1 MiB each; 1,000 directory entries sharing one compressed stream. */
export const mebibyteEntriesBundle = (dir: string) => written(dir, 'mebibyte-entries.zip', mebibyteEntriesZip(manifestOf({})));
export const sharedStreamBundle = (dir: string) => written(dir, 'shared-stream.zip', sharedStreamZip(manifestOf({})));

/** 2. 210 MB: PROTO 4, NONE 209,999,997 times, STOP. */
export const noneFloodPickle = (dir: string) =>
  writeChunks(join(dir, 'none-flood.pickle'), [Uint8Array.of(0x80, 4), ...repeated(210_000_000 - 3, 0x4e), Uint8Array.of(0x2e)]);

/** 3 and 5: the memo, integer, frame and nesting attacks, each small enough to make in memory. */
export const memoStringPickle = (dir: string) => written(dir, 'memo-string.pickle', sharedString());
export const laughsPickle = (dir: string) => written(dir, 'laughs.pickle', laughs());
export const long4Pickle = (bytes: number) => (dir: string) => written(dir, `long4-${bytes}.pickle`, long4(bytes));
/** The review's frames: 5,000, each naming one filename of 50 MiB written once. */
export const sharedFilenamePickle = (dir: string) => written(dir, 'shared-filename.pickle', sharedFilename(5000, 50 * MiB));
export const tuple1Pickle = (dir: string) => written(dir, 'tuple1-nest.pickle', tuple1Nest());

/** 7. One sanitizer record whose text is 300 MB. */
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<ComputeSanitizerOutput>\n<record>\n<kind>Precise</kind>\n<level>Error</level>\n<what>\n<text>';
const XML_TAIL = '</text>\n</what>\n</record>\n</ComputeSanitizerOutput>\n';
export const hugeRecordXml = (dir: string) =>
  writeChunks(join(dir, 'huge-record.xml'), [XML_HEAD, ...repeated(300_000_000 - XML_HEAD.length - XML_TAIL.length, 'A'), XML_TAIL]);

/**
 * 7. JSON of 30 MiB: 15 Mi arrays inside one another, or 15 Mi numbers in one array (one digit each, varied), bare
 * or as the value of an object's field (`{"result": …}`, which a reader takes for a result by its first byte).
 */
const HALF = 15 * MiB;
const nestedChunks = () => [...repeated(HALF, '['), ...repeated(HALF, ']')];
const numberChunks = () => repeatedText(2 * HALF + 1, '[', DIGITS, '0]');
const inField = (chunks: Iterable<Buffer>, field?: string) => (field ? [`{"${field}":`, ...chunks, '}'] : chunks);
export const nestedJson = (name: string, field?: string) => (dir: string) => writeChunks(join(dir, name), inField(nestedChunks(), field));
export const numbersJson = (name: string, field?: string) => (dir: string) => writeChunks(join(dir, name), inField(numberChunks(), field));

/** 7. The same shapes as a bundle's diagnosis.json, for the CLI (which opens a saved diagnosis only inside a bundle). */
const diagnosisBundle = (name: string, chunks: () => Iterable<Buffer>) => (dir: string) =>
  streamedZip(join(dir, name), [
    { name: 'manifest.json', chunks: manifestOf({ diagnosis: 'diagnosis.json' }) },
    { name: 'diagnosis.json', chunks: chunks() },
  ]);
export const nestedDiagnosisBundle = diagnosisBundle('nested-diagnosis.zip', nestedChunks);
export const numbersDiagnosisBundle = diagnosisBundle('numbers-diagnosis.zip', numberChunks);
