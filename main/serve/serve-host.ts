import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';

import { WebSocketServer, type WebSocket } from 'ws';

import { dispatch, type createHandlers } from '../host-api';

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ttf': 'font/ttf',
  '.woff2': 'font/woff2',
};

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
 */
export async function startServeHost(options: ServeOptions): Promise<ServeHost> {
  const token = options.token ?? randomBytes(24).toString('base64url');
  let port = 0;
  const allowedHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const allowedOrigins = () => new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]);

  const tokenMatches = (candidate: string | undefined | null): boolean => {
    if (!candidate) return false;
    const a = Buffer.from(candidate);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };
  const requestToken = (req: IncomingMessage, url: URL): string | null => {
    const fromQuery = url.searchParams.get('token');
    if (fromQuery) return fromQuery;
    const cookie = /(?:^|;\s*)wb_token=([^;]+)/.exec(req.headers.cookie ?? '');
    return cookie ? decodeURIComponent(cookie[1]!) : null;
  };
  const hostAllowed = (req: IncomingMessage) => allowedHosts().has(req.headers.host ?? '');
  const originAllowed = (req: IncomingMessage) => req.headers.origin === undefined || allowedOrigins().has(req.headers.origin);

  const refuse = (res: ServerResponse, status: number, message: string) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(message);
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (!hostAllowed(req) || !originAllowed(req)) return refuse(res, 403, 'Forbidden: this server answers only its own address (127.0.0.1 or localhost).');
    if (!tokenMatches(requestToken(req, url))) {
      return refuse(res, 401, 'This GPU Workbench server needs the token it printed when it started: open the full URL, including ?token=…');
    }
    const path = url.pathname === '/' ? '/index.html' : url.pathname;
    const file = normalize(join(options.rendererDir, path));
    if (!file.startsWith(options.rendererDir + sep) || !existsSync(file)) return refuse(res, 404, 'Not found');
    const headers: Record<string, string> = {
      'content-type': MIME[extname(file)] ?? 'application/octet-stream',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    };
    if (url.searchParams.get('token')) headers['set-cookie'] = `wb_token=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
    if (extname(file) === '.html') {
      headers['content-security-policy'] =
        `default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self' ws://127.0.0.1:${port} ws://localhost:${port}`;
    }
    res.writeHead(200, headers);
    res.end(readFileSync(file));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 32 * 1024 * 1024 });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/api' || !hostAllowed(req) || !allowedOrigins().has(req.headers.origin ?? '') || !tokenMatches(requestToken(req, url))) {
      socket.write('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws));
  });

  const serveSocket = (ws: WebSocket) => {
    ws.on('message', async (data) => {
      let message: { id?: unknown; channel?: unknown; request?: unknown };
      try {
        message = JSON.parse(String(data)) as typeof message;
      } catch {
        ws.send(JSON.stringify({ id: null, envelope: { ok: false, error: { code: 'BAD_MESSAGE', message: 'The message is not JSON.' } } }));
        return;
      }
      const envelope = await dispatch(options.handlers, message.channel, message.request);
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ id: message.id ?? null, envelope }));
    });
  };

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
