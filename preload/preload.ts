import { contextBridge, ipcRenderer } from 'electron';

import type { ChannelName, ChannelRequest, Envelope } from '../core/api/channels';

/** Exposes exactly one function to the renderer: invoke a channel of the typed API. */
contextBridge.exposeInMainWorld('workbenchBridge', {
  invoke: (channel: ChannelName, request: ChannelRequest<ChannelName>): Promise<Envelope<unknown>> => ipcRenderer.invoke('workbench:invoke', channel, request),
});
