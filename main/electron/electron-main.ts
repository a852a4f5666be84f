import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { app, BrowserWindow, ipcMain, protocol, session, type IpcMainEvent, type IpcMainInvokeEvent } from 'electron';

import { createHandlers, dispatch } from '../host-api';
import { projectRoot, rendererDir } from '../paths';
import { rendererCsp, rendererFile, rendererPage } from '../serve/renderer-files';
import { createWorkbench } from '../workbench';
import { useReaderLauncher } from '../readers/reader-process';
import { utilityLauncher, utilityReaderLauncher } from './utility-launcher';

/**
 * The desktop shell: one window, a sandboxed renderer served from app://workbench (not file://) with the
 * same CSP as serve, every permission denied, and the typed API over IPC from that origin only.
 */
export const APP_ORIGIN = 'app://workbench';
useReaderLauncher(utilityReaderLauncher);
const workbench = createWorkbench(utilityLauncher);
const handlers = createHandlers(workbench, 'electron');

app.enableSandbox();
protocol.registerSchemesAsPrivileged([{ scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } }]);

function senderIsOurRenderer(event: IpcMainInvokeEvent | IpcMainEvent): boolean {
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
  if (found.mime.startsWith('text/html')) {
    const page = await rendererPage(found.file);
    return new Response(page.body, { status: 200, headers: { ...headers, 'content-security-policy': page.csp, 'content-type': found.mime } });
  }
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

/** Calls in flight, by window and the renderer's call id: workbench:cancel aborts one. */
const calls = new Map<string, AbortController>();

ipcMain.handle('workbench:invoke', async (event, channel: unknown, request: unknown, callId: unknown) => {
  if (!senderIsOurRenderer(event)) return { ok: false, error: { code: 'FORBIDDEN', message: 'Refused: the request did not come from the workbench window.' } };
  const id = typeof callId === 'number' && Number.isSafeInteger(callId) ? callId : null;
  const key = `${event.sender.id}:${id}`;
  const controller = new AbortController();
  if (id !== null) calls.set(key, controller);
  const emit = (payload: unknown) => {
    if (!event.sender.isDestroyed()) event.sender.send('workbench:event', id, payload);
  };
  try {
    return await dispatch(handlers, channel, request, { signal: controller.signal, emit });
  } finally {
    if (calls.get(key) === controller) calls.delete(key);
  }
});
ipcMain.on('workbench:cancel', (event, callId: unknown) => {
  if (senderIsOurRenderer(event)) calls.get(`${event.sender.id}:${String(callId)}`)?.abort();
});

void app.whenReady().then(() => {
  // A window that goes away or loads again cancels what it asked for: the new page numbers its calls afresh.
  app.on('web-contents-created', (_e, contents) => {
    const id = contents.id;
    const cancelAll = () => {
      for (const [key, call] of calls) if (key.startsWith(`${id}:`)) call.abort();
    };
    contents.once('destroyed', cancelAll);
    contents.on('did-start-navigation', (details) => {
      if (details.isMainFrame && !details.isSameDocument) cancelAll();
    });
    contents.on('render-process-gone', cancelAll);
  });
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
