import { readFileSync } from 'node:fs';

/**
 * Whether a process still runs. A zombie does not: a child whose host was killed is reparented, and
 * where nothing reaps it (a container's PID 1), kill(pid, 0) still succeeds for it.
 */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}
