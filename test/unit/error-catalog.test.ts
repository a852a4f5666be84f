import assert from 'node:assert/strict';
import { test } from 'node:test';

import { catalogEntries, isOutOfMemory, isSticky, lookupCode, lookupName } from '../../core/cuda/error-catalog';

test('every CUresult the headers call process-fatal is marked sticky', () => {
  const fatal = catalogEntries().filter((e) => /inconsistent state|must be terminated and relaunched|cannot be used anymore/i.test(e.doc));
  assert.ok(fatal.length >= 10);
  for (const e of fatal) assert.ok(e.sticky, `${e.name} (${e.code}) should be sticky`);
});

test('recoverable launch errors are not sticky', () => {
  for (const code of [1, 2, 98, 200, 209, 218, 222, 500, 701, 720]) assert.equal(isSticky({ code }), false, String(code));
  for (const code of [700, 710, 716, 719]) assert.equal(isSticky({ code }), true, String(code));
});

test("a sticky code is sticky only where the error is CUDA's: a workbench or NVRTC error with that number is not", () => {
  assert.equal(isSticky({ library: 'cuda', code: 700 }), true);
  assert.equal(isSticky(lookupCode(719)!), true);
  assert.equal(isSticky({ library: 'workbench', code: 700 }), false);
  assert.equal(isSticky({ library: 'nvrtc', code: 710 }), false);
});

test("out of memory is one question: a runner's CUDA error, a catalog entry, or either API's name", () => {
  assert.equal(isOutOfMemory({ library: 'cuda', code: 2, name: 'CUDA_ERROR_OUT_OF_MEMORY' }), true);
  assert.equal(isOutOfMemory(lookupCode(2)!), true);
  assert.equal(isOutOfMemory(lookupName('cudaErrorMemoryAllocation')!), true);
  assert.equal(isOutOfMemory({ code: -1, name: 'cudaErrorMemoryAllocation' }), true);
  assert.equal(isOutOfMemory({ library: 'workbench', code: 2, name: 'WORKBENCH_PLAN_ERROR' }), false);
  assert.equal(isOutOfMemory({ library: 'cuda', code: 700, name: 'CUDA_ERROR_ILLEGAL_ADDRESS' }), false);
  assert.equal(isOutOfMemory(lookupCode(1)!), false);
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
