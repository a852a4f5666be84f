import assert from 'node:assert/strict';
import { test } from 'node:test';

import { basenameOf, dirnameOf, isAbsolutePath, joinPath, normalizePath, resolveShownPath } from '../../core/workspace/paths';
import { EMPTY_SOURCE_CONTEXT, sourceCandidates } from '../../core/workspace/source-link';

test('paths as text: folders, names, joins', () => {
  assert.equal(basenameOf('/w/samples/trap/broken.cu'), 'broken.cu');
  assert.equal(dirnameOf('/w/samples/trap/broken.cu'), '/w/samples/trap');
  assert.equal(dirnameOf('/broken.cu'), '/');
  assert.equal(joinPath('/w/runs', 'broken.cu'), '/w/runs/broken.cu');
  assert.equal(joinPath('/w/runs', '../samples/./k.cu'), '/w/samples/k.cu');
  assert.equal(joinPath('/w/runs', '/abs/k.cu'), '/abs/k.cu');
  assert.equal(normalizePath('/../../x'), '/x');
  assert.equal(isAbsolutePath('C:\\\\work\\\\k.cu'), true);
  assert.equal(isAbsolutePath('k.cu'), false);
});

test('a typed save path goes into the folder shown, or stands as a full path', () => {
  assert.equal(resolveShownPath('/home/me', 'mine.cu'), '/home/me/mine.cu');
  assert.equal(resolveShownPath('/home/me', ' sub/mine.cu '), '/home/me/sub/mine.cu');
  assert.equal(resolveShownPath('/home/me', '/tmp/x.json'), '/tmp/x.json');
  assert.equal(resolveShownPath('/home/me', '   '), null);
});

test('where a named file is: the document it was compiled from, else beside the plan, sample or result', () => {
  assert.deepEqual(sourceCandidates({ file: 'broken.cu', line: 9 }, { documents: { 'broken.cu': 'doc1' }, paths: [], folders: ['/w/runs'] }), {
    documentId: 'doc1',
    paths: ['/w/runs/broken.cu'],
  });
  assert.deepEqual(
    sourceCandidates(
      { file: 'broken.cu', line: 9 },
      { documents: {}, paths: ['/w/samples/trap/broken.cu', '/w/samples/trap/ref.cu'], folders: ['/w/samples/trap'] },
    ),
    { documentId: null, paths: ['/w/samples/trap/broken.cu'] },
  );
  assert.deepEqual(sourceCandidates({ file: '/abs/k.cu', line: 1 }, { ...EMPTY_SOURCE_CONTEXT, folders: ['/w'] }), { documentId: null, paths: ['/abs/k.cu'] });
  // A recorded result names only a file name: nothing open is taken for it, only what is beside the result.
  assert.deepEqual(sourceCandidates({ file: 'broken.cu', line: 9 }, EMPTY_SOURCE_CONTEXT), { documentId: null, paths: [] });
});

test("a bundle's files: its own documents by name, never a path on this machine", () => {
  const bundle = { documents: { 'broken.cu': 'b1' }, paths: [], folders: [], onlyDocuments: true };
  assert.deepEqual(sourceCandidates({ file: '/work/main/samples/race/broken.cu', line: 7 }, bundle), { documentId: 'b1', paths: [] });
  assert.deepEqual(sourceCandidates({ file: 'broken.cu', line: 7 }, bundle), { documentId: 'b1', paths: [] });
  assert.deepEqual(sourceCandidates({ file: '/etc/passwd', line: 1 }, { ...bundle, folders: ['/w'] }), { documentId: null, paths: [] });
});
