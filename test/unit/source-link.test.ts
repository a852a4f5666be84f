import assert from 'node:assert/strict';
import { test } from 'node:test';

import { basenameOf, dirnameOf, isAbsolutePath, joinPath, normalizePath, resolveShownPath } from '../../core/workspace/paths';
import { EMPTY_SOURCE_CONTEXT, kernelNameOf, openDocumentForRef, resultSample, resultSources, sourceCandidates } from '../../core/workspace/source-link';

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

const doc = (id: string, path: string | null, kernels: string[] = []) => ({ id, path, name: path ? basenameOf(path) : `${id}.cu`, kernels });

test('an open file a link means: the one defining its kernel, else the one whose path ends like the link’s', () => {
  const open = [
    doc('trap', '/w/samples/trap/broken.cu', ['trap']),
    doc('race', '/w/samples/race/broken.cu', ['reverseBlocks']),
    doc('k', '/w/k.cu', ['scale']),
  ];
  // A report names the recording machine's path: the open file defining its kernel is the one.
  assert.equal(openDocumentForRef({ file: '/other/machine/broken.cu', line: 9, kernel: 'reverseBlocks' }, open), 'race');
  assert.equal(openDocumentForRef({ file: '/other/machine/race.cu', line: 9, kernel: 'reverseBlocks(float *, int)' }, open), 'race');
  // No kernel and two files of that name: no guess.
  assert.equal(openDocumentForRef({ file: 'broken.cu', line: 9 }, open), null);
  // The longer ending tells them apart.
  assert.equal(openDocumentForRef({ file: 'trap/broken.cu', line: 9 }, open), 'trap');
  // One file of that name: it.
  assert.equal(openDocumentForRef({ file: '/elsewhere/k.cu', line: 2 }, open), 'k');
  // A file of that name that compiled without the kernel is not it.
  assert.equal(openDocumentForRef({ file: '/elsewhere/k.cu', line: 2, kernel: 'other' }, open), null);
  // Two files define the kernel: ask.
  assert.equal(openDocumentForRef({ file: '/x/y.cu', line: 1, kernel: 'scale' }, [...open, doc('k2', '/v/k2.cu', ['scale'])]), null);
  assert.equal(kernelNameOf('ns::scale<float>(float *, int)'), 'scale');
});

test('a recorded result’s own sample: the one named like the result whose plan it ran, else the only plan that fits', () => {
  const samples = [
    { name: 'trap', plan: 'T', planPath: '/w/samples/trap/plan.json', sourcePaths: ['/w/samples/trap/broken.cu'] },
    { name: 'device-assert', plan: 'D', planPath: '/w/samples/device-assert/plan.json', sourcePaths: ['/w/samples/device-assert/broken.cu'] },
    { name: 'oob-off-by-one', plan: 'D', planPath: '/w/samples/oob-off-by-one/plan.json', sourcePaths: [] },
  ];
  const isD = (plan: unknown) => plan === 'D';
  assert.equal(resultSample('/w/runs/device-assert.json', samples, isD)?.name, 'device-assert');
  assert.equal(resultSample('/w/runs/result.json', samples, isD), null, 'two plans fit and the name does not tell');
  assert.equal(resultSample('/w/runs/result.json', samples, (p) => p === 'T')?.name, 'trap');
  assert.equal(
    resultSample('/w/runs/trap.json', samples, () => false),
    null,
    'a name alone is not enough',
  );
  assert.deepEqual(resultSources('/w/runs/device-assert.json', samples[1]!), {
    documents: {},
    paths: [],
    folders: ['/w/runs', '/w/samples/device-assert'],
  });
  // A copy beside the result first, then its own sample's broken.cu: no other sample's.
  assert.deepEqual(sourceCandidates({ file: 'broken.cu', line: 9 }, resultSources('/w/runs/device-assert.json', samples[1]!)).paths, [
    '/w/runs/broken.cu',
    '/w/samples/device-assert/broken.cu',
  ]);
});
