import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { AllocationRecord } from '../../core/runner/run-result';
import { nameAddress } from '../../core/sanitizer/name-address';

// Addresses as the H100 gave them: the off-by-one wrote 0x7fd120800fa0 beside a 4,000-byte allocation at 0x7fd120800000.
const memory: AllocationRecord[] = [
  { buffer: 'x', address: '0x7fd120800000', bytes: 4000, allocatedAtStep: 0, freedAtStep: null },
  { buffer: 'out', address: '0x7fd120801000', bytes: 4096, allocatedAtStep: 1, freedAtStep: null },
  { buffer: 'old', address: '0x7fd120900000', bytes: 1024, allocatedAtStep: 2, freedAtStep: 4 },
];

test('an overrun is named against the buffer it ran past, with the step that allocated it', () => {
  const named = nameAddress('0x7fd120800fa0', memory)!;
  assert.deepEqual([named.buffer, named.side, named.distance], ['x', 'after', 0]);
  assert.equal(named.sentence, 'just past the end of `x` (allocated at step 1)');
  assert.equal(nameAddress('0x7fd120800fa4', memory)!.sentence, '4 bytes past the end of `x` (allocated at step 1)');
  assert.equal(nameAddress('0x7fd120800ff0', memory)!.sentence, '16 bytes before the start of `out` (allocated at step 2)');
});

test('an address inside a buffer, and inside one the plan had freed', () => {
  assert.equal(nameAddress('0x7fd120801010', memory)!.sentence, '16 bytes into `out` (allocated at step 2)');
  assert.equal(nameAddress('0x7fd120900008', memory)!.sentence, '8 bytes into `old` (allocated at step 3, freed at step 5)');
});

test('a null pointer or an address far from every buffer names none; garbage is not an address', () => {
  assert.equal(nameAddress('0x0', memory), null);
  assert.equal(nameAddress('0x10', memory), null);
  assert.equal(nameAddress('not an address', memory), null);
  assert.equal(nameAddress(null, memory), null);
});
