import { formatBytes, plural } from '../format';
import type { OomPicture, RunKind } from './evidence';
import type { DiagnosisReport } from './report';
import { andList } from '../text/shell-words';

/**
 * The sentences the app's Diagnose view says beside a report's own (core/diagnose/report.ts builds those): built
 * here, once, so the view shows them and never composes them.
 */

/** Why the view runs nothing on this host: the host's own refusal (diagnose-handlers' PROGRAMS_OFF), said before asking. */
export const DIAGNOSE_PROGRAMS_OFF =
  'This workbench does not run programs named from the browser: it was started without `--allow-programs`. Start it with `gpu-workbench serve --allow-programs`, or run `gpu-workbench diagnose -- <command>` in a terminal on the GPU machine. A diagnosis saved as JSON (`gpu-workbench diagnose --json > report.json`) opens here either way.';

/** The line the first run blamed, set beside the real one. */
export const MISLEADING_LINE_NOTE = 'a later call, where the error was only reported: CUDA reports a kernel’s failure at the next call that waits for the GPU.';

/** Where the report on screen came from: a run here, a file opened, a run cancelled here (the host's answer, or built from what streamed), or an opened bundle. */
export type ReportOrigin = { kind: 'run' } | { kind: 'file'; path: string } | { kind: 'cancelled' } | { kind: 'bundle'; path: string };

/** What an opened, run, cancelled or bundled report is, above it. */
export function reportOriginText(origin: ReportOrigin): string {
  if (origin.kind === 'file') return `Opened from ${origin.path}: read, never run.`;
  if (origin.kind === 'bundle') return `Opened from the bundle ${origin.path}: read, never run here; the program was diagnosed where the bundle was made.`;
  if (origin.kind === 'run') return 'Diagnosed here, just now.';
  return 'Cancelled: the program was stopped, with every process it started. This is what the diagnosis had found when it stopped.';
}

/**
 * The passes a clean run did not make, and how to make them: at once where the view can run the report's program
 * (`runnable`: a run made here, in a host that runs programs), else through the form.
 */
export function offeredText(offered: readonly RunKind[], runnable = false): string | null {
  if (!offered.length) return null;
  const names = andList(offered);
  const how = runnable ? 'Run them now for this program, as it ran.' : 'Tick “Run the sanitizer passes after a clean exit” and diagnose it again to run them.';
  return `The program ran clean, so the sanitizer passes were offered, not run: ${names}. ${how}`;
}

/** The environment's checks, when none warned or failed. */
export function environmentChecksText(report: Pick<DiagnosisReport, 'evidence'>): string | null {
  const env = report.evidence.environment;
  if (env.checks.length) return null;
  return env.problems.length
    ? `The environment could not be looked at whole: ${env.problems.join(' ')}`
    : 'No check of the program’s environment warned or failed.';
}

/** The allocator's picture in one line: what was asked for, what was held, what was free in its cache. */
export function oomPictureText(p: OomPicture): string {
  if (p.missing) return `No allocator history: ${p.missing}`;
  const parts: string[] = [];
  if (p.requestedBytes !== null) parts.push(`It asked for ${formatBytes(p.requestedBytes)}`);
  if (p.allocatedBytes !== null)
    parts.push(`PyTorch held ${formatBytes(p.allocatedBytes)} in tensors${p.reservedBytes !== null ? ` of ${formatBytes(p.reservedBytes)} reserved` : ''}`);
  if (p.freeInCacheBytes !== null)
    parts.push(
      `${formatBytes(p.freeInCacheBytes)} was free in its cache${p.largestFreeInCacheBytes !== null && p.freeInCacheBytes > 0 ? ` (the largest piece ${formatBytes(p.largestFreeInCacheBytes)})` : ''}`,
    );
  const held = p.aliveByLine.length ? ` Alive at the failure, by the line that allocated it: ${plural(p.aliveByLine.length, 'line')}.` : '';
  return `${parts.length ? `${parts.join('; ')}.` : 'The allocator recorded no totals.'}${held}`;
}

/** Why the snapshot cannot be opened in the Memory tab, when the report names none that is here. */
export const SNAPSHOT_NOT_HERE =
  'The allocator’s snapshot is not here (it is looked for where the report names it, and beside the report): only its summary is shown.';

/** A step's or a diagnosis's time as a person reads it: milliseconds under a second, then seconds, then minutes. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

/** When and how long a diagnosis ran, against its budget. */
export function ranText(report: Pick<DiagnosisReport, 'startedAt' | 'durationMs' | 'budgetMs' | 'program'>): string {
  const at = Number.isNaN(Date.parse(report.startedAt)) ? report.startedAt : `${new Date(report.startedAt).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  const thorough = report.program.thorough ? ', with the sanitizer passes after a clean exit' : '';
  return `Started ${at}; took ${durationText(report.durationMs)} of a ${durationText(report.budgetMs)} budget${thorough}.`;
}
