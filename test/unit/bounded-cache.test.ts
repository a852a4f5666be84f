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
