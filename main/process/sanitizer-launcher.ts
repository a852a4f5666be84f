import { spawn } from 'node:child_process';

import { outsideAsar } from '../paths';
import { STAY_IN_GROUP_ENV } from './child-lifetime';
import { groupLeaderHandle, signalGroup, type ChildHandle, type ProcessLauncher } from './launcher';

/**
 * The tool leads the group; a reaper in it, reading the host's end of fd 3, kills the group when the host is
 * gone. The reaper holds none of the tool's output pipes (nor the IPC channel on fd 4), so they close with the tool.
 */
export const GROUP_REAPER = '{ cat >/dev/null; kill -KILL 0; } <&3 >/dev/null 2>&1 4<&- & exec 3<&-; exec "$@"';

/**
 * Starts a child (the workbench's runner) as compute-sanitizer's target: the tool is the process the host
 * holds, the child talks to the host over the IPC channel the tool passes through (fd 4), and both share one
 * process group with a reaper tied to the host. A stop asks the child to leave (the channel closes, it exits
 * by itself), so the tool can write its report; a kill ends the whole group.
 */
export function sanitizerLauncher(
  sanitizerPath: string,
  sanitizerArgs: string[],
  onOutput: (chunk: Buffer) => void,
  /** The tool's own exit (86 when it found something), as distinct from how the runner under it ended. */
  onToolExit?: (code: number | null, signal: string | null) => void,
  /** The Node.js the tool starts the runner with (tool-node.ts): this process's own, except under Electron. */
  node: string = process.execPath,
): ProcessLauncher {
  return {
    kind: 'fork',
    launch(entry, args, name): ChildHandle {
      const child = spawn(
        '/bin/sh',
        ['-c', GROUP_REAPER, `gpu-workbench-${name.replace(/\W+/g, '-')}`, sanitizerPath, ...sanitizerArgs, node, outsideAsar(entry), ...args],
        {
          stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'ipc'],
          serialization: 'advanced',
          env: { ...process.env, [STAY_IN_GROUP_ENV]: '1' },
          detached: true,
        },
      );
      child.stdout!.on('data', onOutput);
      child.stderr!.on('data', onOutput);
      if (onToolExit) child.once('exit', onToolExit);
      // SIGTERM: the child leaves on its own when its channel closes, and the tool then writes its report. A channel
      // already closed means the child has left (it exited after a sticky error, or crashed): the tool is writing
      // its report now, and a signal would cut it short. The caller's grace ends in SIGKILL if it never finishes.
      return groupLeaderHandle(child, child.stdio[3], (signal) => {
        if (signal !== 'SIGTERM') signalGroup(child.pid, signal);
        else if (child.connected) child.disconnect();
      });
    },
  };
}
