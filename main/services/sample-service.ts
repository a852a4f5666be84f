import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describeIssues } from '../../core/plan/plan-schema';
import { byTitle } from '../../core/samples/gallery-order';
import { sampleManifestSchema, type SampleManifest, type SampleVariant } from '../../core/samples/sample-manifest';
import { projectRoot } from '../paths';
import { PlanFileError, readPlanFile } from './plan-files';

export interface GallerySample {
  name: string;
  dir: string;
  manifest: SampleManifest;
}

export interface LoadedSample extends GallerySample {
  variant: SampleVariant;
  plan: unknown;
  planPath: string;
  /** The variant's kernel source, to open in the editor. */
  sourcePath: string;
}

export const samplesRoot = (): string => join(projectRoot(), 'samples');

/** The failure gallery: every samples/<name>/ with a sample.json, in the order of their titles (core/samples/gallery-order.ts). */
export async function listGallery(root = samplesRoot()): Promise<GallerySample[]> {
  const folders = await readdir(root, { withFileTypes: true }).catch(() => []);
  const out: GallerySample[] = [];
  for (const folder of folders.filter((f) => f.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const dir = join(root, folder.name);
    const text = await readFile(join(dir, 'sample.json'), 'utf8').catch(() => null);
    if (text === null) continue;
    const parsed = sampleManifestSchema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new PlanFileError(`samples/${folder.name}/sample.json is not valid: ${describeIssues(parsed.error)}`);
    out.push({ name: folder.name, dir, manifest: parsed.data });
  }
  return byTitle(out);
}

/** One variant of a sample, its plan read with the variant's source in place of the broken one. */
export async function loadSample(name: string, variant: SampleVariant, root = samplesRoot()): Promise<LoadedSample> {
  const sample = (await listGallery(root)).find((s) => s.name === name);
  if (!sample) throw new PlanFileError(`There is no sample named "${name}". Run \`gpu-workbench samples\` for the list.`);
  const { broken } = sample.manifest.variants;
  const chosen = sample.manifest.variants[variant];
  const planPath = join(sample.dir, chosen.plan);
  const { plan } = await readPlanFile(planPath, chosen.source !== broken.source ? { [broken.source]: chosen.source } : {});
  return { ...sample, variant, plan, planPath, sourcePath: join(sample.dir, chosen.source) };
}
