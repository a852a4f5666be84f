import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { arrangeFindings, findingRank } from '../../core/sanitizer/arrange-findings';
import { countLabel } from '../../core/sanitizer/finding-places';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import { describeGroup } from '../../core/sanitizer/group';
import { emptySummary } from '../../core/sanitizer/parse-text';
import { parseSanitizerTextFindings } from '../../core/sanitizer/parse-text-findings';
import { parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { judgeSanitizeRun } from '../../core/sanitizer/sanitize-report';
import { ROOT } from '../helpers/cli';

// Issue 26, item 8: the sanitizer's rows in the order a person fixes them, the workbench runner's own buffers not
// called the user's leak, and a race row whose counts agree. Every record here is compute-sanitizer's own, recorded
// on an H100 (test/fixtures/sanitizer/h100).
const H100 = join(ROOT, 'test/fixtures/sanitizer/h100');
const xml = (name: string, tool: SanitizerTool = 'memcheck') => parseSanitizerXml(tool, readFileSync(join(H100, name), 'utf8')).findings;
const nullPointer = () => parseSanitizerTextFindings('memcheck', readFileSync(join(H100, 'gallery-null-pointer-broken.txt'), 'utf8')).findings;

test('the null-pointer run: the kernel finding first, the API errors the dead context gave (cuEventDestroy_v2 ×2) folded under it', () => {
  const { groups } = arrangeFindings(nullPointer());
  assert.deepEqual(
    groups.map((g) => [g.kind, g.count, g.followedBy?.map((f) => [f.example.api?.call, f.count])]),
    [
      [
        'memory-access',
        32,
        [
          ['cuEventDestroy_v2', 2],
          ['cuEventSynchronize', 1],
        ],
      ],
    ],
  );
});

test('a kernel finding the tool named no place for still comes before the API errors that say "fix the kernel finding first"', () => {
  // The same records with the faulting place taken away (as an imprecise fault reports it): nothing to fold under,
  // so the API errors stay rows — below the kernel's.
  const placeless = nullPointer().map((f) => (f.kind === 'memory-access' ? { ...f, kind: 'device-error' as const, where: null } : f));
  const { groups } = arrangeFindings(placeless);
  assert.deepEqual(
    groups.map((g) => [g.kind, g.count]),
    [
      ['device-error', 32],
      ['api-error', 2],
      ['api-error', 1],
    ],
  );
  assert.match(describeGroup(groups[1]!), /^cuEventDestroy_v2 returned .*fix the kernel finding first\.$/);
  assert.deepEqual(
    groups.map((g) => findingRank(g)),
    [0, 1, 1],
  );
});

test('leaks come after the errors: the off-by-one write, then the two cudaMalloc blocks the program never freed', () => {
  const { groups } = arrangeFindings(xml('memcheck-null.xml'));
  assert.deepEqual(
    groups.map((g) => g.kind),
    ['memory-access', 'leak', 'leak'],
  );
});

test("a plan re-run under the tool: what the runner still held after the fault is the runner's, set apart, not the user's leak", () => {
  // memcheck's leak records of a program that faulted and exited with its buffers allocated, as the runner does after a
  // sticky error (its frames are the program's: the rule for a runner target does not depend on them).
  const found = xml('memcheck-null.xml');
  const asProgram = arrangeFindings(found);
  const asRunner = arrangeFindings(found, { runner: true });
  assert.equal(asProgram.held.length, 0);
  assert.deepEqual(
    asRunner.groups.map((g) => g.kind),
    ['memory-access'],
  );
  assert.deepEqual(
    asRunner.held.map((h) => [h.holder, h.bytes, h.blocks]),
    [['workbench-runner', 8000, 2]],
  );
  assert.equal(asRunner.findings, asProgram.findings - 2, 'the held blocks are not counted as findings');
  const judged = judgeSanitizeRun({
    tool: 'memcheck',
    exitCode: 0,
    signal: null,
    timedOut: null,
    cancelled: false,
    findings: asRunner.findings,
    groups: asRunner.groups,
    held: asRunner.held,
    summary: { ...emptySummary(), errorsReported: 35 },
    xmlFiles: 1,
    problems: [],
  });
  assert.equal(judged.headline, 'memcheck found 33 findings in 1 place.', 'no bytes "leaked"');
  assert.match(judged.details.join(' '), /Held by the workbench's runner at exit — not a leak of yours: 8,000 bytes in 2 blocks/);
});

test('a race row counts what its sentence counts: the hazards, and says how many records carried them', () => {
  const [analysis] = arrangeFindings(xml('racecheck-race.xml', 'racecheck')).groups;
  assert.deepEqual([analysis!.count, analysis!.hazards], [1, 512]);
  assert.deepEqual(countLabel(analysis!), {
    text: '512 hazards in 1 record',
    title:
      '512 hazards in 1 record: a hazard is one pair of accesses, by two threads, that racecheck found unordered, and one record sums up the hazards between the same two lines.',
  });
  assert.match(describeGroup(analysis!), / — 512 hazards\b/);
  const [each] = arrangeFindings(xml('racecheck-race-report-all.xml', 'racecheck')).groups;
  assert.equal(countLabel(each!).text, `${each!.hazards.toLocaleString('en-US')} hazards`);
  assert.equal(each!.hazards, each!.count);
});

test('other rows count records, and say of what', () => {
  const [write, leak] = arrangeFindings(xml('memcheck-null.xml')).groups;
  assert.deepEqual(countLabel(write!), { text: '×32', title: '32 threads: one record each' });
  assert.deepEqual(countLabel(leak!), { text: '×1', title: '1 allocation: one record each' });
});
