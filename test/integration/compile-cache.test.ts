import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { CompileCache, type CachedCompile } from '../../main/compile/compile-cache';

const entry = (i: number, imageBytes: number): CachedCompile => ({
  result: { ok: true, log: `entry ${i}` } as unknown as CachedCompile['result'],
  image: new Uint8Array(imageBytes).fill(i),
});

const folderBytes = (dir: string) =>
  readdirSync(dir)
    .filter((f) => !f.startsWith('.'))
    .reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);

test('the compile cache stays under its bound, evicting the least recently used entry', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-cache-bound-'));
  const cache = new CompileCache(dir, 50_000);
  for (let i = 0; i < 4; i++) await cache.put(`k${i}`, entry(i, 10_000));
  // k0 is used again, so k1 is now the least recently used.
  await new Promise((r) => setTimeout(r, 5));
  assert.ok(await cache.get('k0'));
  for (let i = 4; i < 6; i++) await cache.put(`k${i}`, entry(i, 10_000));

  const size = await cache.size();
  assert.ok(size.bytes <= 50_000, `index counts ${size.bytes} bytes`);
  assert.ok(folderBytes(dir) <= 50_000, `folder holds ${folderBytes(dir)} bytes`);
  assert.equal(size.bytes, folderBytes(dir), 'the index counts what the folder holds');

  // A new session reads the folder: what was evicted is gone, the rest is there with its image.
  const next = new CompileCache(dir, 50_000);
  assert.equal(await next.get('k1'), null, 'the least recently used entry was evicted');
  const kept = await next.get('k0');
  assert.equal(kept?.image?.[0], 0, 'the entry used again was kept, image intact');
  assert.equal((await next.get('k5'))?.image?.byteLength, 10_000);
  assert.deepEqual(await next.size(), size);
});

test('a cache entry written twice is counted once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-cache-twice-'));
  const cache = new CompileCache(dir);
  await cache.put('same', entry(1, 1000));
  await cache.put('same', entry(2, 3000));
  assert.deepEqual(await cache.size(), { entries: 1, bytes: folderBytes(dir) });
  assert.equal((await new CompileCache(dir).get('same'))?.image?.[0], 2);
});
