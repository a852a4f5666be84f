import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { arrangeFindings } from '../../core/sanitizer/arrange-findings';
import { cupySourceName, findKernelLine } from '../../core/sanitizer/cupy-kernel-source';
import { describeGroup } from '../../core/sanitizer/group';
import { parseSanitizerTextFindings } from '../../core/sanitizer/parse-text-findings';
import { parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { placeCupyKernels, scriptOf, tidyCache } from '../../main/tools/cupy-kernel-sources';
import { ROOT } from '../helpers/cli';
import { relocatedRecording } from '../helpers/program-fixtures';

// CuPy's saved kernel sources (CUPY_CACHE_SAVE_CUDA_SOURCE=1) recorded on an H200, and the samples they came from.
const H200 = join(ROOT, 'test/fixtures/programs/h200');
const OOB_SOURCE = join(H200, 'cupy-cache/856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu');
const RACE_SOURCE = join(H200, 'cupy-cache2/617c27d1b5ba2149fb09f4f86f76bc89d29f2bb4.cubin.cu');
const ARANGE_SOURCE = join(H200, 'cupy-cache/c1b420ba14a9f4b1c146cc6425af2ea77d3bdb94.cubin.cu');
const OOB_PY = join(ROOT, 'samples/programs/cupy-out-of-bounds/oob.py');
const RACE_PY = join(ROOT, 'samples/programs/cupy-race/reduce.py');
const read = (path: string) => readFileSync(path, 'utf8');
const py = (path: string, text = read(path)) => ({ path, text });

const scratch = mkdtempSync(join(tmpdir(), 'wb-cupy-source-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test("CuPy's name for a saved source: a SHA-1, .cubin.cu; from a path or a name", () => {
  assert.equal(cupySourceName('/tmp/tmp9kuab6ub/856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu'), '856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu');
  assert.equal(cupySourceName('617c27d1b5ba2149fb09f4f86f76bc89d29f2bb4.cubin.cu'), '617c27d1b5ba2149fb09f4f86f76bc89d29f2bb4.cubin.cu');
  for (const other of ['/work/kernel.cu', '856f8193.cubin.cu', '/a/856f8193deab3878984904ecb40fceb5f1fe63c4.cubin', null])
    assert.equal(cupySourceName(other), null);
});

test('the whole source in the .py gives every line: oob.py’s read at line 21, reduce.py’s race at 15 and 13', () => {
  // The source starts with the newline after r""": its line 1 is the line of SOURCE = r""".
  assert.deepEqual(findKernelLine(read(OOB_SOURCE), 4, [py(OOB_PY)]), { file: OOB_PY, line: 21, how: 'whole-source' });
  assert.match(read(OOB_PY).split('\n')[20]!, /if \(i <= n\) out\[i\] = 2\.0f \* in\[i\];/);
  assert.deepEqual(findKernelLine(read(RACE_SOURCE), 7, [py(RACE_PY)]), { file: RACE_PY, line: 15, how: 'whole-source' });
  assert.deepEqual(findKernelLine(read(RACE_SOURCE), 5, [py(RACE_PY)]), { file: RACE_PY, line: 13, how: 'whole-source' });
  // Windows line ends in the .py change nothing; the first file that holds it wins.
  assert.deepEqual(findKernelLine(read(RACE_SOURCE), 7, [py(OOB_PY), py('/x/reduce.py', read(RACE_PY).replace(/\n/g, '\r\n'))]), {
    file: '/x/reduce.py',
    line: 15,
    how: 'whole-source',
  });
});

test('when the whole source is not there as written, the line’s own text, found once', () => {
  // The kernel built from pieces: an extra line inside the string, so the saved source is no longer a substring.
  const edited = read(RACE_PY).replace('  __shared__ float slots[256];\n', '  __shared__ float slots[256];\n  // built elsewhere\n');
  assert.deepEqual(findKernelLine(read(RACE_SOURCE), 7, [py('/x/reduce.py', edited)]), { file: '/x/reduce.py', line: 16, how: 'line-text' });
  // Found in two files: no answer rather than a guess.
  assert.equal(findKernelLine(read(RACE_SOURCE), 7, [py('/x/a.py', edited), py('/x/b.py', edited)]), null);
  // A line too short to stand for itself (`}`), or out of the source's range.
  assert.equal(findKernelLine(read(RACE_SOURCE), 10, [py('/x/reduce.py', edited)]), null);
  assert.equal(findKernelLine(read(RACE_SOURCE), 99, [py(RACE_PY)]), null);
  // CuPy's own kernel (cupy.arange's), not in the user's file.
  assert.equal(findKernelLine(read(ARANGE_SOURCE), 18, [py(OOB_PY)]), null);
});

test('placing the recorded CuPy findings: the read at oob.py:21, both sides of the race in reduce.py, the cache path kept', async () => {
  const oob = arrangeFindings(parseSanitizerXml('memcheck', relocatedRecording(join(H200, 'cupy-out-of-bounds.memcheck.xml'))).findings);
  const placed = await placeCupyKernels(oob.groups, {
    cache: { dir: join(H200, 'cupy-cache'), private: true },
    command: ['python3', 'oob.py'],
    cwd: join(ROOT, 'samples/programs/cupy-out-of-bounds'),
  });
  assert.deepEqual(placed.problems, []);
  const [read4] = placed.groups;
  assert.deepEqual(read4!.sourceMapped, {
    file: OOB_PY,
    line: 21,
    cachePath: '/tmp/tmp9kuab6ub/856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu',
    cacheLine: 4,
    how: 'whole-source',
  });
  assert.equal(read4!.where?.line, 4, 'the tool’s own place is kept');
  assert.match(describeGroup(read4!), /^Invalid read of 4 bytes out of bounds in scale at oob\.py:21 — 1 thread \(232,0,0\) in block \(3,0,0\)/);

  const race = parseSanitizerXml('racecheck', relocatedRecording(join(H200, 'cupy-race.racecheck.xml'))).findings;
  const [hazard] = (
    await placeCupyKernels(arrangeFindings(race).groups, {
      cache: { dir: join(H200, 'cupy-cache2'), private: true },
      command: ['python3', RACE_PY],
      cwd: scratch,
    })
  ).groups;
  assert.deepEqual([hazard!.raceSourceMapped?.first?.line, hazard!.raceSourceMapped?.second?.line, hazard!.sourceMapped?.line], [15, 13, 15]);
  assert.match(describeGroup(hazard!), /between the read at reduce\.py:15 and the write at reduce\.py:13 — 147,456 hazards/);
});

test('from the text (no XML: the program crashed): the names alone are enough, and the script is found from the command', async () => {
  const found = parseSanitizerTextFindings('memcheck', read(join(H200, 'cupy-out-of-bounds.memcheck.txt'))).findings;
  const { groups } = await placeCupyKernels(arrangeFindings(found).groups, {
    cache: { dir: join(H200, 'cupy-cache'), private: true },
    command: ['python3', '-u', 'oob.py', '--size', '1000'],
    cwd: join(ROOT, 'samples/programs/cupy-out-of-bounds'),
  });
  assert.deepEqual([groups[0]!.sourceMapped?.file, groups[0]!.sourceMapped?.line], [OOB_PY, 21]);
  assert.equal(scriptOf(['python3', '-X', 'dev', 'train.py'], '/home/me'), '/home/me/train.py');
  assert.equal(scriptOf(['./run.sh'], '/home/me'), null);
});

test("a source the cache does not hold: the tool's place stays, and the report says why (the caller's own CUPY_CACHE_DIR)", async () => {
  const oob = arrangeFindings(parseSanitizerXml('memcheck', relocatedRecording(join(H200, 'cupy-out-of-bounds.memcheck.xml'))).findings);
  const cwd = join(ROOT, 'samples/programs/cupy-out-of-bounds');
  const own = await placeCupyKernels(oob.groups, { cache: { dir: scratch, private: false }, command: ['python3', 'oob.py'], cwd });
  assert.equal(own.groups[0]!.sourceMapped, undefined);
  assert.match(own.problems[0]!, /is not in CUPY_CACHE_DIR .*saves it only when it compiles the kernel/);
  // Only regular files are read: a folder in the source's place is not.
  const folder = mkdtempSync(join(scratch, 'cache-'));
  mkdirSync(join(folder, '856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu'));
  const none = await placeCupyKernels(oob.groups, { cache: { dir: folder, private: true }, command: ['python3', 'oob.py'], cwd });
  assert.equal(none.groups[0]!.sourceMapped, undefined);
  assert.match(none.problems[0]!, /was not in the workbench's kernel cache/);
});

test("the workbench's kernel cache is trimmed to its bound oldest kernel first, a cubin and its saved source together", async () => {
  const cache = mkdtempSync(join(scratch, 'kept-'));
  const age = (name: string, ageS: number) => {
    const at = Date.now() / 1000 - ageS;
    utimesSync(join(cache, name), at, at);
  };
  const kernel = (hash: string, ageS: number, bytes: number, withSource = true) => {
    writeFileSync(join(cache, `${hash}.cubin`), Buffer.alloc(bytes));
    age(`${hash}.cubin`, ageS);
    if (!withSource) return;
    writeFileSync(join(cache, `${hash}.cubin.cu`), Buffer.alloc(100));
    age(`${hash}.cubin.cu`, ageS);
  };
  const [a, b, c, orphan] = ['a', 'b', 'c', 'd'].map((x) => x.repeat(40));
  kernel(a!, 300, 1000);
  kernel(b!, 200, 1000);
  kernel(c!, 100, 1000);
  // Not CuPy's: never touched, however old or large.
  writeFileSync(join(cache, 'notes.txt'), Buffer.alloc(10_000));
  age('notes.txt', 9999);
  assert.equal(await tidyCache(cache, 5000), 0, 'under the bound: nothing goes');
  assert.equal(await tidyCache(cache, 2300), 1);
  assert.deepEqual(readdirSync(cache).sort(), [`${b}.cubin`, `${b}.cubin.cu`, `${c}.cubin`, `${c}.cubin.cu`, 'notes.txt']);
  // A cubin written without its source (a run killed between the two) goes whatever the bound: CuPy would load it.
  kernel(orphan!, 10, 10, false);
  assert.equal(await tidyCache(cache, 5000), 1);
  assert.equal(existsSync(join(cache, `${orphan}.cubin`)), false);
  assert.equal(await tidyCache(cache, 0), 2);
  assert.deepEqual(readdirSync(cache), ['notes.txt']);
});
