import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';

import WebSocket from 'ws';

import { discoverLibraries } from '../../main/services/discovery-service';
import { ROOT } from '../helpers/cli';
import { serveWithBrowser } from '../helpers/serve';

const hasDriver = discoverLibraries().cuda.loaded;

const app = serveWithBrowser();

const get = (path: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: app.serve.port, path, headers }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });

const wsCall = (url: string, origin: string, message: unknown) =>
  new Promise<unknown>((resolve, reject) => {
    const ws = new WebSocket(url, { origin });
    ws.on('open', () => ws.send(typeof message === 'string' ? message : JSON.stringify(message)));
    ws.on('message', (data) => {
      resolve(JSON.parse(String(data)));
      ws.close();
    });
    ws.on('error', reject);
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });

test('serve refuses requests without its token, or for another host name', async () => {
  assert.equal((await get('/')).status, 401);
  assert.match((await get('/')).body, /needs the token/);
  assert.equal((await get('/?token=wrong')).status, 401);
  assert.equal((await get(`/?token=${app.serve.token}`, { host: `evil.example:${app.serve.port}` })).status, 403);
  assert.equal((await get(`/?token=${app.serve.token}`, { origin: 'http://evil.example' })).status, 403);
  const ok = await get(`/?token=${app.serve.token}`);
  assert.equal(ok.status, 200);
  assert.match(String(ok.headers['content-security-policy']), /default-src 'self'/);
  assert.equal((await get('/../package.json?token=' + app.serve.token)).status, 404);
});

test('the API WebSocket needs the token and our own Origin, and validates every request', async () => {
  const api = `ws://127.0.0.1:${app.serve.port}/api`;
  const origin = `http://127.0.0.1:${app.serve.port}`;
  await assert.rejects(wsCall(api, origin, { id: 1, channel: 'app.info', request: {} }), /HTTP 403/);
  await assert.rejects(wsCall(`${api}?token=${app.serve.token}`, 'http://evil.example', { id: 1, channel: 'app.info', request: {} }), /HTTP 403/);
  const info = (await wsCall(`${api}?token=${app.serve.token}`, origin, { id: 1, channel: 'app.info', request: {} })) as {
    id: number;
    envelope: { ok: boolean; value: { transport: string } };
  };
  assert.equal(info.id, 1);
  assert.equal(info.envelope.value.transport, 'serve');
  const unknown = (await wsCall(`${api}?token=${app.serve.token}`, origin, { id: 2, channel: 'fs.readFile', request: {} })) as {
    envelope: { ok: boolean; error: { code: string } };
  };
  assert.deepEqual([unknown.envelope.ok, unknown.envelope.error.code], [false, 'UNKNOWN_CHANNEL']);
  const bad = (await wsCall(`${api}?token=${app.serve.token}`, origin, { id: 3, channel: 'devices.list', request: { extra: true } })) as {
    envelope: { ok: boolean; error: { code: string } };
  };
  assert.deepEqual([bad.envelope.ok, bad.envelope.error.code], [false, 'BAD_REQUEST']);
  const garbage = (await wsCall(`${api}?token=${app.serve.token}`, origin, '{not json')) as { envelope: { error: { code: string } } };
  assert.equal(garbage.envelope.error.code, 'BAD_MESSAGE');
});

test('the UI shows the no-driver state: what happened, every place searched, and what to do', { skip: hasDriver && 'this machine has a driver' }, async () => {
  const page = await app.browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(`${app.serve.url}&view=devices`);
  const panel = page.getByTestId('no-driver');
  await panel.waitFor();
  assert.match(await panel.locator('h2').innerText(), /No NVIDIA driver found/);
  const searched = await page.getByTestId('searched').locator('li').allInnerTexts();
  assert.ok(
    searched.some((s) => s.startsWith('libcuda.so.1 (loader path)')),
    searched.join('\n'),
  );
  assert.match(await panel.innerText(), /Install the NVIDIA driver/);
  const doctor = await page.getByTestId('doctor').innerText();
  assert.match(doctor, /CUDA driver/);
  assert.match(doctor, /nvcc/);
  assert.match(await page.getByTestId('app-info').innerText(), /serve/);
  mkdirSync(join(ROOT, 'test-results'), { recursive: true });
  await page.screenshot({ path: join(ROOT, 'test-results/no-driver.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('opening the page without the token shows how to get in, not the app', async () => {
  const page = await app.browser.newPage();
  const response = await page.goto(`http://127.0.0.1:${app.serve.port}/`);
  assert.equal(response?.status(), 401);
  assert.match(await page.locator('body').innerText(), /needs the token it printed/);
  await page.close();
});

test('the paste box explains a pasted PyTorch out-of-memory message with its numbers', async () => {
  const page = await app.browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${app.serve.url}&view=explain`);
  await page
    .getByLabel('Paste an error')
    .fill(
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.25 GiB. GPU 1 has a total capacity of 93.02 GiB of which 1.18 GiB is free. Process 2752205 has 91.82 GiB memory in use. Of the allocated memory 90.63 GiB is allocated by PyTorch, and 120.54 MiB is reserved by PyTorch but unallocated.',
    );
  const panel = page.getByTestId('explanation');
  assert.match(await panel.locator('h2').innerText(), /PyTorch: CUDA out of memory/);
  const oom = await page.getByTestId('oom').innerText();
  // Each figure as the message gives it (issue 26: sizes to two decimals, as PyTorch prints them).
  for (const figure of [
    /Requested\s+1\.25 GiB/,
    /GPU 1 total\s+93\.02 GiB/,
    /Free\s+1\.18 GiB/,
    /Held by PyTorch tensors\s+90\.63 GiB/,
    /Cached by PyTorch, unused\s+120\.54 MiB/,
    /Process 2752205\s+91\.82 GiB/,
  ])
    assert.match(oom, figure);
  assert.match(await panel.innerText(), /Reduce the batch size/);
  await page.screenshot({ path: join(ROOT, 'test-results/explain-oom.png') });
  await page.getByLabel('Paste an error').fill('CUDA error: an illegal memory access was encountered');
  assert.match(await panel.innerText(), /CUDA_ERROR_ILLEGAL_ADDRESS \(700\)[\s\S]*sticky[\s\S]*compute-sanitizer/);
  await page.close();
});
