import assert from 'node:assert/strict';
import { test } from 'node:test';

import { formatNumber, formatWaves } from '../../core/format';

test('formatNumber: read-back values as a person reads them', () => {
  // The shared-memory-race recording's maximum, which showed as 5.1232655307529045e+32.
  assert.equal(formatNumber(5.1232655307529045e32), '5.12e+32');
  assert.equal(formatNumber(1.699978497607125e28), '1.7e+28');
  assert.equal(formatNumber(-3e20), '-3e+20');
  assert.equal(formatNumber(1048575), '1048575');
  assert.equal(formatNumber(999999999999999), '999999999999999');
  assert.equal(formatNumber(1e15), '1e+15');
  assert.equal(formatNumber(524287.5), '524288');
  assert.equal(formatNumber(0.1 + 0.2), '0.3');
  assert.equal(formatNumber(1.5), '1.5');
  assert.equal(formatNumber(0.000012345), '1.23e-5');
  assert.equal(formatNumber(0), '0');
  assert.equal(formatNumber(-0), '0');
  assert.equal(formatNumber(null), 'NaN');
  assert.equal(formatNumber(NaN), 'NaN');
  assert.equal(formatNumber(Infinity), 'Inf');
  assert.equal(formatNumber(-Infinity), '-Inf');
});

test('formatWaves: never "0.00 waves" for a launch that fills part of one', () => {
  assert.equal(formatWaves(4 / (8 * 132)), '< 0.01 waves');
  assert.equal(formatWaves(0.0099), '< 0.01 waves');
  assert.equal(formatWaves(0.01), '0.01 waves');
  assert.equal(formatWaves(0.5), '0.5 waves');
  assert.equal(formatWaves(1), '1 wave');
  assert.equal(formatWaves(2.345), '2.35 waves');
  assert.equal(formatWaves(0), '0 waves');
});
