import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseDeviceAsserts } from '../../core/runner/device-output';

test('failed device asserts are read from the runtime’s message, one per thread, printf text around them ignored', () => {
  const text = [
    'value at 3 is 7.5',
    'broken.cu:9: void fill(float *, int): block: [3,0,0], thread: [232,0,0] Assertion `i < n` failed.',
    'broken.cu:9: void fill(float *, int): block: [3,0,0], thread: [233,0,0] Assertion `i < n` failed.',
    'kernels/a b.cu:120: void k<int>(T *): block: [0,1,2], thread: [3,4,5] Assertion `p != nullptr && "needs a buffer"` failed.',
    '',
  ].join('\n');
  const asserts = parseDeviceAsserts(text);
  assert.equal(asserts.length, 3);
  assert.deepEqual(asserts[0], { file: 'broken.cu', line: 9, function: 'void fill(float *, int)', block: [3, 0, 0], thread: [232, 0, 0], condition: 'i < n' });
  assert.deepEqual(asserts[2]!.block, [0, 1, 2]);
  assert.equal(asserts[2]!.file, 'kernels/a b.cu');
  assert.equal(asserts[2]!.function, 'void k<int>(T *)');
  assert.equal(asserts[2]!.condition, 'p != nullptr && "needs a buffer"');
  assert.deepEqual(parseDeviceAsserts('printf only\nAssertion `x` failed.\n'), [], 'a line without file and thread is not taken for one');
});
