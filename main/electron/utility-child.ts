/**
 * What a utility child needs beside its exit (utility-exit.ts), with no Electron import so that it is tested here:
 * the options V8 reads, and a kill that is not lost before the child has a pid.
 */

/**
 * V8's flags for a utility process. Its `execArgv` becomes Chromium switches, of which Node reads only a few (inspect
 * and deprecation options) and V8 only `--js-flags`: `--max-old-space-size` given as it is under fork would be
 * dropped, and the reader's heap left unlimited. Electron's own tests pass it as `--js-flags=--max-old-space-size=…`.
 */
export function v8FlagsForUtility(flags: string[]): string[] {
  return flags.length ? [`--js-flags=${flags.join(' ')}`] : [];
}

/** The part of Electron's UtilityProcess a kill needs: its pid (none before 'spawn') and that event. */
export interface SpawningChild {
  readonly pid: number | undefined;
  once(event: 'spawn', listener: () => void): unknown;
}

/**
 * A kill of a child's process group that waits for the child's pid when it has none yet (Electron gives none until
 * 'spawn'): a stop asked in that moment would otherwise be lost, and the stop's wait for the exit never end. Of the
 * signals asked before the spawn, the strongest goes (SIGKILL over SIGTERM).
 */
export function killWhenSpawned(child: SpawningChild, signalGroup: (pid: number, signal: NodeJS.Signals) => void): (signal: NodeJS.Signals) => void {
  let asked: NodeJS.Signals | null = null;
  child.once('spawn', () => {
    if (asked && child.pid !== undefined) signalGroup(child.pid, asked);
  });
  return (signal) => {
    if (child.pid !== undefined) signalGroup(child.pid, signal);
    else if (asked !== 'SIGKILL') asked = signal;
  };
}
