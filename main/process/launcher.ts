import { fork, type ChildProcess } from 'node:child_process';

import { LIFELINE_FD_ENV } from './child-lifetime';

/** A started child process, whichever API started it. */
export interface ChildHandle {
  readonly pid: number | undefined;
  send(message: unknown): void;
  onMessage(handler: (message: unknown) => void): void;
  onExit(handler: (code: number | null, signal: string | null) => void): void;
  /** Signals the child's process group (it leads one: see child-lifetime.ts), or the child alone if it has none yet. */
  kill(signal: NodeJS.Signals): void;
}

/**
 * Signals a child's process group, falling back to the child itself while it lives (a child that has not
 * made its group yet). The one kill path of every launcher. After the child's exit only the group is
 * signalled: its pid may already belong to another process, but not while its group exists.
 */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals, childAlive = true): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    if (!childAlive) return;
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

export interface ProcessLauncher {
  readonly kind: 'fork' | 'utility';
  launch(entry: string, args: string[], name: string): ChildHandle;
}

/** Headless hosts (serve, CLI, tests) start children with child_process.fork. */
export const forkLauncher: ProcessLauncher = {
  kind: 'fork',
  launch(entry, args) {
    const child = fork(entry, args, {
      serialization: 'advanced', // structured clone: Uint8Array travels as bytes, not JSON
      // fd 4: the lifeline. The host only holds it open; when the host dies, however it dies, the child's
      // reaper reads EOF and kills the child's group.
      stdio: ['ignore', 'inherit', 'inherit', 'ipc', 'pipe'],
      env: { ...process.env, [LIFELINE_FD_ENV]: '4' },
      // Its own process group, so a kill also reaches what it started (nvcc and its cicc/ptxas).
      detached: true,
    });
    return groupLeaderHandle(child, child.stdio[4]);
  },
};

/**
 * The handle of a child that leads its own process group and holds one end of a lifeline: once it exits,
 * whatever it left in its group goes too, and the lifeline is let go. `stop` is how SIGTERM is delivered
 * (the fork launcher signals the group; a launcher whose child must leave by itself may close its channel).
 */
export function groupLeaderHandle(
  child: ChildProcess,
  lifelineStream: unknown,
  stop: (signal: NodeJS.Signals) => void = (signal) => signalGroup(child.pid, signal),
): ChildHandle {
  const lifeline = lifelineStream as (NodeJS.WritableStream & { unref?: () => void; destroy?: () => void }) | null;
  lifeline?.on('error', () => undefined);
  lifeline?.unref?.();
  let exited = false;
  child.on('exit', () => {
    exited = true;
    signalGroup(child.pid, 'SIGKILL', false);
    lifeline?.destroy?.();
  });
  return {
    pid: child.pid,
    send: (message) => {
      if (!exited && child.connected) child.send(message as never);
    },
    onMessage: (handler) => child.on('message', handler),
    onExit: (handler) => child.on('exit', (code, signal) => handler(code, signal)),
    kill: (signal) => {
      if (!exited) stop(signal);
    },
  };
}
