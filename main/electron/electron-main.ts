import { join } from 'node:path';

import { app, BrowserWindow, ipcMain, protocol, session, type IpcMainEvent, type IpcMainInvokeEvent } from 'electron';

import { checksAnswers, createHandlers, dispatch } from '../host-api';
import { projectRoot, rendererDir } from '../paths';
import { createWorkbench } from '../workbench';
import { useReaderLauncher } from '../readers/reader-process';
import { APP_ENTRY_URL, APP_SCHEME, appResponse, denyAllPermissions, guardContents, senderIsOurRenderer, windowOptions } from './security-policy';
import { utilityLauncher, utilityReaderLauncher } from './utility-launcher';

/**
 * The desktop shell: one window, a sandboxed renderer served from app://workbench (not file://) with the
 * same CSP as serve, every permission denied, and the typed API over IPC from that origin only. What each of
 * those means is decided (and tested) in security-policy.ts; this file hands it to Electron.
 */
useReaderLauncher(utilityReaderLauncher);
const workbench = createWorkbench(utilityLauncher);
const handlers = createHandlers(workbench, 'electron');
// The installed app does not walk every answer against its declaration (a run's event log, a timeline); `npm start` does.
const checkAnswers = checksAnswers(app.isPackaged ? { ...process.env, NODE_ENV: 'production' } : process.env);

app.enableSandbox();
protocol.registerSchemesAsPrivileged([APP_SCHEME]);

const fromOurRenderer = (event: IpcMainInvokeEvent | IpcMainEvent): boolean =>
  senderIsOurRenderer(event.senderFrame?.url, !!event.senderFrame && event.senderFrame === event.sender.mainFrame);

/** app://workbench/<path>: the renderer's own files only, with the CSP and the headers serve sends. */
async function serveRenderer(request: Request): Promise<Response> {
  const { status, headers, body } = await appResponse(request.url, rendererDir());
  return new Response(body, { status, headers });
}

function createWindow(): void {
  // Its web contents is guarded as every one is (web-contents-created, below).
  const window = new BrowserWindow(windowOptions(join(projectRoot(), 'dist/electron/preload.js')));
  void window.loadURL(APP_ENTRY_URL);
}

/** Calls in flight, by window and the renderer's call id: workbench:cancel aborts one. */
const calls = new Map<string, AbortController>();

ipcMain.handle('workbench:invoke', async (event, channel: unknown, request: unknown, callId: unknown) => {
  if (!fromOurRenderer(event)) return { ok: false, error: { code: 'FORBIDDEN', message: 'Refused: the request did not come from the workbench window.' } };
  const id = typeof callId === 'number' && Number.isSafeInteger(callId) ? callId : null;
  const key = `${event.sender.id}:${id}`;
  const controller = new AbortController();
  if (id !== null) calls.set(key, controller);
  const emit = (payload: unknown) => {
    if (!event.sender.isDestroyed()) event.sender.send('workbench:event', id, payload);
  };
  try {
    return await dispatch(handlers, channel, request, { signal: controller.signal, emit }, checkAnswers);
  } finally {
    if (calls.get(key) === controller) calls.delete(key);
  }
});
ipcMain.on('workbench:cancel', (event, callId: unknown) => {
  if (fromOurRenderer(event)) calls.get(`${event.sender.id}:${String(callId)}`)?.abort();
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
  denyAllPermissions(session.defaultSession);
  protocol.handle('app', serveRenderer);
  createWindow();
});
// Every web contents, not the window's alone: no new windows, no navigation away, no webviews.
app.on('web-contents-created', (_event, contents) => guardContents(contents));
// Closing the last window quits; so does Quit (Ctrl+Q), which closes the windows without 'window-all-closed'. Either
// way the app waits for the workbench to stop its children and remove its temporary folders, once, and no longer
// than QUIT_WAIT_MS: the children die with the app in any case (child-lifetime.ts).
const QUIT_WAIT_MS = 10_000;
let disposed = false;
const quitAfterDispose = () => {
  if (disposed) return;
  disposed = true;
  const waited = new Promise((resolve) => setTimeout(resolve, QUIT_WAIT_MS).unref());
  void Promise.race([workbench.dispose(), waited]).finally(() => app.quit());
};
app.on('window-all-closed', quitAfterDispose);
app.on('will-quit', (event) => {
  if (disposed) return;
  event.preventDefault();
  quitAfterDispose();
});
