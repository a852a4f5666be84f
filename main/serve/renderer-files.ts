import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

export const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ttf': 'font/ttf',
  '.woff2': 'font/woff2',
};

/**
 * The renderer's Content-Security-Policy, the same for serve and the desktop app: only its own files,
 * no framing, no <base>, no forms, no plugins. `connect` names where the API is (serve's WebSocket).
 *
 * Styles: the app's own style sheets; a <style> element only with the page's `styleNonce` (Monaco makes its theme,
 * icon and widget styles as <style> elements at run time, and renderer/page-policy.ts gives each the nonce); style
 * attributes inline, because Monaco draws its lines as HTML with style="top:…" in it. An injected <style> or
 * <link> (whose selectors could read the page) is refused; an injected style attribute styles one element.
 */
export function rendererCsp(connect: string[] = [], styleNonce?: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `style-src-elem 'self'${styleNonce ? ` 'nonce-${styleNonce}'` : ''}`,
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "worker-src 'self' blob:",
    `connect-src 'self'${connect.map((c) => ` ${c}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** Where index.html names the style nonce; each response of the page puts a fresh one there and in its policy. */
export const STYLE_NONCE_PLACEHOLDER = '__STYLE_NONCE__';

/** The renderer's page as sent once: a fresh style nonce written into it, and the policy that admits it. */
export async function rendererPage(file: string, connect: string[] = []): Promise<{ body: Buffer; csp: string }> {
  const nonce = randomBytes(18).toString('base64');
  const html = (await readFile(file, 'utf8')).split(STYLE_NONCE_PLACEHOLDER).join(nonce);
  return { body: Buffer.from(html), csp: rendererCsp(connect, nonce) };
}

/**
 * The renderer file a request path names: a regular file inside `dir`, or null (outside it, a folder,
 * missing, or a path that is not valid percent-encoding).
 */
export async function rendererFile(dir: string, pathname: string): Promise<{ file: string; size: number; mime: string } | null> {
  let path: string;
  try {
    path = decodeURIComponent(pathname === '/' || pathname === '' ? '/index.html' : pathname);
  } catch {
    return null;
  }
  if (path.includes('\0')) return null;
  const file = normalize(join(dir, path));
  if (!file.startsWith(dir + sep)) return null;
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) return null;
  return { file, size: info.size, mime: MIME[extname(file)] ?? 'application/octet-stream' };
}
