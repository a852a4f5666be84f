import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { app, BrowserWindow, ipcMain, type IpcMainInvokeEvent } from 'electron';

import { createHandlers, dispatch } from '../host-api';
import { projectRoot, rendererDir } from '../paths';
import { createWorkbench } from '../workbench';
import { utilityLauncher } from './utility-launcher';

/** The desktop shell: one window, a sandboxed renderer, and the typed API over IPC. Nothing else. */
const workbench = createWorkbench(utilityLauncher);
const handlers = createHandlers(workbench, 'electron');
const rendererUrl = pathToFileURL(join(rendererDir(), 'index.html')).href;

function senderIsOurRenderer(event: IpcMainInvokeEvent): boolean {
  const url = event.senderFrame?.url ?? '';
  return url === rendererUrl || url.startsWith(`${rendererUrl}?`) || url.startsWith(`${rendererUrl}#`);
}

function createWindow(): void {
  const window = new BrowserWindow({
    width: 1400,
    height: 900,
    title: 'GPU Workbench',
    webPreferences: {
      preload: join(projectRoot(), 'dist/electron/preload.js'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    },
  });
  window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  window.webContents.on('will-navigate', (event, url) => {
    if (url !== rendererUrl) event.preventDefault();
  });
  void window.loadURL(rendererUrl);
}

ipcMain.handle('workbench:invoke', async (event, channel: unknown, request: unknown) => {
  if (!senderIsOurRenderer(event)) return { ok: false, error: { code: 'FORBIDDEN', message: 'Refused: the request did not come from the workbench window.' } };
  return dispatch(handlers, channel, request);
});

void app.whenReady().then(createWindow);
app.on('window-all-closed', () => {
  void workbench.dispose().finally(() => app.quit());
});
