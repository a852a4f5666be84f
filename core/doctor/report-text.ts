import type { DoctorArea, DoctorCheck } from '../discovery';

/** The words a doctor report is shown with, shared by the CLI and the UI. */

export const AREA_TITLES: Record<DoctorArea, string> = {
  driver: 'Driver and libraries',
  compilers: 'Compilers and toolkits',
  environment: 'Environment',
  gpu: 'GPU state',
  processes: 'Processes on the GPU',
};

/** A one-line count for the top of a report: "2 problems, 1 warning, 3 not checked". */
export function summarizeChecks(checks: readonly DoctorCheck[]): string {
  const n = (s: DoctorCheck['status']) => checks.filter((c) => c.status === s).length;
  const parts = [
    n('fail') && `${n('fail')} ${n('fail') === 1 ? 'problem' : 'problems'}`,
    n('warn') && `${n('warn')} ${n('warn') === 1 ? 'warning' : 'warnings'}`,
    n('not-run') && `${n('not-run')} not checked`,
    `${n('ok')} passed`,
  ].filter(Boolean);
  return parts.join(', ');
}
