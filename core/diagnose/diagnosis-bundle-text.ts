import { formatBytes } from '../format';
import { basenameOf } from '../workspace/paths';
import type { ReportOrigin } from './diagnosis-view-text';
import type { DiagnosisReport } from './report';

/**
 * What the app says about a diagnosis as a bundle: exporting one from the Diagnose view (diagnose.export), and an
 * opened bundle that holds one (bundle.open's `diagnosis`). Built here, once; the views show them.
 */

/**
 * What the export dialog writes, above its choices: what this export will hold. A diagnosis run here goes with this
 * machine's doctor and CUDA variables; one opened from a file was recorded elsewhere, and they would describe another
 * machine (main/bundle/diagnosis-bundle.ts leaves them out).
 */
export const diagnosisExportAbout = (ranHere: boolean): string =>
  `One .zip with this diagnosis — the report, each step with the program’s output, the allocator’s snapshot when one was recorded${
    ranHere ? ' — and this machine’s doctor and CUDA variables' : ''
  }, for a colleague to open in GPU Workbench with Open bundle… (read-only, no GPU needed).${
    ranHere ? '' : ' This machine’s doctor and variables stay out: the diagnosis was recorded elsewhere (opened from a file).'
  }`;

/** The redaction switch's words (on by default). */
export const DIAGNOSIS_REDACT_LABEL = 'Hide user and host names, home folders and your own variables';

/** What the dialog says while the host writes the bundle. */
export const diagnosisExporting = (ranHere: boolean): string =>
  ranHere ? 'Exporting: gathering this machine’s doctor, then writing the zip…' : 'Exporting: writing the zip…';

/** The host keeps this machine's doctor beside a diagnosis it ran (or cancelled) here, not beside one opened from a file. */
export const diagnosisRanHere = (origin: ReportOrigin | null): boolean => origin?.kind === 'run' || origin?.kind === 'cancelled';

/**
 * Why Export bundle… is off for this report, or null when the host holds it (it gave the report an id): a cancelled
 * diagnosis was built here from what streamed, and a bundle's diagnosis is already the file to send.
 */
export function diagnosisExportBlocker(report: Pick<DiagnosisReport, 'id'>, origin: ReportOrigin | null): string | null {
  if (report.id) return null;
  if (origin?.kind === 'cancelled')
    return 'This cancelled diagnosis was built from what streamed (the workbench did not answer the cancel), so it holds no copy to export. Diagnose the program again, then export.';
  if (origin?.kind === 'bundle')
    return `This diagnosis came from the bundle ${basenameOf(origin.path)}, which is already the one file to send: send it as it is.`;
  return 'The workbench holds no copy of this diagnosis to export: open or run it again, then export.';
}

const PYTHON = /^python[\d.]*$/;

/**
 * The file name the dialog proposes: the program's script (a Python program's first argument) or its command, and
 * the time to the minute (UTC) — "gpu-workbench-diagnosis-join-2025-05-01T09-30.zip".
 */
export function diagnosisBundleName(report: Pick<DiagnosisReport, 'program'>, now: Date): string {
  const argv = report.program.argv;
  const first = argv[0] ? basenameOf(argv[0]) : '';
  const script = PYTHON.test(first) && argv[1] && !argv[1].startsWith('-') ? argv[1] : (argv[0] ?? '');
  const name =
    basenameOf(script)
      .replace(/\.py$/i, '')
      .replace(/[^A-Za-z0-9_.-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 40) || 'program';
  const stamp = Number.isNaN(now.getTime()) ? 'now' : now.toISOString().slice(0, 16).replace(':', '-');
  return `gpu-workbench-diagnosis-${name}-${stamp}.zip`;
}

/** What was written, once the host answers. */
export function diagnosisExportedText(result: { path: string; bytes: number }, redacted: boolean): string {
  return `Wrote ${result.path} (${formatBytes(result.bytes)}, ${redacted ? 'redacted' : 'NOT redacted'}). Send it as it is: Open bundle… opens it, and Open in Diagnose there shows this report.`;
}

/** Why nothing was written: the host's own words (a folder that does not exist, a report it no longer holds), or the cancel. */
export function diagnosisExportFailedText(message: string, how: { cancelled: boolean; path: string }): string {
  if (how.cancelled) return `Cancelled: nothing was written to ${how.path}.`;
  const said = message.trim() || 'the workbench gave no reason';
  return `The diagnosis was not exported. ${said}${/[.!?)]$/.test(said) ? '' : '.'}`;
}

/** What an opened bundle holds, when it holds a program's diagnosis: said with its verdict. */
export function bundleDiagnosisText(report: Pick<DiagnosisReport, 'verdict'>): string {
  return `It holds a program’s diagnosis: ${report.verdict.sentence}`;
}

/** What Open in Diagnose does, under the bundle's diagnosis. */
export function bundleDiagnosisNote(hasSnapshot: boolean): string {
  const snapshot = hasSnapshot ? ' It carries the allocator’s snapshot from the out-of-memory: Open in Diagnose, then Open in the Memory tab.' : '';
  return `Open in Diagnose shows the whole report — your line, the cause, what to do, each step with the program’s output — read from the bundle; nothing runs.${snapshot}`;
}

/** The name the Memory tab gives a bundle's snapshot (the host keeps it under a name of its content). */
export function bundleSnapshotName(bundlePath: string): string {
  return `the allocator’s snapshot from ${basenameOf(bundlePath)}`;
}
