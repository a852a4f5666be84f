import assert from 'node:assert/strict';
import { test } from 'node:test';

import { tabLabels } from '../../core/workspace/tab-labels';

const labels = (docs: { id: string; name: string; path: string | null }[]) => Object.fromEntries([...tabLabels(docs)].map(([id, l]) => [id, l.folder]));

test('tabs of the same name show the folder that tells them apart; unique names show none', () => {
  assert.deepEqual(
    labels([
      { id: 'a', name: 'broken.cu', path: '/w/samples/trap/broken.cu' },
      { id: 'b', name: 'broken.cu', path: '/w/samples/device-assert/broken.cu' },
      { id: 'c', name: 'broken.cu', path: '/w/samples/oob-off-by-one/broken.cu' },
      { id: 'd', name: 'vector_add.cu', path: '/w/samples/vector-add/vector_add.cu' },
    ]),
    { a: 'trap', b: 'device-assert', c: 'oob-off-by-one', d: null },
  );
});

test('as many folders as it takes, from the end', () => {
  assert.deepEqual(
    labels([
      { id: 'a', name: 'k.cu', path: '/home/me/one/src/k.cu' },
      { id: 'b', name: 'k.cu', path: '/home/me/two/src/k.cu' },
    ]),
    { a: 'one/src', b: 'two/src' },
  );
  assert.deepEqual(
    labels([
      { id: 'a', name: 'k.cu', path: '/src/k.cu' },
      { id: 'b', name: 'k.cu', path: '/a/src/k.cu' },
    ]),
    { a: '/src', b: '/a/src' },
  );
});

test('a document never saved says so beside its namesakes', () => {
  assert.deepEqual(
    labels([
      { id: 'a', name: 'untitled.cu', path: null },
      { id: 'b', name: 'untitled.cu', path: '/tmp/untitled.cu' },
    ]),
    { a: 'not saved', b: '/tmp' },
  );
});
