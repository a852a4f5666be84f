import { spawn } from 'node:child_process';

import { distEntry } from '../paths';

/** What a reader child may take: heap, time, and the size of its answer. */
export interface ChildReadLimits {
  heapMb: number;
  timeoutMs: number;
  answerBytes: number;
}

export class ChildReadError extends Error {
  override readonly name = 'ChildReadError';
}

/**
 * Runs a reader child (dist/main/<entry>) on one file and returns its one-line JSON answer. The child has its own heap
 * limit and a time limit (SIGKILL past it); a child that aborts, is killed or answers too much is a refusal in words,
 * and the host goes on. Under Electron, ELECTRON_RUN_AS_NODE makes its binary a plain Node for the child.
 */
export function readInChild<T>(entry: string, args: string[], what: string, limits: ChildReadLimits): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${limits.heapMb}`, '--stack-size=2048', distEntry(entry), ...args], {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let tooMuch = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, limits.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.answerBytes) {
        tooMuch = true;
        child.kill('SIGKILL');
      } else chunks.push(chunk);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new ChildReadError(`${what} could not be read: its reader could not start (${error.message}).`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) return reject(new ChildReadError(`${what} was not opened: reading it took longer than ${limits.timeoutMs / 1000} s.`));
      if (tooMuch) return reject(new ChildReadError(`${what} was not opened: what it holds is larger than ${Math.round(limits.answerBytes / 2 ** 20)} MiB.`));
      if (code !== 0) {
        const how = signal ? `was killed (${signal})` : code === 134 || code === 133 ? 'ran out of memory or hit a limit of V8' : `exited with ${code}`;
        return reject(
          new ChildReadError(`${what} was not opened: its reader ${how} on it (heap limit ${limits.heapMb} MB), so it is not a file the workbench wrote.`),
        );
      }
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T);
      } catch {
        reject(new ChildReadError(`${what} was not opened: its reader gave no answer.`));
      }
    });
  });
}
