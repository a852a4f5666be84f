import { contextBridge, ipcRenderer } from 'electron';

import type { ChannelName, ChannelRequest, Envelope } from '../core/api/channels';

/**
 * Exposes exactly one typed call to the renderer, with its cancel and its event stream: invoke a channel
 * of the typed API (with an id of the renderer's choosing), cancel that call, and hear its events.
 */
contextBridge.exposeInMainWorld('workbenchBridge', {
  invoke: (channel: ChannelName, request: ChannelRequest<ChannelName>, callId: number): Promise<Envelope<unknown>> =>
    ipcRenderer.invoke('workbench:invoke', channel, request, callId),
  cancel: (callId: number): void => ipcRenderer.send('workbench:cancel', callId),
  onEvent: (listener: (callId: number, event: unknown) => void): void => {
    ipcRenderer.on('workbench:event', (_event, callId: number, payload: unknown) => listener(callId, payload));
  },
});
