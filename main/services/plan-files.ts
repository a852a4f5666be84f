import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';

import { BUNDLE_JSON_LIMITS } from '../../core/bundle/bundle-limits';
import { JsonRefusedError, parseJsonWithin } from '../../core/json-limits';
import { formatBytes } from '../../core/format';
import { MAX_RESULT_FILE_BYTES, MAX_SOURCE_BYTES } from '../../core/limits';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { checkSavedOutcome, describeNotAResult, resultFileText } from '../../core/runner/result-file';

import { FileRefusedError, readRegularFile, writeFileAtomic } from './safe-fs';
import { openPaths, type PathPolicy } from './workspace-paths';

/** A plan file that cannot be read, in words for the user (never a stack trace). */
export class PlanFileError extends Error {}

/** A text file the user named (a plan, a kernel source, a result), within a size limit (the source-size one unless given). */
export async function readTextFile(path: string, what: string, limit = MAX_SOURCE_BYTES): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = (await readRegularFile(path, limit)).bytes;
  } catch (error) {
    if (error instanceof FileRefusedError)
      throw new PlanFileError(
        error.code === 'TOO_LARGE' ? `${what} ${path} is larger than the limit of ${formatBytes(limit)}.` : `${what} ${path}: ${error.message}`,
      );
    const code = (error as NodeJS.ErrnoException).code;
    throw new PlanFileError(code === 'EISDIR' ? `${what} ${path} is a folder, not a file.` : `${what} ${path} does not exist (or cannot be read).`);
  }
  if (bytes.includes(0)) throw new PlanFileError(`${what} ${path} is a binary file, not text.`);
  return bytes.toString('utf8');
}

interface PlanFileShape {
  kernels?: { source?: string; sourceFile?: string; sourceName?: string }[];
  buffers?: { init?: { kind?: string; path?: string } }[];
}

/**
 * Reads a launch plan file. Kernels may give their source inline ("source") or as a path relative to
 * the plan ("sourceFile"), and file initializers' paths are relative to the plan too; both are resolved
 * here, so what reaches the schema is self-contained. `rename` maps one sourceFile to another (a
 * gallery sample's fixed variant). The schema itself is checked by the run.
 */
export async function readPlanFile(path: string, rename: Record<string, string> = {}, paths: Pick<PathPolicy, 'read'> = openPaths): Promise<{ plan: unknown }> {
  let plan: PlanFileShape;
  try {
    // Counted before it is parsed: a plan is kilobytes, and 16 MiB of `[]` would be millions of arrays.
    plan = parseJsonWithin(Buffer.from(await readTextFile(path, 'Plan file')), BUNDLE_JSON_LIMITS.plan, `Plan file ${path}`) as PlanFileShape;
  } catch (error) {
    if (error instanceof PlanFileError || error instanceof JsonRefusedError) throw new PlanFileError(error.message);
    throw error;
  }
  if (typeof plan !== 'object' || plan === null || Array.isArray(plan)) throw new PlanFileError(`Plan file ${path} does not hold a JSON object.`);
  const folder = dirname(resolve(path));
  for (const kernel of Array.isArray(plan.kernels) ? plan.kernels : []) {
    if (typeof kernel?.sourceFile === 'string' && kernel.source === undefined) {
      const file = await paths.read(await insidePlanFolder(folder, rename[kernel.sourceFile] ?? kernel.sourceFile, path, 'sourceFile'));
      kernel.source = await readTextFile(file, 'Kernel source');
      kernel.sourceName ??= basename(file);
      delete kernel.sourceFile;
    }
  }
  for (const buffer of Array.isArray(plan.buffers) ? plan.buffers : []) {
    const init = buffer?.init;
    if (init?.kind === 'file' && typeof init.path === 'string')
      init.path = await paths.read(await insidePlanFolder(folder, init.path, path, 'a file initializer'));
  }
  return { plan };
}

/**
 * A path a plan file names, resolved against the plan's folder, which it may not leave: a plan someone
 * sent you cannot read your other files (an absolute path, `..`, or a symlink out of the folder).
 */
async function insidePlanFolder(folder: string, named: string, planPath: string, what: string): Promise<string> {
  const refuse = (why: string) =>
    new PlanFileError(`Plan file ${planPath}: ${what} "${named}" ${why}. A plan may name only files in its own folder (${folder}) or below it.`);
  if (isAbsolute(named)) throw refuse('is an absolute path');
  const file = resolve(folder, named);
  if (!file.startsWith(folder + sep)) throw refuse("leaves the plan's folder");
  const realFolder = await realpath(folder);
  const realFile = await realpath(file).catch(() => null);
  if (realFile === null) throw new PlanFileError(`Plan file ${planPath}: ${what} "${named}" does not exist (looked for ${file}).`);
  if (!realFile.startsWith(realFolder + sep)) throw refuse("is a link out of the plan's folder");
  // The checked path, links resolved: what is read later is what was checked now.
  return realFile;
}

/** Writes a plan or a run result as readable JSON, atomically: a killed write leaves the old file whole. */
export async function writeJsonFile(path: string, value: unknown): Promise<{ path: string }> {
  await writeFileAtomic(path, JSON.stringify(value, null, 2) + '\n');
  return { path };
}

/** Writes a run outcome as a result file (one line per event of its log: core/runner/result-file.ts), atomically. */
export async function writeResultFile(path: string, outcome: unknown): Promise<{ path: string }> {
  await writeFileAtomic(path, resultFileText(outcome));
  return { path };
}

/** A saved run result: checked for the fields the UI reads (and the event log the timeline draws) before it is shown. */
export async function readRunOutcome(path: string): Promise<RunOutcome> {
  let value: unknown;
  try {
    value = parseJsonWithin(Buffer.from(await readTextFile(path, 'Result file', MAX_RESULT_FILE_BYTES)), BUNDLE_JSON_LIMITS.result, `Result file ${path}`);
  } catch (error) {
    if (error instanceof PlanFileError || error instanceof JsonRefusedError) throw new PlanFileError(error.message);
    throw error;
  }
  const checked = checkSavedOutcome(value);
  if (!checked.ok) throw new PlanFileError(describeNotAResult(value, path, checked.problems));
  return checked.outcome;
}
