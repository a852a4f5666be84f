import { sanitizeReportSchema } from '../../core/bundle/bundle-sanitizer';
import type { BundleView } from '../../core/bundle/bundle-view';
import { bundleManifestSchema } from '../../core/bundle/manifest';
import { parseProfile, type Profile } from '../../core/kernel-profile/profile';
import { launchPlanSchema } from '../../core/plan/plan-schema';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { checkSavedOutcome } from '../../core/runner/result-file';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { BundleRefusedError } from '../bundle/read-bundle';
import { PlanFileError } from '../services/plan-files';
import { SanitizerImportError } from '../tools/sanitize-import';
import { ReaderError, runReader, type ReaderOptions } from './reader-process';

/**
 * The files a user opens from outside, each read in a reader process (main/readers/reader-process.ts) and its answer
 * checked here before it goes on; a refusal keeps the error type its callers already tell apart.
 */

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A refusal carried with its own words (the reader already said which bundle and why). */
class BundleReaderRefusal extends BundleRefusedError {
  constructor(path: string, message: string) {
    super(path, message);
    this.message = message;
  }
}

export async function openBundleInReader(path: string, options: ReaderOptions = {}): Promise<BundleView> {
  const { value } = await runReader<BundleView>({ kind: 'bundle-view', path }, `The bundle ${path}`, options).catch((error: unknown) => {
    if (error instanceof ReaderError) throw new BundleReaderRefusal(path, error.message);
    throw error;
  });
  const answerProblem = !isRecord(value)
    ? 'not an object'
    : !bundleManifestSchema.safeParse(value.manifest).success
      ? 'its manifest does not pass the schema'
      : value.plan !== null && !launchPlanSchema.safeParse(value.plan).success
        ? 'its plan does not pass the schema'
        : value.profile !== null && !parseProfile(value.profile).ok
          ? 'its kernel profile does not pass the schema'
          : !Array.isArray(value.entries) || !Array.isArray(value.timelines) || !Array.isArray(value.notes)
            ? 'its lists are missing'
            : null;
  if (answerProblem) throw new BundleReaderRefusal(path, `The bundle ${path} was not opened: its reader's answer is ${answerProblem}.`);
  return value;
}

export async function importSanitizerReportInReader(
  xmlPath: string | null,
  textPath: string | null,
  tool: SanitizerTool | null,
  options: ReaderOptions = {},
): Promise<SanitizeReport> {
  const shown = xmlPath ?? textPath ?? 'The sanitizer report';
  const { value } = await runReader<SanitizeReport>({ kind: 'sanitizer-report', xmlPath, textPath, tool }, shown, options).catch((error: unknown) => {
    if (error instanceof ReaderError) throw new SanitizerImportError(error.message);
    throw error;
  });
  // The shape a bundle's sanitizer.json must have, every list and string bounded; the raw XML travels beside it.
  const checked = sanitizeReportSchema.safeParse(isRecord(value) ? { ...value, rawXml: undefined } : value);
  if (!checked.success)
    throw new SanitizerImportError(`${shown} was not opened: its reader's answer is not a sanitizer report (${checked.error.issues[0]?.message}).`);
  return value;
}

export async function readRunOutcomeInReader(path: string, options: ReaderOptions = {}): Promise<RunOutcome> {
  const { value } = await runReader<unknown>({ kind: 'run-outcome', path }, `Result file ${path}`, options).catch((error: unknown) => {
    if (error instanceof ReaderError) throw new PlanFileError(error.message);
    throw error;
  });
  const checked = checkSavedOutcome(value);
  if (!checked.ok) throw new PlanFileError(`Result file ${path} was not opened: its reader's answer is not a result (${checked.problems[0] ?? 'unknown'}).`);
  return checked.outcome;
}

/** A profile saved by `gpu-workbench profile --save`, at most this large (a kernel of 100,000 profiled lines fits). */
export const MAX_KERNEL_PROFILE_BYTES = 32 * 2 ** 20;

/** A kernel profile saved as JSON, read and checked in a reader process, its answer checked again here. */
export async function openKernelProfileInReader(path: string, options: ReaderOptions = {}): Promise<Profile> {
  const { value } = await runReader<unknown>({ kind: 'profile', path, maxBytes: MAX_KERNEL_PROFILE_BYTES }, `The profile ${path}`, options).catch(
    (error: unknown) => {
      if (error instanceof ReaderError) throw new PlanFileError(error.message);
      throw error;
    },
  );
  const checked = parseProfile(value);
  if (!checked.ok) throw new PlanFileError(`The profile ${path} was not opened: its reader's answer is not a profile (${checked.error}).`);
  return checked.profile;
}
