import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dimProduct, formatDim3, parseDim3 } from '../../core/dims';

test('parseDim3 accepts X, X,Y, X,Y,Z and XxY forms', () => {
  assert.deepEqual(parseDim3('256', 'b'), { ok: true, value: [256, 1, 1] });
  assert.deepEqual(parseDim3('16,16', 'b'), { ok: true, value: [16, 16, 1] });
  assert.deepEqual(parseDim3(' 8, 8 ,4 ', 'b'), { ok: true, value: [8, 8, 4] });
  assert.deepEqual(parseDim3('64x32', 'b'), { ok: true, value: [64, 32, 1] });
  assert.deepEqual(parseDim3('4294967295', 'g'), { ok: true, value: [4294967295, 1, 1] });
});

test('parseDim3 refuses what the driver could not take, saying why', () => {
  const bad: [string, RegExp][] = [
    ['', /empty/],
    ['0', /at least 1/],
    ['-1', /not a positive whole number/],
    ['1.5', /not a positive whole number/],
    ['abc', /not a positive whole number/],
    ['1,2,3,4', /at most 3/],
    ['4294967296', /32-bit/],
    ['1e3', /not a positive whole number/],
  ];
  for (const [text, message] of bad) {
    const r = parseDim3(text, '--grid');
    assert.equal(r.ok, false, text);
    if (!r.ok) assert.match(r.error, message, text);
  }
});

test('dimProduct and formatDim3', () => {
  assert.equal(dimProduct([64, 32, 1]), 2048);
  assert.equal(formatDim3([256, 1, 1]), '256');
  assert.equal(formatDim3([16, 16, 1]), '(16,16)');
  assert.equal(formatDim3([8, 8, 4]), '(8,8,4)');
});
