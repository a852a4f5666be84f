import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { bundleManifestSchema } from '../../core/bundle/manifest';
import { launchPlanSchema } from '../../core/plan/plan-schema';
import { decodeTimeline } from '../../core/memory/timeline-wire';
import { BundleRefusedError, openBundleView, readBundle } from '../../main/bundle/read-bundle';
import { projectRoot } from '../../main/paths';
import { craftedZip, localHeader, zipFileBytes } from '../helpers/bundle-zips';
import { below, extremeField, GENERIC, mutate, pick, TEXT, type Mutator, type Rng } from './mutate';
import { DisagreementError, fixtures, type FuzzTarget } from './target';
import { acrossReader } from '../helpers/across-reader';

/** A zip's records by signature, and the offset and width of each field a mutation sets to an extreme value. */
const ZIP_FIELDS: [number, [number, number][]][] = [
  // local header: flags, method, CRC, sizes, name and extra lengths
  [
    0x04034b50,
    [
      [6, 2],
      [8, 2],
      [14, 4],
      [18, 4],
      [22, 4],
      [26, 2],
      [28, 2],
    ],
  ],
  // central directory: method, sizes, name, extra and comment lengths, attributes, the local header's offset
  [
    0x02014b50,
    [
      [10, 2],
      [20, 4],
      [24, 4],
      [28, 2],
      [30, 2],
      [32, 2],
      [38, 4],
      [42, 4],
    ],
  ],
  // end of the central directory: entry counts, its size and offset, the comment's length
  [
    0x06054b50,
    [
      [8, 2],
      [10, 2],
      [12, 4],
      [16, 4],
      [20, 2],
    ],
  ],
];

const zipField: Mutator = (rng, b) => {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const found: [number, [number, number]][] = [];
  for (let at = 0; at + 4 <= b.length; at++) {
    const record = ZIP_FIELDS.find(([signature]) => view.getUint32(at, true) === signature);
    if (record) for (const field of record[1]) found.push([at, field]);
  }
  if (!found.length) return extremeField(rng, b);
  const [at, [offset, width]] = pick(rng, found);
  return extremeField(rng, b, at + offset, width);
};

const HOSTILE_NAMES = ['../evil', '/etc/passwd', 'a\\b', 'sources/../../x', 'x\u0000y', 'manifest.json', 'plan.json', 'result.json', ''];

/** A bundle's entries, one changed (mutated, swapped for another bundle's, dropped, renamed, added), zipped again. */
function entryMutant(rng: Rng, bundle: Map<string, Uint8Array>, all: Map<string, Uint8Array>[]): Uint8Array {
  const entries = [...bundle.entries()];
  const i = rng() < 0.3 ? entries.findIndex(([name]) => name === 'manifest.json') : below(rng, entries.length);
  const [name, data] = entries[i]!;
  const choice = rng();
  if (choice < 0.6) entries[i] = [name, mutate(rng, data, [...all.flatMap((b) => [...b.values()])], /\.(json|xml|cu|txt|md)$/.test(name) ? TEXT : GENERIC)];
  else if (choice < 0.75) entries[i] = [name, pick(rng, all).get(name) ?? pick(rng, [...pick(rng, all).values()])];
  else if (choice < 0.85) entries.splice(i, 1);
  else if (choice < 0.93) entries[i] = [pick(rng, HOSTILE_NAMES), data];
  else entries.push([pick(rng, HOSTILE_NAMES), data]);
  const deflate = rng() < 0.5;
  const parts: Uint8Array[] = [];
  let offset = 0;
  const directory = entries.map(([n, d]) => {
    const file = zipFileBytes(n, Buffer.from(d), deflate);
    const at = offset;
    const header = localHeader(file);
    parts.push(header, file.body);
    offset += header.length + file.body.length;
    return { file, offset: at };
  });
  return craftedZip(Buffer.concat(parts), directory);
}

/**
 * The bundle reader (bundle.open, bundle inspect): the zip read within its limits, every entry read for its role,
 * then what the host checks of the reader's answer and what the view decodes (its memory timelines).
 */
export function bundleTarget(): FuzzTarget {
  let zips: Uint8Array[] = [];
  const opened: Map<string, Uint8Array>[] = [];
  return {
    file: 'input.zip',
    load: async () => {
      zips = fixtures(['bundles', 'bundles/recorded'], '.zip');
      for (const folder of ['bundles', 'bundles/recorded'])
        for (const name of readdirSync(join(projectRoot(), 'test/fixtures', folder))
          .filter((n) => n.endsWith('.zip'))
          .sort())
          opened.push((await readBundle(join(projectRoot(), 'test/fixtures', folder, name))).entries);
    },
    mutant: (rng) =>
      rng() < 0.5 ? mutate(rng, pick(rng, zips), zips, [...GENERIC, zipField, zipField, zipField]) : entryMutant(rng, pick(rng, opened), opened),
    read: async (path) => {
      let view;
      try {
        view = acrossReader(await openBundleView(path));
      } catch (error) {
        if (error instanceof BundleRefusedError) return 'refused: BundleRefusedError';
        throw error;
      }
      if (!bundleManifestSchema.safeParse(view.manifest).success) throw new DisagreementError('the host refuses the manifest the reader accepted');
      if (view.plan !== null && !launchPlanSchema.safeParse(view.plan).success) throw new DisagreementError('the host refuses the plan the reader accepted');
      for (const wire of view.timelines) decodeTimeline(wire);
      return 'accepted';
    },
  };
}
