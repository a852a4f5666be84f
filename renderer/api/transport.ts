import {
  ANSWERED_AFTER_CANCEL,
  CANCEL_ANSWER_GRACE_MS,
  defaultCallTimeoutMs,
  type CallOptions,
  type ChannelName,
  type ChannelRequest,
  type ChannelResponse,
  type Envelope,
  type WorkbenchApi,
} from '../../core/api/channels';
import { decodeMessageFrame, TypedWireError } from '../../core/api/typed-wire';

interface Bridge {
  invoke(channel: string, request: unknown, callId: number): Promise<Envelope<unknown>>;
  cancel(callId: number): void;
  onEvent(listener: (callId: number, event: unknown) => void): void;
}

/** What each transport does: start a call under an id, cancel it, and pass its events on. */
interface Wire {
  start(id: number, channel: ChannelName, request: unknown): Promise<Envelope<unknown>>;
  /** Cancels a call on the host; `keepAnswer` when the host answers a cancel with its own result (ANSWERED_AFTER_CANCEL). */
  cancel(id: number, keepAnswer?: boolean): void;
}

export class ApiCallError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const unwrap = <T>(envelope: Envelope<unknown>): T => {
  if (envelope.ok) return envelope.value as T;
  throw new ApiCallError(envelope.error.message, envelope.error.code);
};

/**
 * The renderer's side of the channel map over any wire: every call has a time limit (its own, or one
 * above the host's limits for that channel), can be cancelled by its caller, and hands its events on.
 * A call that times out or is cancelled is cancelled on the host too.
 */
function callsOver(wire: Wire, listeners: Map<number, (event: unknown) => void>): WorkbenchApi {
  let nextId = 1;
  return {
    invoke: async <C extends ChannelName>(channel: C, request: ChannelRequest<C>, options: CallOptions<C> = {}) => {
      const id = nextId++;
      if (options.onEvent) listeners.set(id, options.onEvent as (event: unknown) => void);
      const limit = options.timeoutMs ?? defaultCallTimeoutMs(channel, request);
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const stopped = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            wire.cancel(id);
            reject(new ApiCallError(`The workbench host did not answer ${channel} within ${Math.round(limit / 1000)} s; the call was cancelled.`, 'TIMEOUT'));
          }, limit);
          options.signal?.addEventListener(
            'abort',
            () => {
              wire.cancel(id, ANSWERED_AFTER_CANCEL.has(channel));
              const rejectCancelled = () => reject(new ApiCallError(`${channel} was cancelled.`, 'CANCELLED'));
              // The host's own answer to the cancel, when the channel gives one; else (or past the grace) cancelled.
              if (!ANSWERED_AFTER_CANCEL.has(channel)) return rejectCancelled();
              clearTimeout(timer);
              timer = setTimeout(rejectCancelled, CANCEL_ANSWER_GRACE_MS);
            },
            { once: true },
          );
          if (options.signal?.aborted) reject(new ApiCallError(`${channel} was cancelled.`, 'CANCELLED'));
        });
        return unwrap<ChannelResponse<C>>(await Promise.race([wire.start(id, channel, request), stopped]));
      } finally {
        clearTimeout(timer);
        listeners.delete(id);
      }
    },
  };
}

/** Electron: the preload's call, cancel and event stream. */
function bridgeApi(bridge: Bridge): WorkbenchApi {
  const listeners = new Map<number, (event: unknown) => void>();
  bridge.onEvent((id, event) => listeners.get(id)?.(event));
  return callsOver({ start: (id, channel, request) => bridge.invoke(channel, request, id), cancel: (id) => bridge.cancel(id) }, listeners);
}

/** Browser: the serve host's WebSocket, with the same channel map. Reconnects if the host restarts. */
function socketApi(): WorkbenchApi {
  let socket: WebSocket | null = null;
  let opened: Promise<WebSocket> | null = null;
  const pending = new Map<number, { resolve: (v: Envelope<unknown>) => void; reject: (e: Error) => void }>();
  const listeners = new Map<number, (event: unknown) => void>();
  const token = new URLSearchParams(location.search).get('token');
  // Out of the address bar and the history once read: the HttpOnly cookie the server set carries it from here.
  if (token) {
    const rest = new URLSearchParams(location.search);
    rest.delete('token');
    history.replaceState(history.state, '', `${location.pathname}${rest.size ? `?${rest}` : ''}${location.hash}`);
  }

  const connect = (): Promise<WebSocket> => {
    if (opened && socket && socket.readyState <= WebSocket.OPEN) return opened;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api${token ? `?token=${encodeURIComponent(token)}` : ''}`;
    socket = new WebSocket(url);
    const current = socket;
    current.binaryType = 'arraybuffer';
    opened = new Promise((resolve, reject) => {
      current.onopen = () => resolve(current);
      current.onerror = () => reject(new ApiCallError('Cannot reach the workbench host. Is `gpu-workbench serve` still running?', 'DISCONNECTED'));
    });
    current.onmessage = (event) => {
      let message: { id?: unknown; envelope?: Envelope<unknown>; event?: unknown };
      try {
        // A binary frame is an answer that holds typed arrays (a timeline's columns): they come back viewing its bytes.
        message = (typeof event.data === 'string' ? JSON.parse(event.data) : decodeMessageFrame(new Uint8Array(event.data as ArrayBuffer))) as typeof message;
      } catch (error) {
        if (error instanceof TypedWireError && typeof error.messageId === 'number') {
          const envelope: Envelope<unknown> = { ok: false, error: { code: 'BAD_ANSWER', message: `The host's answer could not be read: ${error.message}.` } };
          message = { id: error.messageId, envelope };
        } else return;
      }
      if (typeof message.id !== 'number') return;
      if ('event' in message) {
        listeners.get(message.id)?.(message.event);
        return;
      }
      if (message.envelope) pending.get(message.id)?.resolve(message.envelope);
      pending.delete(message.id);
    };
    current.onclose = () => {
      for (const p of pending.values()) p.reject(new ApiCallError('The connection to the workbench host closed.', 'DISCONNECTED'));
      pending.clear();
      opened = null;
    };
    return opened;
  };

  return callsOver(
    {
      start: async (id, channel, request) => {
        const ws = await connect();
        return new Promise<Envelope<unknown>>((resolve, reject) => {
          pending.set(id, { resolve, reject });
          ws.send(JSON.stringify({ id, channel, request }));
        });
      },
      cancel: (id, keepAnswer) => {
        if (!keepAnswer) pending.delete(id);
        if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ id, cancel: true }));
      },
    },
    listeners,
  );
}

export function createApi(): WorkbenchApi {
  const bridge = (window as unknown as { workbenchBridge?: Bridge }).workbenchBridge;
  return bridge ? bridgeApi(bridge) : socketApi();
}
