import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import WebSocket from 'ws';

import { startServe, type ServeProcess } from '../helpers/serve';

// Events and cancel on the channel map, over the serve transport: a call streams typed events before its
// answer, and a caller's cancel (or its socket closing) stops the work on the host — the compiler too.
let serve: ServeProcess;
const work = mkdtempSync(join(tmpdir(), 'wb-events-'));
before(async () => {
  serve = await startServe({ GPU_WORKBENCH_STATE_DIR: join(work, 'state'), GPU_WORKBENCH_CACHE_DIR: join(work, 'cache') });
});
after(() => serve.stop());

const SLOW = `template <int N> __device__ __forceinline__ float f(float x) { return f<N - 1>(x * 1.0001f) + f<N - 1>(x + 1.0f); }
template <> __device__ __forceinline__ float f<0>(float x) { return x; }
__global__ void k(float* o) { o[threadIdx.x] = f<16>(o[threadIdx.x]); }`;

function open(): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${serve.port}/api?token=${serve.token}`, { origin: `http://127.0.0.1:${serve.port}` });
    ws.on('open', () => resolve(ws));
    ws.on('error', reject);
  });
}

/** Every message for one call id, until its envelope. */
function collect(ws: WebSocket, id: number): Promise<{ events: unknown[]; envelope: { ok: boolean; error?: { code: string } } }> {
  return new Promise((resolve) => {
    const events: unknown[] = [];
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { id: number; event?: unknown; envelope?: { ok: boolean; error?: { code: string } } };
      if (m.id !== id) return;
      if ('event' in m) events.push(m.event);
      else if (m.envelope) resolve({ events, envelope: m.envelope });
    });
  });
}

const compilers = () =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        return /gpu-workbench-nvcc-/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
      } catch {
        return false;
      }
    });

test('run.plan streams its phases as events, before its answer', async () => {
  const ws = await open();
  const done = collect(ws, 1);
  const plan = {
    version: 1,
    kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(float* p) { p[0] = 1; }' }],
    buffers: [{ name: 'p', type: 'f32', count: 1 }],
    steps: [
      { op: 'alloc', buffer: 'p' },
      { op: 'launch', kernel: 'k', grid: [1, 1, 1], block: [1, 1, 1], args: [{ buffer: 'p' }] },
      { op: 'free', buffer: 'p' },
    ],
  };
  ws.send(JSON.stringify({ id: 1, channel: 'run.plan', request: { plan, timeoutMs: 5000 } }));
  const { events, envelope } = await done;
  assert.equal(envelope.ok, true);
  assert.deepEqual(events[0], { kind: 'phase', phase: 'checks' });
  assert.deepEqual(events.at(-1), { kind: 'phase', phase: 'diagnose' });
  ws.close();
});

/** Waits (up to 10 s: a loaded machine starts a worker and nvcc slowly) until a compiler of ours runs. */
async function compilerStarted(): Promise<void> {
  const started = performance.now();
  while (!compilers().length && performance.now() - started < 10_000) await new Promise((r) => setTimeout(r, 50));
  assert.ok(compilers().length > 0, 'the compiler runs');
}

test('a cancelled compile answers CANCELLED at once, and its compiler is gone', async (t) => {
  if (!existsSync('/usr/local/cuda/bin/nvcc')) return t.skip('nvcc is not installed here');
  const ws = await open();
  const done = collect(ws, 2);
  ws.send(JSON.stringify({ id: 2, channel: 'compile.run', request: { source: SLOW, sourceName: 'slow.cu', options: { arch: 'sm_90' }, backend: 'nvcc' } }));
  await compilerStarted();
  const started = performance.now();
  ws.send(JSON.stringify({ id: 2, cancel: true }));
  const { envelope } = await done;
  const ms = performance.now() - started;
  assert.deepEqual([envelope.ok, envelope.error?.code], [false, 'CANCELLED']);
  assert.ok(ms < 2000, `${ms} ms`);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(compilers(), [], 'no compiler left running');
  ws.close();
});

test('closing the socket cancels what it asked for', async (t) => {
  if (!existsSync('/usr/local/cuda/bin/nvcc')) return t.skip('nvcc is not installed here');
  const ws = await open();
  ws.send(
    JSON.stringify({ id: 3, channel: 'compile.run', request: { source: SLOW + '\n// 2', sourceName: 'slow.cu', options: { arch: 'sm_90' }, backend: 'nvcc' } }),
  );
  await compilerStarted();
  ws.close();
  const started = performance.now();
  while (compilers().length && performance.now() - started < 3000) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(compilers(), []);
});
