import { REQUIRED_METRICS } from './profile-build';

/** The sections the profile reads, and the global-traffic counters beside them. */
export const NCU_SECTIONS = ['SpeedOfLight', 'Occupancy', 'LaunchStats', 'WarpStateStats', 'SourceCounters', 'MemoryWorkloadAnalysis'];
export const NCU_METRICS = [
  ...REQUIRED_METRICS,
  'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum',
  'l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum',
  'l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum',
  'l1tex__t_requests_pipe_lsu_mem_global_op_st.sum',
];
/**
 * ncu's arguments for one launch of `entry`: the launch after `skip` of the same kernel, the sections, a report file,
 * and its source page (CUDA lines with their SASS) printed as CSV into `sourceLog` while it profiles — printing it
 * then costs nothing, where exporting it from the report afterwards takes ncu another second.
 */
export function ncuArguments(entry: string, skip: number, reportBase: string, sourceLog: string): string[] {
  const escaped = entry.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [
    ...['--kernel-name-base', 'function', '--kernel-name', `regex:^${escaped}$`, '--launch-skip', String(skip), '--launch-count', '1'],
    ...NCU_SECTIONS.flatMap((s) => ['--section', s]),
    ...['--metrics', NCU_METRICS.join(','), '--import-source', 'no', '--force-overwrite', '--export', reportBase],
    ...['--csv', '--page', 'source', '--print-source', 'cuda,sass', '--log-file', sourceLog],
  ];
}

/**
 * ncu's arguments for a program the user runs: every process it starts followed, the first `count` kernel launches
 * after `skip` (of those whose function name matches `kernel`, a regular expression, when given), each profiled with
 * the same sections and metrics as a plan's launch, into a report; then the program and its arguments, after `--`.
 */
export function ncuProgramArguments(options: { kernel: string | null; skip: number; count: number; reportBase: string; command: string[] }): string[] {
  return [
    ...['--target-processes', 'all', '--kernel-name-base', 'function'],
    ...(options.kernel ? ['--kernel-name', `regex:${options.kernel}`] : []),
    ...['--launch-skip', String(options.skip), '--launch-count', String(options.count)],
    ...NCU_SECTIONS.flatMap((s) => ['--section', s]),
    ...['--metrics', NCU_METRICS.join(','), '--import-source', 'no', '--force-overwrite', '--export', options.reportBase],
    '--',
    ...options.command,
  ];
}

/** ncu's arguments to print one result's source page from a report (the `index`-th profiled launch). */
export function ncuSourcePageArguments(report: string, index: number): string[] {
  return ['--import', report, '--launch-skip', String(index), '--launch-count', '1', '--csv', '--page', 'source', '--print-source', 'cuda,sass'];
}
