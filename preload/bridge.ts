import type { ChannelName, ChannelRequest, Envelope } from '../core/api/channels';

/** The part of ipcRenderer the bridge uses (Electron's IpcRenderer, structurally: the bridge is tested without it). */
export interface BridgeIpc {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  send(channel: string, ...args: unknown[]): void;
  on(channel: string, listener: (event: unknown, callId: number, payload: unknown) => void): unknown;
}

/**
 * What the preload exposes to the renderer: exactly one typed call, with its cancel and its event stream. Invoke a
 * channel of the typed API (with an id of the renderer's choosing), cancel that call, hear its events. Nothing of
 * Electron crosses: no ipcRenderer, no IPC event (whose `sender` could reach back), only the values.
 */
export function workbenchBridge(ipc: BridgeIpc) {
  return {
    invoke: (channel: ChannelName, request: ChannelRequest<ChannelName>, callId: number): Promise<Envelope<unknown>> =>
      ipc.invoke('workbench:invoke', channel, request, callId) as Promise<Envelope<unknown>>,
    cancel: (callId: number): void => ipc.send('workbench:cancel', callId),
    onEvent: (listener: (callId: number, event: unknown) => void): void => {
      ipc.on('workbench:event', (_event, callId, payload) => listener(callId, payload));
    },
  };
}
