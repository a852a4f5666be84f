import assert from 'node:assert/strict';
import { test } from 'node:test';

import { isNewerRelease } from '../../core/doctor/driver-rules';
import { formatBytes, formatNumber, formatWaves, partOf, plural, thousands } from '../../core/format';

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

test('thousands writes a number as en-US does, without ICU: groups, three decimals rounded half up, signs', () => {
  const cases: [number, string][] = [
    [0, '0'],
    [-0, '-0'],
    [999, '999'],
    [1000, '1,000'],
    [-1234567, '-1,234,567'],
    [12345.5, '12,345.5'],
    [1.2345, '1.235'], // rounded on its decimal form, 1.2345, not on the double just below it
    [0.9995, '1'],
    [999.9996, '1,000'],
    [0.1 + 0.2, '0.3'],
    [0.0004, '0'],
    [-0.0004, '-0'],
    [1e-7, '0'],
    [2 ** 53 + 2, '9,007,199,254,740,994'],
    [1e20, '100,000,000,000,000,000,000'],
  ];
  for (const [n, text] of cases) assert.equal(thousands(n), text, String(n));
  // Beyond these, whatever a locale makes of them, ICU's own answer.
  for (const n of [1e21, NaN, Infinity, -Infinity]) assert.equal(thousands(n), n.toLocaleString('en-US'));
  // Against ICU itself on many numbers of every shape.
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 20_000; i++) {
    for (const n of [Math.floor(next() * 1e15), (next() - 0.5) * 1e6, Math.round(next() * 1e7) / 1e4, next()]) {
      assert.equal(thousands(n), n.toLocaleString('en-US'), String(n));
    }
  }
});

test('a driver release is newer by its parts as numbers, not as text', () => {
  assert.equal(isNewerRelease('580.159.04', '575.57.08'), true);
  assert.equal(isNewerRelease('575.57.08', '580.159.04'), false);
  assert.equal(isNewerRelease('580.65.06', '580.159.04'), false);
  assert.equal(isNewerRelease('580.159', '580.159.04'), false);
  assert.equal(isNewerRelease('580.159.04', '580.159.04'), false);
  assert.equal(isNewerRelease('1000.1', '999.99'), true);
  // A part that is not a number compares neither way.
  assert.equal(isNewerRelease('580.159.04', '580.x'), null);
  assert.equal(isNewerRelease('', '580.159.04'), null);
});
