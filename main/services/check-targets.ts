import { open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';

import { CHECK_CONFIG_FILE, DEFAULT_CHECK_CONFIG, parseCheckConfig, type CheckConfig } from '../../core/check/check-config';
import type { CheckName, PlanOrigin, SampleVariant } from '../../core/check/check-model';
import { SNIFF_HEAD_BYTES, sniffFileKind } from '../../core/workspace/file-kind';
import { PlanFileError, readPlanFile, readTextFile } from './plan-files';
import { listGallery, loadSample, samplesRoot } from './sample-service';

/** One plan `check` checks, read and ready: where it came from, what a sample expects of it, its settings. */
export interface CheckTarget {
  label: string;
  /** The plan as read (its sources inlined); null when it could not be read (readProblem says why). */
  plan: unknown;
  planPath: string | null;
  readProblem: string | null;
  origin: PlanOrigin;
  /** The run's own time limit, where the plan comes with one (a sample.json's timeoutMs, the app's Run section); the config's wins. */
  runTimeoutMs: number | null;
  /** The check a broken sample must fail. */
  expectedCheck: CheckName | null;
  config: CheckConfig;
  /** The gpu-workbench-check.json the settings came from; null for the defaults. */
  configPath: string | null;
}

/** A config file that is not what it should be: one message, every problem in it on a line. */
export class CheckConfigError extends Error {}

export interface ChosenConfig {
  config: CheckConfig;
  path: string | null;
}

export const DEFAULT_CONFIG: ChosenConfig = { config: DEFAULT_CHECK_CONFIG, path: null };

/** Reads and checks a config file (--config, or one found beside the plans). */
export async function loadCheckConfig(path: string): Promise<ChosenConfig> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readTextFile(file, 'Check config', 1024 * 1024);
  } catch (error) {
    throw new CheckConfigError(error instanceof PlanFileError ? error.message : `Cannot read ${file}: ${(error as Error).message}`);
  }
  const parsed = parseCheckConfig(text, file);
  if (!parsed.ok) throw new CheckConfigError(`The check config is not valid:\n${parsed.problems.map((p) => `  ${p}`).join('\n')}`);
  return { config: parsed.config, path: file };
}

const exists = (path: string) =>
  stat(path).then(
    (s) => s.isFile(),
    () => false,
  );

/**
 * The settings for plans in `folders` (nearest first): the first gpu-workbench-check.json among them, else the
 * defaults. `mayRead` is the host's path policy (serve reads only inside its workspace); it throws to refuse.
 */
export async function configNear(folders: string[], mayRead: (path: string) => Promise<string> = async (p) => p): Promise<ChosenConfig> {
  for (const folder of folders) {
    const candidate = join(folder, CHECK_CONFIG_FILE);
    if (await exists(candidate)) return loadCheckConfig(await mayRead(candidate));
  }
  return DEFAULT_CONFIG;
}

/** A path as the report names it: relative to where the command ran when it is below it. */
export function shownPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}

/** A plan file; `folder` is the folder named on the command line it was found in (its config counts too). */
export async function planFileTarget(path: string, chosen: ChosenConfig | null, folder: string | null = null): Promise<CheckTarget> {
  const planPath = resolve(path);
  const { config, path: configPath } = chosen ?? (await configNear([dirname(planPath), ...(folder ? [folder] : [])]));
  const base = { label: shownPath(planPath), planPath, origin: { kind: 'plan' } as const, runTimeoutMs: null, expectedCheck: null, config, configPath };
  try {
    return { ...base, plan: (await readPlanFile(planPath)).plan, readProblem: null };
  } catch (error) {
    if (!(error instanceof PlanFileError)) throw error;
    return { ...base, plan: null, readProblem: error.message };
  }
}

/** Both variants (or the ones named) of gallery samples under `root` (every one, or those named). */
export async function sampleTargets(
  root: string,
  chosen: ChosenConfig | null,
  only: { names?: string[]; variants?: SampleVariant[] } = {},
): Promise<CheckTarget[]> {
  const gallery = (await listGallery(root)).filter((s) => !only.names || only.names.includes(s.name));
  const out: CheckTarget[] = [];
  for (const sample of gallery) {
    const { config, path: configPath } = chosen ?? (await configNear([sample.dir, root]));
    for (const variant of only.variants ?? (['broken', 'fixed'] as const)) {
      const loaded = await loadSample(sample.name, variant, root);
      out.push({
        label: `${sample.name} (${variant})`,
        plan: loaded.plan,
        planPath: loaded.planPath,
        readProblem: null,
        origin: { kind: 'sample', sample: sample.name, variant },
        runTimeoutMs: sample.manifest.timeoutMs ?? null,
        expectedCheck: variant === 'broken' ? sample.manifest.expect.broken.check : null,
        config,
        configPath,
      });
    }
  }
  return out;
}

/** The built-in failure gallery (samples/), every sample's both variants. */
export const galleryTargets = (chosen: ChosenConfig | null): Promise<CheckTarget[]> => sampleTargets(samplesRoot(), chosen);

/** Whether a file's head says it is a launch plan (JSON with kernels and steps). */
async function isPlanFile(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(SNIFF_HEAD_BYTES);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return sniffFileKind(head.subarray(0, bytesRead), basename(path)) === 'plan';
  } finally {
    await handle.close();
  }
}

/**
 * A folder: a gallery of samples (folders with a sample.json), one sample's folder (both its variants), or a folder of
 * plan files (its *.json that are plans, in name order). Nothing in it is a plan: said, as a mistake of the command line.
 */
export async function folderTargets(dir: string, chosen: ChosenConfig | null): Promise<CheckTarget[]> {
  const folder = resolve(dir);
  if (await exists(join(folder, 'sample.json'))) return sampleTargets(dirname(folder), chosen, { names: [basename(folder)] });
  const samples = await sampleTargets(folder, chosen);
  if (samples.length) return samples;
  const entries = await readdir(folder, { withFileTypes: true });
  const plans: string[] = [];
  for (const e of entries.filter((e) => e.isFile() && e.name.endsWith('.json') && e.name !== 'sample.json' && e.name !== 'gpu-workbench-check.json'))
    if (await isPlanFile(join(folder, e.name))) plans.push(join(folder, e.name));
  if (!plans.length)
    throw new PlanFileError(`${folder} holds no launch plan (a .json with kernels and steps) and no gallery sample (a folder with a sample.json).`);
  const out: CheckTarget[] = [];
  for (const plan of plans.sort()) out.push(await planFileTarget(plan, chosen, folder));
  return out;
}

/**
 * A plan given as data (the one on screen in the app): its settings from the gpu-workbench-check.json beside its
 * file, when it has one, else the defaults.
 */
export async function planDataTarget(
  plan: unknown,
  planPath: string | null,
  label: string | null,
  runTimeoutMs: number | null,
  mayRead?: (path: string) => Promise<string>,
): Promise<CheckTarget> {
  const { config, path: configPath } = planPath ? await configNear([dirname(resolve(planPath))], mayRead) : DEFAULT_CONFIG;
  return {
    label: label ?? (planPath ? shownPath(planPath) : 'the plan'),
    plan,
    planPath,
    readProblem: null,
    origin: { kind: planPath ? 'plan' : 'source' },
    runTimeoutMs,
    expectedCheck: null,
    config,
    configPath,
  };
}
