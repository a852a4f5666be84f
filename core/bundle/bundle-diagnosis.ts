import { maskSecretWords, programNameOnly } from '../diagnose/secrets';
import type { DiagnosisReport } from '../diagnose/report';
import { shortCommand } from '../diagnose/launch-line';
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

/** The evidence with what a redacted bundle leaves out: the user's own variables, credentials in the command, other processes' command lines. */
function scrub(copy: DiagnosisReport): void {
  // What the sentences quote of other processes' command lines, and what each becomes.
  const quoted = new Map<string, string>();
  const named = (command: string | null, program: boolean): string | null => {
    if (command === null) return null;
    const kept = program ? maskSecretWords(command.split(' ')).join(' ') : programNameOnly(command);
    for (const said of [command, shortCommand(command)]) if (said !== kept) quoted.set(said, program ? shortCommand(kept) : kept);
    return kept;
  };
  copy.program.envChanges = shareableEnv(copy.program.envChanges);
  copy.program.argv = maskSecretWords(copy.program.argv);
  copy.evidence.argv = maskSecretWords(copy.evidence.argv);
  for (const p of copy.evidence.environment.processes) p.command = named(p.command, false);
  for (const step of copy.steps) {
    step.envChanges = shareableEnv(step.envChanges);
    step.argv = maskSecretWords(step.argv);
  }
  for (const run of copy.evidence.runs) {
    run.envChanges = shareableEnv(run.envChanges);
    run.argv = maskSecretWords(run.argv);
    for (const p of run.processes ?? []) p.command = named(p.command, p.isProgram);
  }
  // The sentences were made from what is now scrubbed: each quotation is replaced by what the bundle keeps.
  const unquote = (text: string) => [...quoted].reduce((t, [said, kept]) => t.split(said).join(kept), text);
  for (const step of copy.steps) step.findings = step.findings.map(unquote);
  const v = copy.verdict;
  v.sentence = unquote(v.sentence);
  v.cause = unquote(v.cause);
  v.whatToDo = v.whatToDo.map(unquote);
}

/**
 * The report as a bundle carries it: redacted unless asked not to — the user's own variables hidden unless
 * allow-listed, credentials in command lines hidden, other processes named by their program only, every string's
 * user and host names, home folders and GPU UUIDs replaced — and the snapshot named by its entry, not by a path on
 * this machine.
 */
export function shareableDiagnosis(report: DiagnosisReport, redactor: Redactor, snapshotEntry: string | null): DiagnosisReport {
  const copy = JSON.parse(JSON.stringify(report)) as DiagnosisReport;
  delete copy.id;
  for (const run of copy.evidence.runs) if (run.oomPicture) run.oomPicture.snapshotPath = run.oomPicture.snapshotPath && snapshotEntry ? snapshotEntry : null;
  if (!redactor.enabled) return copy;
  scrub(copy);
  return redactor.json(copy);
}
