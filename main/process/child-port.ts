import type { ChildProtocol, ChildReply } from '../../core/process/child-reply';
import type { CudaErrorInfo } from '../../core/runner/run-result';

/**
 * The child side of a supervised process: the same code runs under child_process.fork (headless,
 * messages through process.send) and Electron's utilityProcess (messages through process.parentPort).
 */
export interface ChildPort {
  post(message: unknown): void;
  onMessage(handler: (message: unknown) => void): void;
}

interface ParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}

export function childPort(): ChildPort {
  const parentPort = (process as unknown as { parentPort?: ParentPort }).parentPort;
  if (parentPort) {
    return {
      post: (message) => parentPort.postMessage(message),
      onMessage: (handler) => parentPort.on('message', (event) => handler(event.data)),
    };
  }
  if (!process.send) throw new Error('this process was not started by the workbench (no IPC channel)');
  // A host that dies without stopping us (SIGKILL, a crash) closes the channel: don't linger.
  process.on('disconnect', () => process.exit(0));
  return {
    post: (message) => process.send!(message),
    onMessage: (handler) => process.on('message', handler),
  };
}

/**
 * How long a child under Electron's utilityProcess waits, after its last message, for the host to end it. Its port
 * has no delivery callback and closes at the exit, dropping what the host has not read yet; the host ends a child as
 * soon as it reads that it is leaving (supervised-process.ts), so this is only for a host that never does.
 */
export const LEAVE_WAIT_MS = 2000;

/** Sends the last message (one that says the child leaves: a sticky error) and exits once it has left the process. */
export function postAndExit(port: ChildPort, message: unknown, code: number): void {
  if (process.send) {
    process.send(message as never, undefined, {}, () => process.exit(code));
    return;
  }
  port.post(message);
  setTimeout(() => process.exit(code), LEAVE_WAIT_MS);
}

/**
 * A child's side of its protocol, typed: ready with its status, a request's result (checked against what
 * the protocol says that request answers), or an error. Every message is the one envelope (ChildReply).
 */
export function replies<P extends ChildProtocol, Status extends object>(port: ChildPort) {
  const send = (reply: ChildReply) => port.post(reply);
  return {
    ready: (status: Status) => send({ type: 'ready', status }),
    ok: <K extends keyof P & string>(id: number, _type: K, result: P[K]['result']) => send({ type: 'ok', id, result }),
    error: (id: number | null, error: CudaErrorInfo, sticky = false) => send({ type: 'error', id, error, sticky }),
  };
}
