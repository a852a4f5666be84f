import { fork } from 'node:child_process';

/** A started child process, whichever API started it. */
export interface ChildHandle {
  readonly pid: number | undefined;
  send(message: unknown): void;
  onMessage(handler: (message: unknown) => void): void;
  onExit(handler: (code: number | null, signal: string | null) => void): void;
  kill(signal: NodeJS.Signals): void;
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
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // Its own process group, so a kill also reaches what it started (nvcc and its cicc/ptxas).
      detached: true,
    });
    let exited = false;
    child.on('exit', () => (exited = true));
    return {
      pid: child.pid,
      send: (message) => {
        if (!exited && child.connected) child.send(message as never);
      },
      onMessage: (handler) => child.on('message', handler),
      onExit: (handler) => child.on('exit', (code, signal) => handler(code, signal)),
      kill: (signal) => {
        if (exited) return;
        try {
          process.kill(-child.pid!, signal);
        } catch {
          child.kill(signal);
        }
      },
    };
  },
};
