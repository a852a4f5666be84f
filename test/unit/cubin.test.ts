import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { cubinKernelSymbols, findKernelSymbol, ptxEntryNames } from '../../core/cubin';
import { ROOT } from '../helpers/cli';

// Built by nvcc 13.0 from samples/vector-add/vector_add.cu (-cubin / -ptx, -arch=sm_90).
const cubin = new Uint8Array(readFileSync(join(ROOT, 'test/fixtures/vector_add.sm_90.cubin')));
const ptx = readFileSync(join(ROOT, 'test/fixtures/vector_add.sm_90.ptx'), 'utf8');

test('kernel symbols are read from a real cubin', () => {
  assert.deepEqual(cubinKernelSymbols(cubin), ['_Z6vecAddPKfS0_Pfi']);
  assert.deepEqual(ptxEntryNames(ptx), ['_Z6vecAddPKfS0_Pfi']);
});

test('a kernel name as written finds its mangled symbol', () => {
  const symbols = ['_Z6vecAddPKfS0_Pfi', '_Z7vecAdd2Pf', 'plain_c', '_ZN2ns6reduceEPf'];
  assert.equal(findKernelSymbol(symbols, 'vecAdd'), '_Z6vecAddPKfS0_Pfi');
  assert.equal(findKernelSymbol(symbols, 'vecAdd2'), '_Z7vecAdd2Pf');
  assert.equal(findKernelSymbol(symbols, 'plain_c'), 'plain_c');
  assert.equal(findKernelSymbol(symbols, 'reduce'), '_ZN2ns6reduceEPf');
  assert.equal(findKernelSymbol(symbols, 'vecAd'), null);
});

test('what is not a 64-bit ELF image is refused', () => {
  assert.throws(() => cubinKernelSymbols(new Uint8Array(100)), /not an ELF/);
  assert.throws(() => cubinKernelSymbols(cubin.subarray(0, 200)), /truncated/);
});
