/**
 * The desktop shell's security checklist (Electron's "Security" tutorial, item by item) as decisions with no
 * Electron import, so that each is tested by what it does: the window's settings, the permission handlers, the
 * navigation and new-window guards, the IPC sender check and the app:// protocol's responses with their headers.
 * electron-main.ts only hands these to Electron.
 */
import { readFile } from 'node:fs/promises';

import { rendererCsp, rendererFile, rendererPage } from '../serve/renderer-files';

/** The renderer's origin: a custom, standard, secure scheme (never file://). */
export const APP_ORIGIN = 'app://workbench';
/** The one page the window loads. */
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`;
/** The app:// scheme as registered before the app is ready. */
export const APP_SCHEME = { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } } as const;

/** The window's web preferences: Node off, context isolation and the sandbox on, no webviews, no experiments. */
export function windowOptions(preload: string) {
  return {
    width: 1400,
    height: 900,
    title: 'GPU Workbench',
    webPreferences: {
      preload,
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
  } as const;
}

/** Whether a URL is one of the app's own pages: app://workbench/…, with no user or password in it. */
export function isAppUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === 'app:' && parsed.host === 'workbench' && !parsed.username && !parsed.password;
}

/** What a session's permission handlers are handed (Electron's Session, structurally). */
export interface PermissionTarget {
  setPermissionRequestHandler(handler: (contents: unknown, permission: string, callback: (granted: boolean) => void) => void): void;
  setPermissionCheckHandler(handler: (contents: unknown, permission: string) => boolean): void;
}

/** Camera, microphone, notifications, geolocation, clipboard reads…: the workbench needs none, so every one is denied. */
export function denyAllPermissions(session: PermissionTarget): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
}

/** A cancellable event, as Electron hands its will-navigate and will-attach-webview listeners one. */
export interface PreventableEvent {
  preventDefault(): void;
}

/** What the guards are set on (Electron's WebContents, structurally). */
export interface GuardedContents {
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
  on(event: 'will-navigate', listener: (event: PreventableEvent, url: string) => void): unknown;
  on(event: 'will-attach-webview', listener: (event: PreventableEvent) => void): unknown;
}

/** Every web contents: no new windows, no navigation away from the app, no webviews. */
export function guardContents(contents: GuardedContents): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-navigate', (event, url) => {
    if (!isAppUrl(url)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/** An IPC call is answered only from the app's own page, in the window's main frame (not an iframe in it). */
export function senderIsOurRenderer(frameUrl: string | undefined, isMainFrame: boolean): boolean {
  return isMainFrame && frameUrl !== undefined && isAppUrl(frameUrl);
}

/** The headers every app:// response carries, a 404 too. */
function baseHeaders(): Record<string, string> {
  return {
    'content-security-policy': rendererCsp(),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  };
}

export interface AppResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

/**
 * The app:// protocol's answer to a URL: the renderer's own files from `dir` only, each with the CSP and the headers
 * serve sends; the page with a fresh style nonce in it and in its policy; anything else a 404.
 */
export async function appResponse(url: string, dir: string): Promise<AppResponse> {
  const headers = baseHeaders();
  const parsed = isAppUrl(url) ? new URL(url) : null;
  const found = parsed ? await rendererFile(dir, parsed.pathname) : null;
  if (!found) return { status: 404, headers, body: 'Not found' };
  if (found.mime.startsWith('text/html')) {
    const page = await rendererPage(found.file);
    return { status: 200, headers: { ...headers, 'content-security-policy': page.csp, 'content-type': found.mime }, body: page.body };
  }
  return { status: 200, headers: { ...headers, 'content-type': found.mime }, body: await readFile(found.file) };
}
