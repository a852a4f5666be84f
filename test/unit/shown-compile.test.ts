import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { CompileResult } from '../../core/compile/compile-result';
import { shownCompile } from '../../core/compile/shown-compile';

const compile = (ok: boolean, key: string) => ({ ok, key }) as CompileResult;

test('while the text does not compile, the last good compile stays, marked stale', () => {
  const good = compile(true, 'good');
  const failed = compile(false, 'failed');
  assert.deepEqual(shownCompile(failed, good), { result: good, stale: true });
  assert.deepEqual(shownCompile(good, good), { result: good, stale: false });
  const newer = compile(true, 'newer');
  assert.deepEqual(shownCompile(newer, good), { result: newer, stale: false });
  // Never compiled well: the failure itself (its errors), not stale.
  assert.deepEqual(shownCompile(failed, null), { result: failed, stale: false });
  assert.deepEqual(shownCompile(null, null), { result: null, stale: false });
});
