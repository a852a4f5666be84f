import { app, utilityProcess, type UtilityProcess } from 'electron';

import { READER_MEMORY_ENV, READER_WAIT_ARG } from '../../core/readers/reader-protocol';
import { signalGroup, type ChildHandle, type ProcessLauncher } from '../process/launcher';
import type { ReaderLauncher } from '../readers/reader-process';
import { killWhenSpawned, v8FlagsForUtility } from './utility-child';
import { GoneRouter, watchUtilityExit, type ExitStatus } from './utility-exit';

/** How long a reader's output may stay open after it exits. */
const OUTPUT_AFTER_EXIT_MS = 1_000;

/** Every utility child's end, joined from its `exit` and the app's `child-process-gone` (utility-exit.ts). */
const router = new GoneRouter();
app.on('child-process-gone', (_event, details) => router.route(details));

/**
 * Starts a utility process and reports its end once, as code or signal: the decisions are utility-exit.ts's.
 * `ended` runs first (the group reaped, the process marked gone), then the listeners.
 */
function forkWatched(
  entry: string,
  args: string[],
  options: Parameters<typeof utilityProcess.fork>[2] & { serviceName: string },
  ended: (status: ExitStatus) => void,
): UtilityProcess {
  const child = utilityProcess.fork(entry, args, options);
  // Emitted for a V8 fatal error in the child (its 'exit' follows): unheard, an EventEmitter's 'error' would throw
  // in the app's main process.
  child.on('error', () => undefined);
  const watch = watchUtilityExit((status) => {
    router.forget(options.serviceName);
    ended(status);
  });
  router.watch(options.serviceName, watch);
  child.on('exit', (code) => watch.exited(code));
  return child;
}

/** The desktop app starts runners and compile workers as Electron utility processes. */
export const utilityLauncher: ProcessLauncher = {
  kind: 'utility',
  launch(entry, args, name): ChildHandle {
    let exited = false;
    let pid: number | undefined;
    const exitHandlers: ((code: number | null, signal: string | null) => void)[] = [];
    const child = forkWatched(entry, args, { serviceName: router.serviceName(name), stdio: 'inherit' }, ({ code, signal }) => {
      exited = true;
      signalGroup(pid, 'SIGKILL', false);
      for (const handler of exitHandlers) handler(code, signal);
    });
    child.on('spawn', () => (pid = child.pid));
    // utilityProcess.kill() only sends SIGTERM to the child; the pid path signals its whole group (the child leads
    // one: child-lifetime.ts) with the signal asked for, as the fork launcher does, once the child has a pid.
    const kill = killWhenSpawned(child, (target, signal) => signalGroup(target, signal));
    return {
      get pid() {
        return child.pid;
      },
      send: (message) => {
        if (!exited) child.postMessage(message);
      },
      onMessage: (handler) => child.on('message', handler),
      onExit: (handler) => exitHandlers.push(handler),
      kill: (signal) => {
        if (!exited) kill(signal);
      },
    };
  },
};

/**
 * The desktop app starts file readers as utility processes too (its packaged binary does not run as Node). The
 * heap limit is V8's; the reader caps its own writable memory, leads a group and dies with the app before it reads.
 */
export const utilityReaderLauncher: ReaderLauncher = (entry, job, limits, waits) => {
  const closers: ((code: number | null, signal: NodeJS.Signals | null) => void)[] = [];
  let status: ExitStatus | undefined;
  let outputEnded = false;
  let closed = false;
  const close = () => {
    if (closed || status === undefined || !outputEnded) return;
    closed = true;
    for (const handler of closers) handler(status.code, status.signal);
  };
  let pid: number | undefined;
  const child = forkWatched(
    entry,
    waits ? [job, READER_WAIT_ARG] : [job],
    {
      serviceName: router.serviceName('reader'),
      stdio: ['ignore', 'pipe', 'ignore'],
      execArgv: v8FlagsForUtility([`--max-old-space-size=${limits.heapMb}`, '--stack-size=2048']),
      env: { ...process.env, [READER_MEMORY_ENV]: String(limits.memoryMb) },
    },
    (ended) => {
      status = ended;
      signalGroup(pid, 'SIGKILL', false);
      setTimeout(() => {
        outputEnded = true;
        close();
      }, OUTPUT_AFTER_EXIT_MS).unref();
      close();
    },
  );
  // A kill asked before the process has a pid (Electron gives none until 'spawn') is carried out once it has one.
  const killGroup = killWhenSpawned(child, (target, signal) => signalGroup(target, signal));
  const kill = () => killGroup('SIGKILL');
  child.on('spawn', () => (pid = child.pid));
  child.stdout!.on('end', () => {
    outputEnded = true;
    close();
  });
  return {
    stdout: child.stdout!,
    kill,
    onClose: (handler) => closers.push(handler),
    // A utility process that cannot start ends with an exit code (or a launch-failed gone): its close says so.
    onError: () => undefined,
    go: () => child.postMessage('go'),
  };
};
