import { fork } from 'node:child_process';

import { signalGroup, type ChildHandle, type ProcessLauncher } from '../../main/process/launcher';

/**
 * Places a child as Electron's utilityProcess does — in the host's own process group, with no lifeline
 * pipe — and stops it through the same pid-based path the utility launcher uses (signalGroup). The
 * Electron binary cannot be downloaded here; this is how the lifecycle suite runs that path for real.
 */
export const inHostGroupLauncher: ProcessLauncher = {
  kind: 'utility',
  launch(entry, args): ChildHandle {
    const env = { ...process.env };
    delete env['GPU_WORKBENCH_LIFELINE_FD'];
    const child = fork(entry, args, { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env });
    let exited = false;
    const pid = child.pid;
    child.on('exit', () => {
      exited = true;
      signalGroup(pid, 'SIGKILL', false);
    });
    return {
      pid,
      send: (message) => {
        if (!exited && child.connected) child.send(message as never);
      },
      onMessage: (handler) => child.on('message', handler),
      onExit: (handler) => child.on('exit', (code, signal) => handler(code, signal)),
      kill: (signal) => {
        if (!exited) signalGroup(pid, signal);
      },
    };
  },
};
