import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BoundedCache } from '../../core/bounded-cache';

test('the bounded cache keeps the most recently used entries', () => {
  const cache = new BoundedCache<string, number>(2);
  cache.set('a', 1);
  cache.set('b', 2);
  assert.equal(cache.get('a'), 1);
  cache.set('c', 3);
  assert.equal(cache.get('b'), undefined, 'b was the least recently used');
  assert.equal(cache.get('a'), 1);
  assert.equal(cache.get('c'), 3);
  assert.equal(cache.size, 2);
  assert.throws(() => new BoundedCache(0), /at least 1/);
});

test('it keeps the most recently used within its capacity, counted or sized, and tells what it evicts', () => {
  const evicted: string[] = [];
  const lru = new BoundedCache<string, number>(2, undefined, (k) => evicted.push(k));
  lru.set('a', 1);
  lru.set('b', 2);
  lru.get('a');
  lru.set('c', 3);
  assert.deepEqual(evicted, ['b'], 'b was the least recently used');
  assert.equal(lru.get('a'), 1);
  const bytes = new BoundedCache<string, Uint8Array>(10, (v) => v.byteLength);
  assert.equal(bytes.set('big', new Uint8Array(11)), false, 'the caller is told it was not kept');
  assert.equal(bytes.get('big'), undefined, 'larger than the whole capacity: not kept');
  assert.equal(bytes.set('x', new Uint8Array(6)), true);
  bytes.set('y', new Uint8Array(6));
  assert.equal(bytes.get('x'), undefined);
  assert.equal(bytes.size, 1);
  bytes.set('y', new Uint8Array(4));
  bytes.set('z', new Uint8Array(6));
  assert.equal(bytes.size, 2, 'a replaced entry counts its new size only');
});
