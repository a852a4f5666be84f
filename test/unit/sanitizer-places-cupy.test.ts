import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { arrangeFindings } from '../../core/sanitizer/arrange-findings';
import { compiledAs, documentForPlace, findingPlaces, placeLabel } from '../../core/sanitizer/finding-places';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import { parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { placeCupyKernels } from '../../main/tools/cupy-kernel-sources';
import { ROOT } from '../helpers/cli';
import { relocatedRecording } from '../helpers/program-fixtures';

// A CuPy RawKernel's finding leads to its line in the user's .py, not to CuPy's copy of the source the tool named
// (/tmp/…/<sha>.cubin.cu, deleted once the program ended); that copy stays as a detail. Reports and CuPy's saved
// kernel sources recorded on an H200.
const H200 = join(ROOT, 'test/fixtures/programs/h200');
const OOB_DIR = join(ROOT, 'samples/programs/cupy-out-of-bounds');
const OOB_PY = join(OOB_DIR, 'oob.py');
const RACE_PY = join(ROOT, 'samples/programs/cupy-race/reduce.py');
const OOB_COPY = '/tmp/tmp9kuab6ub/856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu';

async function placed(tool: SanitizerTool, xml: string, cache: string, command: string[], cwd: string) {
  const { groups } = arrangeFindings(parseSanitizerXml(tool, relocatedRecording(join(H200, xml))).findings);
  return (await placeCupyKernels(groups, { cache: { dir: join(H200, cache), private: true }, command, cwd })).groups;
}

test('the out-of-bounds read leads to oob.py:21, then the launching line; CuPy’s copy is a detail, never a link', async () => {
  const [read] = await placed('memcheck', 'cupy-out-of-bounds.memcheck.xml', 'cupy-cache', ['python3', 'oob.py'], OOB_DIR);
  assert.deepEqual(findingPlaces(read!), [
    { file: OOB_PY, line: 21, role: 'at', copy: { file: OOB_COPY, line: 4 } },
    { file: OOB_PY, line: 29, role: 'frame' },
  ]);
  assert.equal(placeLabel(read!), 'oob.py:21');
  assert.ok(!findingPlaces(read!).some((p) => p.file.endsWith('.cubin.cu')), 'no link to the deleted copy');
  assert.equal(compiledAs(read!), `CuPy compiled it as ${OOB_COPY}:4.`);
  // The editor marks the open oob.py, whatever the copy's folder was.
  const docs = [{ id: 'py', path: OOB_PY, name: 'oob.py' }];
  assert.equal(documentForPlace(findingPlaces(read!)[0]!.file, docs, { chosen: {}, documents: {}, folders: [] }), 'py');
});

test('both sides of a CuPy race lead to reduce.py (the read at 15, the write at 13); their one copy said once', async () => {
  const [hazard] = await placed('racecheck', 'cupy-race.racecheck.xml', 'cupy-cache2', ['python3', RACE_PY], H200);
  const places = findingPlaces(hazard!);
  assert.deepEqual(
    places.map((p) => [p.file, p.line, p.role, p.copy?.line]),
    [[RACE_PY, 15, 'first', 7], [RACE_PY, 13, 'second', 5], ...places.slice(2).map((p) => [p.file, p.line, 'frame', undefined])],
  );
  assert.equal(placeLabel(hazard!), 'reduce.py:15');
  const copy = places[0]!.copy!.file;
  assert.match(copy, /617c27d1b5ba2149fb09f4f86f76bc89d29f2bb4\.cubin\.cu$/);
  assert.equal(compiledAs(hazard!), `CuPy compiled it as ${copy}:7, ${copy}:5.`);
});

test('without a place in the .py the tool’s own path stays the link; a line found by its text alone is said so', async () => {
  const { groups } = arrangeFindings(parseSanitizerXml('memcheck', relocatedRecording(join(H200, 'cupy-out-of-bounds.memcheck.xml'))).findings);
  const [unplaced] = groups;
  assert.deepEqual(findingPlaces(unplaced!)[0], { file: OOB_COPY, line: 4, role: 'at', kernel: 'scale' });
  assert.equal(compiledAs(unplaced!), null);
  const byText = { ...unplaced!, sourceMapped: { file: OOB_PY, line: 21, cachePath: OOB_COPY, cacheLine: 4, how: 'line-text' as const } };
  assert.equal(findingPlaces(byText)[0]!.file, OOB_PY);
  assert.match(compiledAs(byText)!, /:4\. Found in your file by the line’s own text/);
  // One side of a race found, the other not: each side as it is.
  const [hazard] = await placed('racecheck', 'cupy-race.racecheck.xml', 'cupy-cache2', ['python3', RACE_PY], H200);
  const half = { ...hazard!, raceSourceMapped: { first: hazard!.raceSourceMapped!.first, second: null } };
  const [first, second] = findingPlaces(half);
  assert.deepEqual([first!.file, first!.line], [RACE_PY, 15]);
  assert.match(second!.file, /\.cubin\.cu$/);
  assert.equal(second!.copy, undefined);
});
