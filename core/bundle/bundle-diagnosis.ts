import type { DiagnosisReport } from '../diagnose/report';
import { BUNDLE_ENV_VARIABLES, type Redactor } from './redact';

/** Where a diagnosis goes in a bundle: the report, and the allocator history's snapshot when one was recorded. */
export const DIAGNOSIS_ENTRY = 'diagnosis.json';
export const DIAGNOSIS_SNAPSHOT_ENTRY = 'diagnosis/oom-snapshot.pickle';

/** Variables the diagnosis itself sets: what each re-run changed, said as it was. */
const DIAGNOSIS_VARIABLES = /^(CUDA_LAUNCH_BLOCKING|PYTHONFAULTHANDLER|PYTHONPATH|GPU_WORKBENCH_[A-Z_]+)$/;
export const HIDDEN_VALUE = '(hidden: not a CUDA variable)';

/** A variable the user set for the program: its value goes in only when it is one a bundle may carry (a token may not). */
function shareableEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, BUNDLE_ENV_VARIABLES.includes(k) || DIAGNOSIS_VARIABLES.test(k) ? v : HIDDEN_VALUE]));
}

/**
 * The report as a bundle carries it: the user's own variables hidden unless allow-listed, every string redacted
 * (user and host names, home folders, GPU UUIDs) when asked, and the snapshot named by its entry, not by a path on
 * this machine.
 */
export function shareableDiagnosis(report: DiagnosisReport, redactor: Redactor, snapshotEntry: string | null): DiagnosisReport {
  const copy = JSON.parse(JSON.stringify(report)) as DiagnosisReport;
  copy.program.envChanges = shareableEnv(copy.program.envChanges);
  for (const step of copy.steps) step.envChanges = shareableEnv(step.envChanges);
  for (const run of copy.evidence.runs) {
    run.envChanges = shareableEnv(run.envChanges);
    if (run.oomPicture) run.oomPicture.snapshotPath = run.oomPicture.snapshotPath && snapshotEntry ? snapshotEntry : null;
  }
  return redactor.json(copy);
}
