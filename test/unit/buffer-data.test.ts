import assert from 'node:assert/strict';
import { test } from 'node:test';

import { initialBytes, mulberry32, summarizeBuffer, PREVIEW_ELEMENTS, type BufferSummary } from '../../core/plan/buffer-data';

test('iota and constant initializers write the values a kernel will read', () => {
  const iota = initialBytes({ name: 'a', type: 'i32', count: 5, init: { kind: 'iota', start: 10, step: -3 } });
  assert.deepEqual([...new Int32Array(iota.buffer)], [10, 7, 4, 1, -2]);
  const constant = initialBytes({ name: 'a', type: 'f64', count: 3, init: { kind: 'constant', value: 2.5 } });
  assert.deepEqual([...new Float64Array(constant.buffer)], [2.5, 2.5, 2.5]);
});

test('random initializers are deterministic per seed and stay in [min, max)', () => {
  const spec = { name: 'r', type: 'f32' as const, count: 1000, init: { kind: 'random' as const, seed: 42, min: -2, max: 3 } };
  const a = new Float32Array(initialBytes(spec).buffer);
  const b = new Float32Array(initialBytes(spec).buffer);
  assert.deepEqual(a, b);
  assert.ok(a.every((v) => v >= -2 && v < 3));
  const other = new Float32Array(initialBytes({ ...spec, init: { ...spec.init, seed: 43 } }).buffer);
  assert.notDeepEqual(a, other);
  const ints = new Int32Array(initialBytes({ name: 'i', type: 'i32', count: 1000, init: { kind: 'random', seed: 1, min: 0, max: 10 } }).buffer);
  assert.ok(ints.every((v) => Number.isInteger(v) && v >= 0 && v < 10));
});

test('summaries count NaN and Inf apart from min, max and mean', () => {
  const data = new Float32Array([1, NaN, 3, Infinity, -Infinity, 5]);
  const s = summarizeBuffer('x', 'f32', new Uint8Array(data.buffer));
  assert.equal(s.count, 6);
  assert.equal(s.min, 1);
  assert.equal(s.max, 5);
  assert.equal(s.mean, 3);
  assert.equal(s.nanCount, 1);
  assert.equal(s.infCount, 2);
  assert.equal(s.values?.length, 6);
});

test('summaries take the careful path when a sum is not finite: NaN, Inf, or finite values whose sum overflows', () => {
  const nanLate = new Float64Array(5000).map((_, i) => i - 2000);
  nanLate[4999] = NaN;
  const s = summarizeBuffer('late', 'f64', new Uint8Array(nanLate.buffer));
  assert.deepEqual([s.min, s.max, s.nanCount, s.infCount], [-2000, 2998, 1, 0]);
  const huge = summarizeBuffer('huge', 'f64', new Uint8Array(new Float64Array([1e308, 1e308, -5]).buffer));
  assert.deepEqual([huge.min, huge.max, huge.nanCount, huge.infCount], [-5, 1e308, 0, 0], 'an overflowing sum is not an Inf element');
  const empty = summarizeBuffer('empty', 'f32', new Uint8Array(0));
  assert.deepEqual([empty.count, empty.min, empty.max, empty.mean], [0, null, null, null]);
});

test('large buffers get a head and a tail, not every element', () => {
  const n = 100_000;
  const data = new Int32Array(n).map((_, i) => i);
  const s = summarizeBuffer('big', 'i32', new Uint8Array(data.buffer));
  assert.equal(s.values, null);
  assert.deepEqual(s.head, [...data.slice(0, PREVIEW_ELEMENTS)]);
  assert.deepEqual(s.tail, [...data.slice(n - PREVIEW_ELEMENTS)]);
  assert.equal(s.mean, (n - 1) / 2);
  const allNaN = summarizeBuffer('nan', 'f32', new Uint8Array(new Float32Array([NaN, NaN]).buffer));
  assert.equal(allNaN.min, null);
  assert.equal(allNaN.mean, null);
});

test('the typed-array fast paths give the same bytes and summaries as element-by-element encoding', async () => {
  const { writeElement, readElement, elementSize } = await import('../../core/plan/element-types');
  for (const type of ['i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'f32', 'f64'] as const) {
    for (const init of [
      { kind: 'iota' as const, start: -3.5, step: 7.25 },
      { kind: 'constant' as const, value: 300.75 },
    ]) {
      const spec = { name: 'x', type, count: 97, init };
      const fast = initialBytes(spec);
      const slow = new Uint8Array(97 * elementSize(type));
      const view = new DataView(slow.buffer);
      for (let i = 0; i < 97; i++) writeElement(view, i * elementSize(type), type, init.kind === 'iota' ? init.start + i * init.step : init.value);
      assert.deepEqual(fast, slow, `${type} ${init.kind}`);
      const summary = summarizeBuffer('x', type, fast);
      assert.deepEqual(
        summary.values,
        Array.from({ length: 97 }, (_, i) => readElement(view, i * elementSize(type), type)),
        `${type} summary`,
      );
    }
  }
});

test('the float summary (four lanes) gives the minimum, maximum and mean of every length, the tail past the lanes included', () => {
  const rand = mulberry32(7);
  for (const length of [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 1001]) {
    for (const type of ['f32', 'f64'] as const) {
      const make = (values: number[]) => (type === 'f32' ? new Float32Array(values) : new Float64Array(values));
      const values = make(Array.from({ length }, () => (rand() - 0.5) * 2000 + 0.5));
      const s = summarizeBuffer('x', type, new Uint8Array(values.buffer));
      const plain = [...values];
      assert.equal(s.min, Math.min(...plain), `${type} ${length} min`);
      assert.equal(s.max, Math.max(...plain), `${type} ${length} max`);
      const mean = plain.reduce((a, b) => a + b, 0) / length;
      assert.ok(Math.abs(s.mean! - mean) <= 1e-9 * Math.max(1, Math.abs(mean)), `${type} ${length}: mean ${s.mean} against ${mean}`);
      // An extreme, a NaN or an infinity in the last elements (past the lanes when the length is not a multiple of 4) is met.
      for (const [value, check] of [
        [1e6, (t: BufferSummary) => t.max === 1e6],
        [-1e6, (t: BufferSummary) => t.min === -1e6],
        [NaN, (t: BufferSummary) => t.nanCount === 1 && t.min === (length > 1 ? Math.min(...plain.slice(0, -1)) : null)],
        [Infinity, (t: BufferSummary) => t.infCount === 1 && t.max === (length > 1 ? Math.max(...plain.slice(0, -1)) : null)],
      ] as const) {
        const last = make([...plain.slice(0, -1), value]);
        const t = summarizeBuffer('x', type, new Uint8Array(last.buffer));
        assert.ok(check(t), `${type} ${length} ending in ${value}: ${JSON.stringify(t)}`);
      }
    }
  }
});

test('the float summary: an infinity inside the lanes, ties of 0 and -0, and f64 sums past 1e308', () => {
  const inLanes = summarizeBuffer('x', 'f32', new Uint8Array(new Float32Array([1, -Infinity, 3, 4, 5, 6, 7, 8]).buffer));
  assert.equal(inLanes.infCount, 1);
  assert.equal(inLanes.min, 1);
  assert.equal(inLanes.max, 8);
  // The earlier of two equal elements is kept, as the one-lane loop did.
  assert.ok(Object.is(summarizeBuffer('x', 'f64', new Uint8Array(new Float64Array([0, -0, 1, 1]).buffer)).min, 0));
  assert.ok(Object.is(summarizeBuffer('x', 'f64', new Uint8Array(new Float64Array([-0, 0, 1, 1]).buffer)).min, -0));
  // Lanes that cancel: a one-lane running sum overflowed to Infinity here; the four lanes give the true 0.
  const cancelling = summarizeBuffer('x', 'f64', new Uint8Array(new Float64Array([1e308, 1e308, 0, 0, -1e308, -1e308, 0, 0]).buffer));
  assert.equal(cancelling.mean, 0);
  assert.equal(cancelling.infCount, 0);
});
