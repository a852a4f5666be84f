import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { rendererCsp } from '../../main/serve/renderer-files';
import { ROOT } from '../helpers/cli';

// Electron's security checklist, item by item, held by reading what ships: the Electron binary cannot be
// downloaded here, so the desktop shell's settings are checked as source and configuration.
const main = readFileSync(join(ROOT, 'main/electron/electron-main.ts'), 'utf8');
const preload = readFileSync(join(ROOT, 'preload/preload.ts'), 'utf8');
const builder = readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

test('1-4: only local content, over a custom protocol, with Node off, context isolation and the sandbox on', () => {
  assert.match(main, /protocol\.handle\('app', serveRenderer\)/);
  assert.match(main, /loadURL\(`\$\{APP_ORIGIN\}\/index\.html`\)/);
  assert.doesNotMatch(main, /['"`]file:\/\/|pathToFileURL|loadFile\(/, 'no file:// renderer');
  for (const setting of [/contextIsolation: true/, /sandbox: true/, /nodeIntegration: false/, /nodeIntegrationInWorker: false/, /app\.enableSandbox\(\)/])
    assert.match(main, setting);
});

test('5-8: every permission denied, a CSP on every renderer response, webSecurity on, no insecure content', () => {
  assert.match(main, /setPermissionRequestHandler\(\(_contents, _permission, callback\) => callback\(false\)\)/);
  assert.match(main, /setPermissionCheckHandler\(\(\) => false\)/);
  assert.match(main, /'content-security-policy': rendererCsp\(\)/);
  const csp = rendererCsp();
  for (const part of ["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "object-src 'none'", "form-action 'none'"])
    assert.ok(csp.includes(part), part);
  assert.doesNotMatch(csp, /unsafe-eval/);
  // No inline <style> without the page's nonce (only style attributes, which Monaco's lines need, are inline).
  assert.doesNotMatch(csp, /style-src(-elem)? [^;]*unsafe-inline/);
  assert.match(rendererCsp([], 'abc'), /style-src-elem 'self' 'nonce-abc'/);
  assert.match(main, /const page = await rendererPage\(found\.file\);/);
  assert.match(main, /webSecurity: true/);
  assert.match(main, /allowRunningInsecureContent: false/);
});

test('9-13: no experimental features, no webviews, no new windows, navigation limited to the app, IPC senders checked', () => {
  assert.match(main, /experimentalFeatures: false/);
  assert.doesNotMatch(main, /enableBlinkFeatures/);
  assert.match(main, /webviewTag: false/);
  assert.match(main, /will-attach-webview', \(event\) => event\.preventDefault\(\)/);
  assert.match(main, /setWindowOpenHandler\(\(\) => \(\{ action: 'deny' \}\)\)/);
  assert.match(main, /will-navigate'[\s\S]*?if \(!url\.startsWith\(`\$\{APP_ORIGIN\}\/`\)\) event\.preventDefault\(\)/);
  assert.match(main, /if \(!senderIsOurRenderer\(event\)\) return \{ ok: false/);
});

test('14-15: no shell.openExternal with outside content, and the preload exposes one typed call and nothing of Electron', () => {
  for (const file of sources(join(ROOT, 'main')).concat(sources(join(ROOT, 'renderer')), sources(join(ROOT, 'preload'))))
    assert.doesNotMatch(readFileSync(file, 'utf8'), /openExternal\(/, file);
  assert.equal([...preload.matchAll(/exposeInMainWorld\(/g)].length, 1);
  assert.doesNotMatch(preload, /exposeInMainWorld\([^)]*ipcRenderer\s*[,)]/, 'ipcRenderer itself is never exposed');
});

test('16-17: a supported Electron release, and fuses that keep the binary from running as Node or loading outside its asar', () => {
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
