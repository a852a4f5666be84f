import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

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

/** Who serve answers: a request to its own address (Host, and Origin where there is one) that carries its token. */
export interface ServeAccess {
  /** The Host is this server's own (127.0.0.1 or localhost, its port). */
  hostAllowed(req: IncomingMessage): boolean;
  /** A page request: no Origin, or this server's own. */
  originAllowed(req: IncomingMessage): boolean;
  /** A WebSocket upgrade: an Origin, and this server's own. */
  socketOriginAllowed(req: IncomingMessage): boolean;
  /** The request carries the token: in the URL, else in the cookie. */
  hasToken(req: IncomingMessage, url: URL): boolean;
  /** The Set-Cookie value that keeps the token for the page's next requests. */
  tokenCookie(): string;
}

/** The checks of a server started with `token`, listening on `port()` (read at each check: known once it listens). */
export function serveAccess(token: string, port: () => number): ServeAccess {
  const allowedHosts = () => new Set([`127.0.0.1:${port()}`, `localhost:${port()}`]);
  const allowedOrigins = () => new Set([`http://127.0.0.1:${port()}`, `http://localhost:${port()}`]);
  const tokenMatches = (candidate: string | undefined | null): boolean => {
    if (!candidate) return false;
    const a = Buffer.from(candidate);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };
  // Named for the port: two servers on one machine (cookies ignore ports) keep their own.
  const cookieName = () => `wb_token_${port()}`;
  return {
    hostAllowed: (req) => allowedHosts().has(req.headers.host ?? ''),
    originAllowed: (req) => req.headers.origin === undefined || allowedOrigins().has(req.headers.origin),
    socketOriginAllowed: (req) => allowedOrigins().has(req.headers.origin ?? ''),
    hasToken: (req, url) => tokenMatches(url.searchParams.get('token') || cookieToken(req.headers.cookie, cookieName())),
    tokenCookie: () => `${cookieName()}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
  };
}
