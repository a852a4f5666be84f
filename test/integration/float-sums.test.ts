import assert from 'node:assert/strict';
import { test } from 'node:test';

import { summarizeBuffer } from '../../core/plan/buffer-data';
import { loadAddon } from '../../main/native/addon';

// The runner's native minimum, maximum and sum of a read-back against core's loop: the same bits, whatever the values.
const addon = loadAddon().addon!;
const out = new Float64Array(3);
const sums = (bytes: Uint8Array, isF64: boolean) => {
  addon.floatSums(bytes, isF64, out);
  return { min: out[0]!, max: out[1]!, sum: out[2]! };
};

function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const special = [0, -0, 1e-45, -1e-45, 3.4e38, -3.4e38, 1e-310, 1.5, -2.25];

function values(kind: 'f32' | 'f64', n: number, seed: number, extra: number[] = []): Uint8Array {
  const rand = random(seed);
  const a = kind === 'f32' ? new Float32Array(n) : new Float64Array(n);
  for (let i = 0; i < n; i++) a[i] = rand() < 0.1 ? special[Math.floor(rand() * special.length)]! : (rand() - 0.5) * 10 ** Math.floor(rand() * 12 - 6);
  extra.forEach((v, i) => (a[(i * 7919) % n] = v));
  return new Uint8Array(a.buffer);
}

test('f32 and f64 read-backs: the native loop gives core’s minimum, maximum and mean to the bit', () => {
  for (const kind of ['f32', 'f64'] as const)
    for (const n of [1, 2, 3, 4, 5, 7, 8, 1000, 65_536, 65_539])
      for (const seed of [1, 2, 3]) {
        const bytes = values(kind, n, seed);
        const js = summarizeBuffer('b', kind, bytes);
        const native = summarizeBuffer('b', kind, bytes, sums);
        assert.ok(Object.is(native.min, js.min) && Object.is(native.max, js.max) && Object.is(native.mean, js.mean), `${kind} n=${n} seed=${seed}`);
        assert.deepEqual(native, js);
      }
});

test('zeros of both signs keep the earlier one, as core does', () => {
  for (const order of [
    [0, -0, 0, -0, 0],
    [-0, 0, -0, 0, -0],
    [1, -0, 0, 2, 0, -0, 3],
  ]) {
    const bytes = new Uint8Array(new Float32Array(order).buffer);
    const js = summarizeBuffer('z', 'f32', bytes);
    const native = summarizeBuffer('z', 'f32', bytes, sums);
    assert.ok(Object.is(native.min, js.min) && Object.is(native.max, js.max), JSON.stringify(order));
  }
});

test('NaN and Inf: counted by the careful loop, with the same answer', () => {
  for (const kind of ['f32', 'f64'] as const) {
    const bytes = values(kind, 10_001, 9, [NaN, Infinity, -Infinity, NaN]);
    assert.deepEqual(summarizeBuffer('n', kind, bytes, sums), summarizeBuffer('n', kind, bytes));
    const summary = summarizeBuffer('n', kind, bytes, sums);
    assert.equal(summary.nanCount, 2);
    assert.equal(summary.infCount, 2);
  }
});

test('any alignment, and a length that is not a whole number of elements', () => {
  const base = values('f64', 4097, 5);
  const odd = new Uint8Array(base.byteLength + 3);
  odd.set(base, 3);
  for (const kind of ['f32', 'f64'] as const) {
    const view = odd.subarray(3, 3 + base.byteLength - 2);
    assert.deepEqual(summarizeBuffer('a', kind, view, sums), summarizeBuffer('a', kind, view));
  }
});

test('what it refuses: arguments of the wrong kinds are a TypeError, not a crash', () => {
  assert.throws(() => addon.floatSums(new Float32Array(4) as unknown as Uint8Array, false, out), TypeError);
  assert.throws(() => addon.floatSums(new Uint8Array(8), false, new Float64Array(2)), TypeError);
});
