import assert from 'node:assert/strict';
import { test } from 'node:test';

import { catalogEntries, isStickyCode, lookupCode, lookupName } from '../../core/cuda/error-catalog';

test('every CUresult the headers call process-fatal is marked sticky', () => {
  const fatal = catalogEntries().filter((e) => /inconsistent state|must be terminated and relaunched|cannot be used anymore/i.test(e.doc));
  assert.ok(fatal.length >= 10);
  for (const e of fatal) assert.ok(e.sticky, `${e.name} (${e.code}) should be sticky`);
});

test('recoverable launch errors are not sticky', () => {
  for (const code of [1, 2, 98, 200, 209, 218, 222, 500, 701, 720]) assert.equal(isStickyCode(code), false, String(code));
  for (const code of [700, 710, 716, 719]) assert.equal(isStickyCode(code), true, String(code));
});

test('entries resolve by code and by driver or runtime name', () => {
  const illegal = lookupCode(700)!;
  assert.equal(illegal.name, 'CUDA_ERROR_ILLEGAL_ADDRESS');
  assert.equal(illegal.runtimeName, 'cudaErrorIllegalAddress');
  assert.match(illegal.doc, /invalid memory address/);
  assert.equal(lookupName('cudaErrorIllegalAddress'), illegal);
  assert.equal(lookupName('CUDA_ERROR_OUT_OF_MEMORY')?.code, 2);
  assert.equal(lookupCode(123456), undefined);
});
