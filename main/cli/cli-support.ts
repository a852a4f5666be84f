/** What the CLI's commands share: how a mistake is told, how output is printed, how an option is read, their services. */
import { InvalidArgumentError } from 'commander';

import { forkLauncher } from '../process/launcher';
import { PlanFileError } from '../services/plan-files';
import { createWorkbench, type Workbench, type WorkbenchOptions } from '../workbench';
import { UsageError } from './usage-error';

export { UsageError } from './usage-error';

/** The value as JSON with --json, else the human text. */
export const print = (json: boolean, value: unknown, human: () => string) => console.log(json ? JSON.stringify(value, null, 2) : human());

/** An option that takes a whole number within bounds. */
export function intOption(name: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${name} must be a whole number`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max}`);
    return n;
  };
}

/** An option that may be given more than once, each value kept in order. */
export const repeatable = (value: string, all: string[]): string[] => [...all, value];

/** Files the user names fail with a message for the user, not a stack trace. */
export async function fromUserFile<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof PlanFileError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The services a command uses, from the same composition root as serve and the desktop app (main/workbench.ts), with
 * the CLI's setting: no warm spare runner, since one command makes one run. The caller disposes it.
 */
export const cliWorkbench = (options: WorkbenchOptions = {}): Workbench => createWorkbench(forkLauncher, { warmSpare: false, ...options });

/** Runs `use` with the CLI's services, and lets their processes go after it, however it ends. */
export async function withWorkbench<T>(use: (workbench: Workbench) => Promise<T>, options: WorkbenchOptions = {}): Promise<T> {
  const workbench = cliWorkbench(options);
  try {
    return await use(workbench);
  } finally {
    await workbench.dispose();
  }
}
