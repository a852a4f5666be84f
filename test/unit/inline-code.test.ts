import assert from 'node:assert/strict';
import { test } from 'node:test';

import { splitInlineCode } from '../../core/text/inline-code';

test('`code` spans come apart from prose, without their backticks', () => {
  assert.deepEqual(splitInlineCode('A device-side assert failed at broken.cu:9: `i < n` (CUDA_ERROR_ASSERT)'), [
    { kind: 'text', text: 'A device-side assert failed at broken.cu:9: ' },
    { kind: 'code', text: 'i < n' },
    { kind: 'text', text: ' (CUDA_ERROR_ASSERT)' },
  ]);
  assert.deepEqual(splitInlineCode('`a` and `b`'), [
    { kind: 'code', text: 'a' },
    { kind: 'text', text: ' and ' },
    { kind: 'code', text: 'b' },
  ]);
  assert.deepEqual(splitInlineCode('no code here'), [{ kind: 'text', text: 'no code here' }]);
  assert.deepEqual(splitInlineCode('a lone ` stays'), [{ kind: 'text', text: 'a lone ` stays' }]);
  assert.deepEqual(splitInlineCode(''), []);
});
