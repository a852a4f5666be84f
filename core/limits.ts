/** The largest source file (or draft) the workbench accepts, in bytes: 16 MiB. */
export const MAX_SOURCE_BYTES = 16 * 1024 * 1024;
