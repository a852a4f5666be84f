import assert from 'node:assert/strict';
import { test } from 'node:test';

import { formatBytes, formatNumber, formatWaves, partOf, plural } from '../../core/format';

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

// Issue 26, item 12: one formatter for sizes, at one precision, and counts that read as counts.
test('formatBytes: two decimals at every size, as PyTorch and nvidia-smi figures read, the zeros dropped', () => {
  // 77.86 GiB was shown as 77.9 GiB beside a message that said 77.86.
  assert.equal(formatBytes(Math.round(77.86 * 2 ** 30)), '77.86 GiB');
  // An H100's 81559 MiB (nvidia-smi's figure): 79.65 GiB.
  assert.equal(formatBytes(81559 * 2 ** 20), '79.65 GiB');
  assert.equal(formatBytes(Math.round(211.13 * 2 ** 20)), '211.13 MiB');
  assert.equal(formatBytes(80 * 2 ** 30), '80 GiB');
  assert.equal(formatBytes(1.5 * 2 ** 30), '1.5 GiB');
  assert.equal(formatBytes(8000), '7.81 KiB');
  assert.equal(formatBytes(4000), '3.91 KiB');
  assert.equal(formatBytes(1000), '1,000 B');
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1010 * 1024), '1,010 KiB');
  // Just under the next unit rounds up into it, not to "1,024 MiB".
  assert.equal(formatBytes(2 ** 30 - 1), '1 GiB');
  assert.equal(formatBytes(10 * 2 ** 40), '10 TiB');
  assert.equal(formatBytes(-3 * 2 ** 20), '-3 MiB');
});

test('plural and partOf: real plurals, thousands separators, the noun agreeing with the whole', () => {
  assert.equal(plural(2, 'byte'), '2 bytes');
  assert.equal(plural(1, 'allocation'), '1 allocation');
  assert.equal(plural(4_194_304, 'hazard'), '4,194,304 hazards');
  assert.equal(partOf(496_831, 1_048_576, 'element'), '496,831 of 1,048,576 elements');
  assert.equal(partOf(1, 1, 'element'), '1 of 1 element');
});
