import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { app, BrowserWindow, ipcMain, protocol, session, type IpcMainInvokeEvent } from 'electron';

import { createHandlers, dispatch } from '../host-api';
import { projectRoot, rendererDir } from '../paths';
import { rendererCsp, rendererFile } from '../serve/renderer-files';
import { createWorkbench } from '../workbench';
import { utilityLauncher } from './utility-launcher';

/**
 * The desktop shell: one window, a sandboxed renderer served from app://workbench (not file://) with the
 * same CSP as serve, every permission denied, and the typed API over IPC from that origin only.
 */
export const APP_ORIGIN = 'app://workbench';
const workbench = createWorkbench(utilityLauncher);
const handlers = createHandlers(workbench, 'electron');

app.enableSandbox();
protocol.registerSchemesAsPrivileged([{ scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } }]);

function senderIsOurRenderer(event: IpcMainInvokeEvent): boolean {
  const url = event.senderFrame?.url ?? '';
  return url.startsWith(`${APP_ORIGIN}/`) && event.senderFrame === event.sender.mainFrame;
}

/** app://workbench/<path>: the renderer's own files only, with the CSP and the headers serve sends. */
async function serveRenderer(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const headers = {
    'content-security-policy': rendererCsp(),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  };
  const found = url.host === 'workbench' ? await rendererFile(rendererDir(), url.pathname) : null;
  if (!found) return new Response('Not found', { status: 404, headers });
  return new Response(await readFile(found.file), { status: 200, headers: { ...headers, 'content-type': found.mime } });
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
      nodeIntegrationInWorker: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
    },
  });
  window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  window.webContents.on('will-navigate', (event, url) => {
    if (!url.startsWith(`${APP_ORIGIN}/`)) event.preventDefault();
  });
  window.webContents.on('will-attach-webview', (event) => event.preventDefault());
  void window.loadURL(`${APP_ORIGIN}/index.html`);
}

ipcMain.handle('workbench:invoke', async (event, channel: unknown, request: unknown) => {
  if (!senderIsOurRenderer(event)) return { ok: false, error: { code: 'FORBIDDEN', message: 'Refused: the request did not come from the workbench window.' } };
  return dispatch(handlers, channel, request);
});

void app.whenReady().then(() => {
  // Camera, microphone, notifications, geolocation, clipboard reads…: the workbench needs none.
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
  protocol.handle('app', serveRenderer);
  createWindow();
});
app.on('web-contents-created', (_event, contents) => {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
});
app.on('window-all-closed', () => {
  void workbench.dispose().finally(() => app.quit());
});
