import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import {
  APP_ENTRY_URL,
  APP_SCHEME,
  appResponse,
  denyAllPermissions,
  guardContents,
  isAppUrl,
  senderIsOurRenderer,
  windowOptions,
  type PreventableEvent,
} from '../../main/electron/security-policy';
import { STYLE_NONCE_PLACEHOLDER } from '../../main/serve/renderer-files';
import { workbenchBridge } from '../../preload/bridge';
import { ROOT } from '../helpers/cli';

// Electron's security checklist, item by item, held by what the shell's decisions do (main/electron/security-policy.ts,
// preload/bridge.ts): the Electron binary cannot be downloaded here, and electron-main.ts only hands these to it.

/** A renderer folder as the bundle writes it, and one file beside it that must never be served. */
const base = mkdtempSync(join(tmpdir(), 'wb-app-scheme-'));
const dir = join(base, 'renderer');
mkdirSync(dir);
writeFileSync(join(dir, 'index.html'), `<!doctype html><style nonce="${STYLE_NONCE_PLACEHOLDER}"></style><script src="app.js"></script>`);
writeFileSync(join(dir, 'app.js'), 'console.log(1)');
writeFileSync(join(base, 'secret.txt'), 'not for the renderer');
after(() => rmSync(base, { recursive: true, force: true }));

/** A web contents' guards, as set on it, fired by hand. */
function guardedContents() {
  const events = new EventEmitter();
  let openHandler: ((details: { url: string }) => { action: 'deny' }) | null = null;
  guardContents({
    setWindowOpenHandler: (handler) => (openHandler = handler),
    on: (event: string, listener: (...args: never[]) => void) => events.on(event, listener as (...args: unknown[]) => void),
  });
  const fire = (event: string, ...args: unknown[]): boolean => {
    let prevented = false;
    const e: PreventableEvent = { preventDefault: () => (prevented = true) };
    events.emit(event, e, ...args);
    return prevented;
  };
  return {
    open: (url: string) => openHandler!({ url }),
    navigate: (url: string) => fire('will-navigate', url),
    attachWebview: () => fire('will-attach-webview'),
  };
}

test('1-4: only local content, over a custom protocol, with Node off, context isolation and the sandbox on', () => {
  assert.equal(APP_ENTRY_URL, 'app://workbench/index.html', 'the window loads app://, never file://');
  assert.deepEqual(APP_SCHEME, { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } });
  const { webPreferences } = windowOptions('/x/preload.js');
  assert.equal(webPreferences.preload, '/x/preload.js');
  for (const [setting, value] of Object.entries({ contextIsolation: true, sandbox: true, nodeIntegration: false, nodeIntegrationInWorker: false }))
    assert.equal(webPreferences[setting as keyof typeof webPreferences], value, setting);
});

test('5: every permission request and check is denied', () => {
  let request: ((contents: unknown, permission: string, callback: (granted: boolean) => void) => void) | null = null;
  let check: ((contents: unknown, permission: string) => boolean) | null = null;
  denyAllPermissions({ setPermissionRequestHandler: (h) => (request = h), setPermissionCheckHandler: (h) => (check = h) });
  for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal', 'fullscreen', 'hid', 'anything-new']) {
    const answers: boolean[] = [];
    request!({}, permission, (granted) => answers.push(granted));
    assert.deepEqual(answers, [false], permission);
    assert.equal(check!({}, permission), false, permission);
  }
});

test('6: every app:// response carries the CSP and the headers serve sends; the page a fresh style nonce in it and in its policy', async () => {
  const page = await appResponse(APP_ENTRY_URL, dir);
  assert.equal(page.status, 200);
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  const nonce = /'nonce-([^']+)'/.exec(page.headers['content-security-policy']!)?.[1];
  assert.ok(nonce, page.headers['content-security-policy']);
  assert.ok(page.body.toString().includes(`nonce="${nonce}"`), 'the page holds the nonce its policy admits');
  assert.notEqual(/'nonce-([^']+)'/.exec((await appResponse(APP_ENTRY_URL, dir)).headers['content-security-policy']!)?.[1], nonce, 'a fresh one each time');
  const script = await appResponse('app://workbench/app.js', dir);
  assert.equal(script.status, 200);
  assert.equal(script.body.toString(), 'console.log(1)');
  for (const response of [page, script, await appResponse('app://workbench/missing.js', dir)]) {
    const csp = response.headers['content-security-policy']!;
    for (const part of ["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "object-src 'none'", "form-action 'none'"])
      assert.ok(csp.includes(part), part);
    assert.doesNotMatch(csp, /unsafe-eval/);
    // No inline <style> without the page's nonce (only style attributes, which Monaco's lines need, are inline).
    assert.doesNotMatch(csp, /style-src(-elem)? [^;]*unsafe-inline/);
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['referrer-policy'], 'no-referrer');
    assert.equal(response.headers['cache-control'], 'no-store');
  }
});

test('6: app:// serves the renderer’s own files only: not a file beside them, not another host, not a folder', async () => {
  for (const url of [
    'app://workbench/../secret.txt',
    'app://workbench/%2e%2e/secret.txt',
    'app://workbench/..%2fsecret.txt',
    'app://workbench/%00index.html',
    'app://workbench/%E0%A4%A',
    'app://other/index.html',
    'app://workbench@other/index.html',
    'file:///etc/passwd',
    `app://workbench/${'../'.repeat(20)}etc/passwd`,
  ]) {
    const response = await appResponse(url, dir);
    assert.equal(response.status, 404, url);
    assert.ok(response.headers['content-security-policy'], `${url}: a refusal carries the policy too`);
  }
  mkdirSync(join(dir, 'folder'), { recursive: true });
  assert.equal((await appResponse('app://workbench/folder', dir)).status, 404);
  assert.equal((await appResponse('app://workbench/', dir)).status, 200, '/ is the page');
});

test('7-8: web security on, no insecure content, no experimental features, no Blink features, no webviews', () => {
  const { webPreferences } = windowOptions('/x/preload.js');
  assert.equal(webPreferences.webSecurity, true);
  assert.equal(webPreferences.allowRunningInsecureContent, false);
  assert.equal(webPreferences.experimentalFeatures, false);
  assert.equal(webPreferences.webviewTag, false);
  assert.equal(webPreferences.navigateOnDragDrop, false);
  assert.ok(!('enableBlinkFeatures' in webPreferences));
});

test('9-12: no new windows, navigation only within the app, no webview attached', () => {
  const contents = guardedContents();
  for (const url of ['https://example.com/', 'app://workbench/index.html', 'javascript:alert(1)'])
    assert.deepEqual(contents.open(url), { action: 'deny' }, url);
  for (const url of ['app://workbench/index.html', 'app://workbench/other.html#x'])
    assert.equal(contents.navigate(url), false, `${url} is the app's own: allowed`);
  for (const url of [
    'https://example.com/',
    'http://127.0.0.1:7411/',
    'file:///etc/passwd',
    'app://other/index.html',
    'app://workbench@evil.example/',
    'app://workbench.evil.example/',
    'data:text/html,<script>1</script>',
    'not a url',
  ])
    assert.equal(contents.navigate(url), true, `${url} is refused`);
  assert.equal(contents.attachWebview(), true, 'a webview is never attached');
  assert.equal(isAppUrl('app://workbench/x'), true);
});

test('13: IPC is answered only from the app’s own page in its main frame', () => {
  assert.equal(senderIsOurRenderer('app://workbench/index.html', true), true);
  assert.equal(senderIsOurRenderer('app://workbench/index.html', false), false, 'an iframe in it');
  assert.equal(senderIsOurRenderer('https://example.com/', true), false);
  assert.equal(senderIsOurRenderer('app://workbench@evil/', true), false);
  assert.equal(senderIsOurRenderer(undefined, true), false, 'a frame already gone');
});

test('15: the preload exposes one typed call, its cancel and its events, and nothing of Electron', async () => {
  const sent: unknown[][] = [];
  const listeners = new Map<string, (event: unknown, callId: number, payload: unknown) => void>();
  const ipc = {
    invoke: async (...args: unknown[]) => {
      sent.push(['invoke', ...args]);
      return { ok: true, value: 42 };
    },
    send: (...args: unknown[]) => void sent.push(['send', ...args]),
    on: (channel: string, listener: (event: unknown, callId: number, payload: unknown) => void) => listeners.set(channel, listener),
  };
  const bridge = workbenchBridge(ipc);
  assert.deepEqual(Object.keys(bridge).sort(), ['cancel', 'invoke', 'onEvent']);
  assert.deepEqual(await bridge.invoke('app.info', {} as never, 7), { ok: true, value: 42 });
  assert.equal(bridge.cancel(7), undefined);
  const heard: unknown[][] = [];
  assert.equal(
    bridge.onEvent((...args) => heard.push(args)),
    undefined,
    'no handle on ipcRenderer comes back',
  );
  const ipcEvent = { sender: ipc, senderFrame: {} };
  listeners.get('workbench:event')!(ipcEvent, 7, { kind: 'phase' });
  assert.deepEqual(heard, [[7, { kind: 'phase' }]], 'the IPC event (and its sender) stays in the preload');
  assert.deepEqual(sent, [
    ['invoke', 'workbench:invoke', 'app.info', {}, 7],
    ['send', 'workbench:cancel', 7],
  ]);
  assert.deepEqual([...listeners.keys()], ['workbench:event']);
});

test('16-17: a supported Electron release, and fuses that keep the binary from running as Node or loading outside its asar', () => {
  const builder = readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8');
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies['electron']!;
  // Electron supports its latest three stable majors: 43, 44 and 45 in November 2026.
  assert.ok(Number(version.split('.')[0]) >= 43, `electron ${version}`);
  // Pinned exactly, at or past the newest 45.x the registry had when last checked (`npm view electron versions`).
  assert.match(version, /^\d+\.\d+\.\d+$/, 'an exact version');
  const [major, minor] = version.split('.').map(Number) as [number, number];
  assert.ok(major > 45 || (major === 45 && minor >= 5), `electron ${version} is older than 45.5.0`);
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; devDependencies?: Record<string, string> }>;
  };
  assert.equal(lock.packages['']!.devDependencies!['electron'], version, 'package-lock.json asks for the same electron');
  assert.equal(lock.packages['node_modules/electron']!.version, version, 'package-lock.json installs the same electron');
  for (const fuse of [
    'runAsNode: false',
    'enableNodeOptionsEnvironmentVariable: false',
    'enableNodeCliInspectArguments: false',
    'enableEmbeddedAsarIntegrityValidation: true',
    'onlyLoadAppFromAsar: true',
    'grantFileProtocolExtraPrivileges: false',
  ])
    assert.match(builder, new RegExp(`^\\s+${fuse}$`, 'm'), fuse);
});
