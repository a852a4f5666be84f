import { utilityProcess } from 'electron';

import { READER_MEMORY_ENV } from '../../core/readers/reader-protocol';
import { signalGroup, type ChildHandle, type ProcessLauncher } from '../process/launcher';
import type { ReaderLauncher } from '../readers/reader-process';

/** How long a reader's output may stay open after it exits. */
const OUTPUT_AFTER_EXIT_MS = 1_000;

/** The desktop app starts runners and compile workers as Electron utility processes. */
export const utilityLauncher: ProcessLauncher = {
  kind: 'utility',
  launch(entry, args, name): ChildHandle {
    const child = utilityProcess.fork(entry, args, { serviceName: name, stdio: 'inherit' });
    let exited = false;
    let pid: number | undefined;
    child.on('spawn', () => (pid = child.pid));
    child.on('exit', () => {
      exited = true;
      signalGroup(pid, 'SIGKILL', false);
    });
    return {
      get pid() {
        return child.pid;
      },
      send: (message) => {
        if (!exited) child.postMessage(message);
      },
      onMessage: (handler) => child.on('message', handler),
      // utilityProcess reports an exit code only; a crash shows as a non-zero code.
      onExit: (handler) => child.on('exit', (code) => handler(code, null)),
      // utilityProcess.kill() only sends SIGTERM to the child; the pid path signals its whole group (the
      // child leads one: child-lifetime.ts) with the signal asked for, as the fork launcher does.
      kill: (signal) => {
        if (!exited) signalGroup(child.pid, signal);
      },
    };
  },
};

/**
 * The desktop app starts file readers as utility processes too (its packaged binary does not run as Node). The
 * heap limit is V8's; the reader caps its own writable memory, leads a group and dies with the app before it reads.
 */
export const utilityReaderLauncher: ReaderLauncher = (entry, job, limits) => {
  const child = utilityProcess.fork(entry, [job], {
    serviceName: 'gpu-workbench-reader',
    stdio: ['ignore', 'pipe', 'ignore'],
    execArgv: [`--max-old-space-size=${limits.heapMb}`, '--stack-size=2048'],
    env: { ...process.env, [READER_MEMORY_ENV]: String(limits.memoryMb) },
  });
  const closers: ((code: number | null, signal: NodeJS.Signals | null) => void)[] = [];
  let exitCode: number | null | undefined;
  let outputEnded = false;
  let closed = false;
  const close = () => {
    if (closed || exitCode === undefined || !outputEnded) return;
    closed = true;
    for (const handler of closers) handler(exitCode, null);
  };
  child.stdout!.on('end', () => {
    outputEnded = true;
    close();
  });
  child.on('exit', (code) => {
    exitCode = code;
    signalGroup(child.pid, 'SIGKILL', false);
    setTimeout(() => {
      outputEnded = true;
      close();
    }, OUTPUT_AFTER_EXIT_MS).unref();
    close();
  });
  return {
    stdout: child.stdout!,
    kill: () => signalGroup(child.pid, 'SIGKILL'),
    onClose: (handler) => closers.push(handler),
    // A utility process that cannot start ends with an exit code: its close says so.
    onError: () => undefined,
  };
};
