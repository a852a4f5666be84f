import type { ChannelName, ChannelRequest, ChannelResponse, Envelope, WorkbenchApi } from '../../core/api/channels';

interface Bridge {
  invoke(channel: string, request: unknown): Promise<Envelope<unknown>>;
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

/** Electron: the preload's one function. */
function bridgeApi(bridge: Bridge): WorkbenchApi {
  return {
    invoke: async <C extends ChannelName>(channel: C, request: ChannelRequest<C>) => unwrap<ChannelResponse<C>>(await bridge.invoke(channel, request)),
  };
}

/** Browser: the serve host's WebSocket, with the same channel map. Reconnects if the host restarts. */
function socketApi(): WorkbenchApi {
  let socket: WebSocket | null = null;
  let opened: Promise<WebSocket> | null = null;
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: Envelope<unknown>) => void; reject: (e: Error) => void }>();
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
    opened = new Promise((resolve, reject) => {
      current.onopen = () => resolve(current);
      current.onerror = () => reject(new ApiCallError('Cannot reach the workbench host. Is `gpu-workbench serve` still running?', 'DISCONNECTED'));
    });
    current.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as { id: number; envelope: Envelope<unknown> };
      pending.get(message.id)?.resolve(message.envelope);
      pending.delete(message.id);
    };
    current.onclose = () => {
      for (const p of pending.values()) p.reject(new ApiCallError('The connection to the workbench host closed.', 'DISCONNECTED'));
      pending.clear();
      opened = null;
    };
    return opened;
  };

  return {
    invoke: async <C extends ChannelName>(channel: C, request: ChannelRequest<C>) => {
      const ws = await connect();
      const id = nextId++;
      const envelope = await new Promise<Envelope<unknown>>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, channel, request }));
      });
      return unwrap<ChannelResponse<C>>(envelope);
    },
  };
}

export function createApi(): WorkbenchApi {
  const bridge = (window as unknown as { workbenchBridge?: Bridge }).workbenchBridge;
  return bridge ? bridgeApi(bridge) : socketApi();
}
