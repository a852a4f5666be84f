import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { ServeAccess } from './serve-access';
import { rendererCsp, rendererFile, rendererPage } from './renderer-files';

/** Where the page's API is: this server's WebSocket. */
const apiOrigins = (port: number): string[] => [`ws://127.0.0.1:${port}`, `ws://localhost:${port}`];

/** Headers every response carries, refusals included: no framing, no referrer, no sniffing, no caching. */
export function securityHeaders(port: number): Record<string, string> {
  return {
    'content-security-policy': rendererCsp(apiOrigins(port)),
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'cross-origin-resource-policy': 'same-origin',
    'cross-origin-opener-policy': 'same-origin',
    'cache-control': 'no-store',
  };
}

/** A refusal in words, with the security headers; a response already under way is cut off instead. */
export function refuse(res: ServerResponse, port: number, status: number, message: string): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { ...securityHeaders(port), 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  res.end(message);
}

/** The renderer's page, with a style nonce of its own in it and in its policy (renderer-files.ts). */
async function sendPage(req: IncomingMessage, res: ServerResponse, file: string, headers: Record<string, string>, port: number): Promise<void> {
  const page = await rendererPage(file, apiOrigins(port));
  res.writeHead(200, { ...headers, 'content-security-policy': page.csp, 'content-length': String(page.body.length) });
  res.end(req.method === 'HEAD' ? undefined : page.body);
}

/** One of the renderer's files (the page, a script, a font) for a request already let in; the token's cookie set when the URL gave it. */
export async function serveRendererFile(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  { rendererDir, port, access }: { rendererDir: string; port: number; access: ServeAccess },
): Promise<void> {
  const found = await rendererFile(rendererDir, url.pathname);
  if (!found) return refuse(res, port, 404, 'Not found');
  const headers: Record<string, string> = {
    ...securityHeaders(port),
    'content-type': found.mime,
    'content-length': String(found.size),
  };
  if (url.searchParams.get('token')) headers['set-cookie'] = access.tokenCookie();
  if (found.mime.startsWith('text/html')) return sendPage(req, res, found.file, headers, port);
  const stream = createReadStream(found.file);
  stream.on('error', () => refuse(res, port, 500, 'The file could not be read.'));
  stream.once('open', () => {
    res.writeHead(200, headers);
    if (req.method === 'HEAD') {
      stream.destroy();
      res.end();
    } else stream.pipe(res);
  });
}
