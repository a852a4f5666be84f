import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { WebSocketServer, type WebSocket } from 'ws';

import { dispatch, type createHandlers } from '../host-api';
import { rendererCsp, rendererFile, rendererPage } from './renderer-files';

/** The largest API message accepted: a source file at its limit, JSON-escaped, fits. */
export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;

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

/** The request's URL, or null when it is not one (`//`, `/\\`): such a request is refused, never thrown on. */
export function parseRequestUrl(raw: string | undefined): URL | null {
  if (!raw || !raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\')) return null;
  try {
    return new URL(raw, 'http://127.0.0.1');
  } catch {
    return null;
  }
}

/** The token cookie's value, or null when it is absent or malformed. */
export function cookieToken(header: string | undefined, name: string): string | null {
  if (!header || header.length > 8192) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return null;
    }
  }
  return null;
}

/** The renderer's page, with a style nonce of its own in it and in its policy (renderer-files.ts). */
async function sendPage(req: IncomingMessage, res: ServerResponse, file: string, headers: Record<string, string>, port: number): Promise<void> {
  const page = await rendererPage(file, apiOrigins(port));
  res.writeHead(200, { ...headers, 'content-security-policy': page.csp, 'content-length': String(page.body.length) });
  res.end(req.method === 'HEAD' ? undefined : page.body);
}

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
  // Named for the port: two servers on one machine (cookies ignore ports) keep their own.
  const cookieName = () => `wb_token_${port}`;
  const requestToken = (req: IncomingMessage, url: URL): string | null => url.searchParams.get('token') || cookieToken(req.headers.cookie, cookieName());
  const hostAllowed = (req: IncomingMessage) => allowedHosts().has(req.headers.host ?? '');
  const originAllowed = (req: IncomingMessage) => req.headers.origin === undefined || allowedOrigins().has(req.headers.origin);

  const refuse = (res: ServerResponse, status: number, message: string) => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, { ...securityHeaders(port), 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
    res.end(message);
  };

  const serveFile = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const found = await rendererFile(options.rendererDir, url.pathname);
    if (!found) return refuse(res, 404, 'Not found');
    const headers: Record<string, string> = {
      ...securityHeaders(port),
      'content-type': found.mime,
      'content-length': String(found.size),
    };
    if (url.searchParams.get('token')) headers['set-cookie'] = `${cookieName()}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
    if (found.mime.startsWith('text/html')) return sendPage(req, res, found.file, headers, port);
    const stream = createReadStream(found.file);
    stream.on('error', () => refuse(res, 500, 'The file could not be read.'));
    stream.once('open', () => {
      res.writeHead(200, headers);
      if (req.method === 'HEAD') {
        stream.destroy();
        res.end();
      } else stream.pipe(res);
    });
  };

  const server: Server = createServer((req, res) => {
    req.on('error', () => req.destroy());
    res.on('error', () => res.destroy());
    const url = parseRequestUrl(req.url);
    if (!url) return refuse(res, 400, 'Bad request: not a path this server serves.');
    if (!hostAllowed(req) || !originAllowed(req)) return refuse(res, 403, 'Forbidden: this server answers only its own address (127.0.0.1 or localhost).');
    if (!tokenMatches(requestToken(req, url))) {
      return refuse(res, 401, 'This GPU Workbench server needs the token it printed when it started: open the full URL, including ?token=…');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, 'Only GET and HEAD are served here; the API is on the WebSocket.');
    serveFile(req, res, url).catch(() => refuse(res, 500, 'The file could not be served.'));
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
    if (!url || url.pathname !== '/api' || !hostAllowed(req) || !allowedOrigins().has(req.headers.origin ?? '') || !tokenMatches(requestToken(req, url))) {
      socket.write('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws));
  });

  /** Calls in flight on one socket, by id: a cancel message, or the socket closing, aborts them. */
  const MAX_CALLS_PER_SOCKET = 64;
  const serveSocket = (ws: WebSocket) => {
    const calls = new Map<number | string, AbortController>();
    // An invalid UTF-8 frame, a frame over the size limit or a broken connection arrives here: close, never throw.
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      for (const call of calls.values()) call.abort();
      calls.clear();
    });
    const send = (value: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(value), () => undefined);
    };
    const bad = (message: string, id: number | string | null = null) => send({ id, envelope: { ok: false, error: { code: 'BAD_MESSAGE', message } } });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return bad('Messages are JSON text, not binary frames.');
      const message = parseMessage(String(data));
      if (!message) return bad('The message is not a JSON object of the form {"id", "channel", "request"} or {"id", "cancel": true}.');
      if (message.cancel) {
        if (message.id !== null) calls.get(message.id)?.abort();
        return;
      }
      const id = message.id;
      // A call needs an id: it is how its answer, its events and its cancel find it.
      if (id === null) return bad('A call needs an "id" (a number or a short string).');
      if (calls.has(id)) return bad(`A call with id ${JSON.stringify(id)} is already in flight on this connection.`, id);
      if (calls.size >= MAX_CALLS_PER_SOCKET) return bad(`At most ${MAX_CALLS_PER_SOCKET} calls may be in flight on one connection.`, id);
      const controller = new AbortController();
      calls.set(id, controller);
      const context = { signal: controller.signal, emit: (event: unknown) => send({ id, event }) };
      void dispatch(options.handlers, message.channel, message.request, context)
        .then((envelope) => send({ id, envelope }))
        .catch(() => send({ id, envelope: { ok: false, error: { code: 'HOST_ERROR', message: 'The host could not answer this message.' } } }))
        .finally(() => {
          if (calls.get(id) === controller) calls.delete(id);
        });
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

/**
 * An API message: a call ({id, channel, request}) or a cancel ({id, cancel: true}), with an id that is a
 * number or a short string. null for anything else.
 */
export function parseMessage(text: string): { id: number | string | null; channel: unknown; request: unknown; cancel: boolean } | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { id, channel, request, cancel } = value as Record<string, unknown>;
  const validId = id === undefined || id === null || (typeof id === 'number' && Number.isFinite(id)) || (typeof id === 'string' && id.length <= 64);
  if (!validId) return null;
  return { id: (id as number | string | undefined) ?? null, channel, request, cancel: cancel === true };
}
