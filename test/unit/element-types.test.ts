import assert from 'node:assert/strict';
import { test } from 'node:test';

import { readElement, writeElement, type ElementType } from '../../core/plan/element-types';
import { encodePointer, encodeScalar } from '../../core/plan/kernel-args';

const bits16 = (type: ElementType, v: number) => {
  const view = new DataView(new ArrayBuffer(2));
  writeElement(view, 0, type, v);
  return view.getUint16(0, true);
};
const roundTrip = (type: ElementType, v: number | bigint) => {
  const view = new DataView(new ArrayBuffer(8));
  writeElement(view, 0, type, v);
  return readElement(view, 0, type);
};

test('f16 encodes as __float2half_rn does (IEEE binary16 bit patterns)', () => {
  assert.equal(bits16('f16', 1), 0x3c00);
  assert.equal(bits16('f16', -2), 0xc000);
  assert.equal(bits16('f16', 65504), 0x7bff); // largest finite
  assert.equal(bits16('f16', 70000), 0x7c00); // overflows to +inf
  assert.equal(bits16('f16', 2 ** -24), 0x0001); // smallest subnormal
  assert.equal(bits16('f16', 0.1), 0x2e66);
  assert.equal(bits16('f16', NaN) & 0x7c00, 0x7c00);
  assert.equal(roundTrip('f16', 0.333251953125), 0.333251953125);
});

test('bf16 rounds to nearest even from f32', () => {
  assert.equal(bits16('bf16', 1), 0x3f80);
  assert.equal(bits16('bf16', -1), 0xbf80);
  assert.equal(bits16('bf16', 3.140625), 0x4049);
  assert.equal(roundTrip('bf16', 1.00390625), 1); // halfway between 1 and the next bf16: ties to even
  assert.ok(Number.isNaN(roundTrip('bf16', NaN)));
});

test('integers wrap like the C types; 64-bit integers keep every bit', () => {
  assert.equal(roundTrip('u8', 256), 0);
  assert.equal(roundTrip('i8', 128), -128);
  assert.equal(roundTrip('i32', 2 ** 31), -(2 ** 31));
  assert.deepEqual([...encodeScalar('u64', '18446744073709551615')], [255, 255, 255, 255, 255, 255, 255, 255]);
  assert.deepEqual([...encodeScalar('i64', '-2')], [254, 255, 255, 255, 255, 255, 255, 255]);
  assert.deepEqual([...encodeScalar('i32', 1024)], [0, 4, 0, 0]);
  assert.deepEqual([...encodePointer(0x7f0000001000n)], [0x00, 0x10, 0x00, 0x00, 0x00, 0x7f, 0, 0]);
});
