import { utilityProcess } from 'electron';

import { signalGroup, type ChildHandle, type ProcessLauncher } from '../process/launcher';

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
