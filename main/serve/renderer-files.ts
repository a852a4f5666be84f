import { stat } from 'node:fs/promises';
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
 */
export function rendererCsp(connect: string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
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
