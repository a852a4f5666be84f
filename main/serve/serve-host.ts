import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { WebSocketServer } from 'ws';

import type { createHandlers } from '../host-api';
import { parseRequestUrl, serveAccess } from './serve-access';
import { refuse, serveRendererFile } from './serve-responses';
import { serveSocket } from './serve-socket';

// The parts of serve, each in its own module; exported here as before.
export { cookieToken, parseRequestUrl } from './serve-access';
export { securityHeaders } from './serve-responses';
export { parseMessage } from './serve-socket';

/** The largest API message accepted: a source file at its limit, JSON-escaped, fits. */
export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;

export interface ServeHost {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

export interface ServeOptions {
  port: number;
  rendererDir: string;
  handlers: ReturnType<typeof createHandlers>;
  token?: string;
}

/**
 * The headless host (ARCHITECTURE.md §4): serves the renderer and the typed API over a WebSocket on
 * 127.0.0.1 only. Every request needs the per-start token (in the URL, then a cookie), and a Host or
 * Origin that is not this server's own is refused, which stops DNS-rebinding pages reaching the API.
 * Who is let in is serve-access.ts; the files, serve-responses.ts; the API on a socket, serve-socket.ts.
 */
export async function startServeHost(options: ServeOptions): Promise<ServeHost> {
  const token = options.token ?? randomBytes(24).toString('base64url');
  let port = 0;
  const access = serveAccess(token, () => port);

  const server: Server = createServer((req, res) => {
    req.on('error', () => req.destroy());
    res.on('error', () => res.destroy());
    const url = parseRequestUrl(req.url);
    if (!url) return refuse(res, port, 400, 'Bad request: not a path this server serves.');
    if (!access.hostAllowed(req) || !access.originAllowed(req))
      return refuse(res, port, 403, 'Forbidden: this server answers only its own address (127.0.0.1 or localhost).');
    if (!access.hasToken(req, url)) {
      return refuse(res, port, 401, 'This GPU Workbench server needs the token it printed when it started: open the full URL, including ?token=…');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, port, 405, 'Only GET and HEAD are served here; the API is on the WebSocket.');
    serveRendererFile(req, res, url, { rendererDir: options.rendererDir, port, access }).catch(() => refuse(res, port, 500, 'The file could not be served.'));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    if (socket.writable) socket.end(`HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
    socket.destroy();
  });
  server.on('connection', (socket) => socket.on('error', () => socket.destroy()));

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  wss.on('error', () => undefined);
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    const url = parseRequestUrl(req.url);
    if (!url || url.pathname !== '/api' || !access.hostAllowed(req) || !access.socketOriginAllowed(req) || !access.hasToken(req, url)) {
      socket.write('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, options.handlers));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
