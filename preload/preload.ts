import { contextBridge, ipcRenderer } from 'electron';

import { workbenchBridge } from './bridge';

/** The renderer's one way to the host: preload/bridge.ts says what it is. */
contextBridge.exposeInMainWorld('workbenchBridge', workbenchBridge(ipcRenderer));
