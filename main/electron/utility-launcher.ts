import { utilityProcess } from 'electron';

import type { ChildHandle, ProcessLauncher } from '../process/launcher';

/** The desktop app starts runners and compile workers as Electron utility processes. */
export const utilityLauncher: ProcessLauncher = {
  kind: 'utility',
  launch(entry, args, name): ChildHandle {
    const child = utilityProcess.fork(entry, args, { serviceName: name, stdio: 'inherit' });
    let exited = false;
    child.on('exit', () => (exited = true));
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
      kill: () => {
        if (!exited) child.kill();
      },
    };
  },
};
