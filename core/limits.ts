/** The largest source file (or draft) the workbench accepts, in bytes: 16 MiB. */
export const MAX_SOURCE_BYTES = 16 * 1024 * 1024;

/** The largest run result file the workbench opens, in bytes: 64 MiB (a full event log is ~17 MB of it). */
export const MAX_RESULT_FILE_BYTES = 64 * 1024 * 1024;
