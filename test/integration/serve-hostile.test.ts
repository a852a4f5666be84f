import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import WebSocket from 'ws';

import { channels } from '../../core/api/channels';
import { MAX_MESSAGE_BYTES } from '../../main/serve/serve-host';
import { mulberry32 } from '../../core/plan/buffer-data';
import { ROOT } from '../helpers/cli';
import { startServe, type ServeProcess } from '../helpers/serve';

// Attacks on a running `serve`, with and without its token: every request gets an answer or a closed
// connection, and the host keeps serving. Then a fuzz of 10,000 random and mutated messages over every
// channel, with the host's memory read from /proc before and after.
let serve: ServeProcess;
const work = mkdtempSync(join(tmpdir(), 'wb-hostile-'));
before(async () => {
  serve = await startServe({ GPU_WORKBENCH_STATE_DIR: join(work, 'state'), GPU_WORKBENCH_CACHE_DIR: join(work, 'cache') });
});
after(() => serve.stop());

/** Sends raw bytes and returns what came back before the server closed or went quiet. */
function raw(bytes: string | Buffer, quietMs = 400): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(serve.port, '127.0.0.1');
    let got = '';
    let timer = setTimeout(() => socket.destroy(), quietMs);
    socket.on('data', (d) => {
      got += d.toString('latin1');
      clearTimeout(timer);
      timer = setTimeout(() => socket.destroy(), quietMs);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    socket.on('error', () => undefined);
    socket.write(bytes);
  });
}

const status = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
const origin = () => `http://127.0.0.1:${serve.port}`;

function open(): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${serve.port}/api?token=${serve.token}`, { origin: origin() });
    ws.on('open', () => resolve(ws));
    ws.on('error', reject);
  });
}

/** One request and its reply on an open socket; null when the socket closed instead. */
function call(ws: WebSocket, data: string | Buffer, binary = false): Promise<unknown> {
  return new Promise((resolve) => {
    const onMessage = (m: WebSocket.RawData) => {
      ws.off('close', onClose);
      resolve(JSON.parse(String(m)));
    };
    const onClose = () => {
      ws.off('message', onMessage);
      resolve(null);
    };
    ws.once('message', onMessage);
    ws.once('close', onClose);
    ws.send(data, { binary });
  });
}

async function alive(): Promise<void> {
  assert.equal(serve.child.exitCode, null, 'the host exited');
  const ws = await open();
  const reply = (await call(ws, JSON.stringify({ id: 7, channel: 'app.info', request: {} }))) as { id: number; envelope: { ok: boolean } };
  assert.deepEqual([reply.id, reply.envelope.ok], [7, true]);
  ws.close();
}

const rssBytes = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${serve.child.pid}/status`, 'utf8'))![1]) * 1024;

test('requests that used to end the host, without the token, are refused and the host keeps serving', async () => {
  const host = `Host: 127.0.0.1:${serve.port}\r\n`;
  for (const target of ['//', '/\\', '//evil.example/', '/\\\\evil', '/%', '/%E0%A4%A']) {
    const r = await raw(`GET ${target} HTTP/1.1\r\n${host}\r\n`);
    assert.ok([400, 401].includes(status(r)), `${target}: ${r.slice(0, 80)}`);
  }
  const cookie = await raw(`GET / HTTP/1.1\r\n${host}Cookie: wb_token_${serve.port}=%E0%A4%A; wb_token=%\r\n\r\n`);
  assert.equal(status(cookie), 401);
  assert.equal(status(await raw('garbage\r\n\r\n')), 400);
  assert.equal(status(await raw(`GET / HTTP/1.1\r\n${host}X: ${'a'.repeat(20000)}\r\n\r\n`)), 431);
  // A cross-site page's no-cors fetch: another Origin.
  assert.equal(status(await raw(`GET / HTTP/1.1\r\n${host}Origin: http://evil.example\r\n\r\n`)), 403);
  await alive();
});

test('with the token: a directory, traversal, odd methods, and every response carrying the security headers', async () => {
  const host = `Host: 127.0.0.1:${serve.port}\r\n`;
  const q = `?token=${serve.token}`;
  for (const [target, expected] of [
    [`/.//${q}`, 404],
    [`/assets/${q}`, 404],
    [`/..%2f..%2fpackage.json${q}`, 404],
    [`/%2e%2e/%2e%2e/package.json${q}`, 404],
    [`/index.html%00.js${q}`, 404],
  ] as const) {
    const r = await raw(`GET ${target} HTTP/1.1\r\n${host}\r\n`);
    assert.equal(status(r), expected, `${target}: ${r.slice(0, 120)}`);
    assert.match(r, /content-security-policy: .*frame-ancestors 'none'.*base-uri 'none'/i);
    assert.match(r, /referrer-policy: no-referrer/i);
  }
  assert.equal(status(await raw(`DELETE /${q} HTTP/1.1\r\n${host}\r\n`)), 405);
  const page = await raw(`GET /${q} HTTP/1.1\r\n${host}\r\n`);
  assert.equal(status(page), 200);
  assert.match(page, new RegExp(`set-cookie: wb_token_${serve.port}=`, 'i'), 'the cookie is named for the port');
  assert.match(page, /frame-ancestors 'none'/);
  const js = readdirSync(join(ROOT, 'dist/renderer')).find((f) => f.endsWith('.js'));
  if (js) assert.match(await raw(`GET /${js}${q} HTTP/1.1\r\n${host}\r\n`), /referrer-policy: no-referrer/i);
  await alive();
});

test('with the token: null, arrays, invalid UTF-8, binary frames and oversized ids get an answer or a close, never a dead host', async () => {
  const ws = await open();
  for (const text of ['null', '[]', '42', '"x"', 'true', '{"id":{"a":1},"channel":"app.info"}', '{"id":"' + 'x'.repeat(100) + '","channel":"app.info"}', '{']) {
    const reply = (await call(ws, text)) as { envelope: { ok: boolean; error: { code: string } } };
    assert.deepEqual([reply.envelope.ok, reply.envelope.error.code], [false, 'BAD_MESSAGE'], text);
  }
  const binary = (await call(ws, Buffer.from('{"id":1,"channel":"app.info","request":{}}'), true)) as { envelope: { error: { code: string } } };
  assert.equal(binary.envelope.error.code, 'BAD_MESSAGE');
  assert.equal(await call(ws, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), false), null, 'invalid UTF-8 closes the connection');
  // A message over the size limit closes the connection before the host holds it; the host goes on.
  const big = await open();
  const before = rssBytes();
  assert.equal(await call(big, 'x'.repeat(MAX_MESSAGE_BYTES + 1024)), null, 'an oversize message closes the connection');
  assert.ok(rssBytes() - before < 256 * 2 ** 20, 'the host did not keep it');
  await alive();
});

/** Random JSON, and valid requests with one field replaced: what a fuzzer throws at a channel map. */
function fuzzMessages(count: number, seed: number, dir: string): string[] {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const strings = ['', 'a', '../../etc/passwd', '/dev/zero', '\u0000', '💥'.repeat(50), '%s%n', 'x'.repeat(5000), '__proto__', 'constructor'];
  const value = (depth: number): unknown => {
    const kind = Math.floor(rand() * (depth > 3 ? 5 : 8));
    switch (kind) {
      case 0:
        return null;
      case 1:
        return pick([0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER]);
      case 2:
        return pick(strings);
      case 3:
        return rand() < 0.5;
      case 4:
        return Math.floor(rand() * 100000);
      case 5:
        return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      default:
        return Object.fromEntries(
          Array.from({ length: Math.floor(rand() * 4) }, () => [
            pick(['path', 'id', 'plan', 'source', 'kernel', '__proto__', 'x', 'options']),
            value(depth + 1),
          ]),
        );
    }
  };
  // Paths stay inside the fuzz's own folder: the fuzz must not write into the checkout or the home folder.
  const inside = () => join(dir, `f${Math.floor(rand() * 20)}`);
  // Ids of what the host holds: none of these was given out by this host (gone, or never), or is not an id at all.
  const heldId = () =>
    pick([
      'run-00000000-0000-4000-8000-000000000000',
      'timeline-1',
      'monitor:ui-1',
      'monitor:',
      'sanitizer-1',
      'profile-1',
      '../../etc/passwd',
      '',
      'x'.repeat(81),
    ]);
  // What a bundle names beside its run: a report, samples and a profile the host may hold, or not.
  const seen = () => ({
    ...(rand() < 0.5 ? { sanitizerId: heldId() } : {}),
    ...(rand() < 0.3 ? { samplesId: heldId() } : {}),
    ...(rand() < 0.3 ? { profileId: heldId() } : {}),
  });
  const templates: Record<string, () => Record<string, unknown>> = {
    'files.read': () => ({ path: inside() }),
    'files.write': () => ({ path: inside(), text: pick(strings) }),
    'files.list': () => ({ dir }),
    'files.sniff': () => ({ path: rand() < 0.5 ? inside() : pick(['/dev/zero', '/proc/self/mem', '/etc/shadow']) }),
    'run.open': () => ({ path: inside() }),
    'memory.open': () => ({ path: inside() }),
    'run.save': () => ({ path: inside(), outcomeId: heldId() }),
    'memory.export': () => ({ format: pick(['trace', 'csv']), path: inside(), timelineId: heldId(), ...(rand() < 0.3 ? { monitorId: 'ui-1' } : {}) }),
    'plans.read': () => ({ path: inside() }),
    'plans.write': () => ({ path: inside(), plan: value(1) }),
    'run.plan': () => ({
      plan: { version: 1, kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(){}' }], buffers: [], steps: [{ op: 'sync' }] },
      timeoutMs: 1000,
    }),
    'run.page': () => ({ runnerPid: 1, runId: 'x', buffer: 'b', offset: 0, count: 1 }),
    'bundle.open': () => ({ path: inside() }),
    'bundle.preview': () => ({ plan: value(1), outcomeId: heldId(), origin: pick(strings), ...seen() }),
    'bundle.export': () => ({ plan: value(1), outcomeId: heldId(), origin: pick(strings), path: inside(), ...seen() }),
    'compile.sass': () => ({ key: '0'.repeat(64) }),
    'sanitize.open': () => ({ xmlPath: inside(), textPath: rand() < 0.5 ? inside() : '/dev/zero', tool: null }),
    // serve runs no program the browser names (it was not started with --allow-programs): the marker never appears.
    'sanitize.program': () => ({ command: ['/bin/sh', '-c', `touch ${join(dir, 'ran')}`], cwd: dir, tool: 'memcheck' }),
    // The profile and the check gate: a plan whose kernel names an include folder that is a command, a plan path and a
    // saved profile anywhere; nothing runs without a GPU, nothing outside the workspace is read.
    'profile.open': () => ({ path: rand() < 0.5 ? inside() : pick(['/etc/shadow', '/dev/zero', '/proc/self/mem']) }),
    'profile.run': () => ({
      plan: {
        version: 1,
        kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(){}', options: { includePaths: [`$(touch ${join(dir, 'ran')})`] } }],
        buffers: [],
        steps: [{ op: 'launch', kernel: 'k', grid: [1, 1, 1], block: [1, 1, 1], args: [] }],
      },
      planPath: rand() < 0.5 ? inside() : '/etc/passwd',
      step: pick([0, -1, 1e9, 'x']),
    }),
    'check.plan': () => ({
      plan: { version: 1, kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(){}' }], buffers: [], steps: [{ op: 'sync' }] },
      planPath: rand() < 0.5 ? inside() : '/etc/passwd',
    }),
    'sanitize.plan': () => ({
      plan: {
        version: 1,
        kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(){}', options: { includePaths: [`$(touch ${join(dir, 'ran')})`] } }],
        buffers: [],
        steps: [{ op: 'sync' }],
      },
      tool: 'memcheck',
    }),
  };
  const writes = new Set([
    'files.write',
    'run.save',
    'plans.write',
    'drafts.save',
    'drafts.discard',
    'files.read',
    'files.list',
    'files.sniff',
    'run.open',
    'memory.open',
    'plans.read',
    'bundle.open',
    'bundle.export',
    'memory.export',
  ]);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const channel = rand() < 0.9 ? pick(Object.keys(channels)) : pick(['', 'app', 'toString', '__proto__', 'files.read.x', 'x'.repeat(300)]);
    let request: unknown;
    if (Object.hasOwn(templates, channel) && rand() < 0.6) {
      const base = templates[channel]!();
      const keys = Object.keys(base);
      const key = pick(keys);
      // A mutated path field keeps a path inside the folder; any other field takes any value.
      base[key] = key === 'path' || key === 'dir' ? (rand() < 0.5 ? inside() : 12) : value(1);
      request = base;
    } else if (writes.has(channel) || channel === 'compile.run') request = rand() < 0.5 ? null : pick([1, 'x', [], { extra: value(1) }]);
    else request = value(0);
    const id = rand() < 0.95 ? i : value(1);
    const message = rand() < 0.03 ? JSON.stringify({ id, channel, request }).slice(0, Math.floor(rand() * 40)) : JSON.stringify({ id, channel, request });
    out.push(message);
  }
  return out;
}

test('a fuzz of 10,000 random and mutated messages over every channel: each answered, the host alive, its memory bounded', { timeout: 240_000 }, async () => {
  const dir = mkdtempSync(join(work, 'fuzz-'));
  const messages = fuzzMessages(10_000, 20261123, dir);
  let ws = await open();
  const before = rssBytes();
  let answered = 0;
  let closed = 0;
  const started = performance.now();
  for (const message of messages) {
    const reply = await call(ws, message);
    if (reply === null) {
      closed++;
      ws = await open();
    } else answered++;
  }
  ws.close();
  const ms = performance.now() - started;
  const after = rssBytes();
  console.log(
    `# ${answered} answered, ${closed} closed, in ${(ms / 1000).toFixed(1)} s; host RSS ${(before / 2 ** 20).toFixed(0)} → ${(after / 2 ** 20).toFixed(0)} MiB`,
  );
  assert.equal(answered + closed, messages.length);
  assert.equal(existsSync(join(dir, 'ran')), false, 'a fuzzed request ran a program');
  assert.ok(after - before < 256 * 2 ** 20, `the host grew by ${((after - before) / 2 ** 20).toFixed(0)} MiB`);
  await alive();
});
