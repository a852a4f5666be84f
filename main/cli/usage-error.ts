/** A mistake in the command line or in a file it names: one line for the user, exit 64 (cli.ts main). */
export class UsageError extends Error {}
