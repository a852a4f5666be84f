import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BoundedOutput } from '../../main/tools/bounded-output';

test('output within the bound is kept whole', () => {
  const out = new BoundedOutput(16, 16);
  out.push(Buffer.from('line one\nline two\n'));
  assert.equal(out.text(), 'line one\nline two\n');
  assert.equal(out.droppedBytes, 0);
});

test('past the bound: the head, a line that says how much was dropped, and the tail from a line start', () => {
  const out = new BoundedOutput(10, 64);
  for (let i = 0; i < 1000; i++) out.push(Buffer.from(`line ${i}\n`));
  out.push(Buffer.from('========= ERROR SUMMARY: 0 errors\n'));
  const text = out.text();
  assert.ok(text.startsWith('line 0\nlin'));
  assert.match(text, /\[… [\d,]+ bytes of output not kept …\]/);
  assert.ok(text.endsWith('========= ERROR SUMMARY: 0 errors\n'));
  assert.ok(out.droppedBytes > 8000);
  assert.ok(text.length < 200, text);
});
