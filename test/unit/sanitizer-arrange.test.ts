import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { arrangeFindings, foldAfterFault, followsFault, isKernelFault } from '../../core/sanitizer/arrange-findings';
import type { SanitizerFinding, SanitizerTool } from '../../core/sanitizer/findings';
import { describeFollowers, describeGroup, groupFindings } from '../../core/sanitizer/group';
import { emptySummary, mergeText, parseSanitizerText } from '../../core/sanitizer/parse-text';
import { parseSanitizerTextFindings } from '../../core/sanitizer/parse-text-findings';
import { parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { judgeSanitizeRun } from '../../core/sanitizer/sanitize-report';
import { FOUND_EXIT_CODE } from '../../core/sanitizer/sanitizer-args';
import { ROOT } from '../helpers/cli';

const H200 = join(ROOT, 'test/fixtures/programs/h200');
const H100 = join(ROOT, 'test/fixtures/sanitizer/h100');
const xml = (dir: string, name: string, tool: SanitizerTool = 'memcheck') => {
  const r = parseSanitizerXml(tool, readFileSync(join(dir, name), 'utf8'));
  assert.deepEqual(r.problems, []);
  return r.findings;
};
const text = (name: string) => parseSanitizerTextFindings('memcheck', readFileSync(join(H200, name), 'utf8')).findings;
const basename = (p: string | null | undefined) => p?.slice(p.lastIndexOf('/') + 1) ?? null;

test("PyTorch's device-side assert: one finding, the assert, with the two API errors the dead context gave folded under it", () => {
  const found = xml(H200, 'pytorch-device-assert.memcheck.xml');
  assert.equal(found[0]!.kind, 'device-error', 'the XML’s Imprecise record is the assert, as the text calls it');
  assert.equal(found[0]!.text, 'Warp assert');
  const { groups, findings, held } = arrangeFindings(found);
  assert.deepEqual([groups.length, findings, held.length], [1, 34, 0]);
  const [assertGroup] = groups;
  assert.deepEqual([assertGroup!.kind, assertGroup!.count, assertGroup!.where?.func], ['device-error', 32, '__assertfail']);
  assert.deepEqual(
    assertGroup!.followedBy?.map((g) => [g.example.api?.call, g.example.api?.error]),
    [
      ['cudaLaunchKernel', 'cudaErrorAssert'],
      ['cudaGetLastError', 'cudaErrorAssert'],
    ],
  );
  assert.deepEqual([basename(assertGroup!.userFrame?.file), assertGroup!.userFrame?.line], ['embed.py', 16], 'the launch line, past torch’s own .py files');
  assert.equal(
    describeFollowers(assertGroup!),
    '… and 2 API errors that followed it, because the context was dead: cudaLaunchKernel (cudaErrorAssert), cudaGetLastError (cudaErrorAssert).',
  );
  // The text of the same run arranges the same way.
  const fromText = arrangeFindings(text('pytorch-device-assert.memcheck.txt'));
  assert.deepEqual(
    fromText.groups.map((g) => [g.kind, g.count, g.followedBy?.length ?? 0]),
    [['device-error', 32, 2]],
  );
});

test('CuPy out of bounds: the invalid read first, the launch failure under it, the arrays CuPy held apart', () => {
  const { groups, findings, held } = arrangeFindings(xml(H200, 'cupy-out-of-bounds.memcheck.xml'));
  assert.equal(findings, 2);
  assert.deepEqual(
    groups.map((g) => [g.kind, g.followedBy?.map((f) => f.example.api?.call)]),
    [['memory-access', ['cuLaunchKernel']]],
  );
  assert.deepEqual([basename(groups[0]!.userFrame?.file), groups[0]!.userFrame?.line], ['oob.py', 29]);
  assert.deepEqual(
    held.map((h) => [h.holder, h.bytes, h.blocks, h.groups.map((g) => [basename(g.userFrame?.file), g.userFrame?.line, g.heldBy])]),
    [
      [
        'cupy-arrays',
        8000,
        2,
        [
          ['oob.py', 27],
          ['oob.py', 28],
        ].map(([f, l]) => [f, l, 'cupy-arrays']),
      ],
    ],
  );
});

test('a ctypes leak stays a finding; an out-of-memory error is not a fault and folds nothing', () => {
  const ctypes = arrangeFindings(xml(H200, 'ctypes-leak.memcheck.xml'));
  assert.deepEqual([ctypes.findings, ctypes.held, ctypes.groups.map((g) => [g.kind, g.leakedBytes])], [1, [], [['leak', 1_048_576]]]);
  const oom = arrangeFindings(text('pytorch-oom-too-large.memcheck.txt'));
  assert.deepEqual(
    oom.groups.map((g) => [g.example.api?.call, g.count, g.followedBy]),
    [
      ['cudaMalloc', 2, undefined],
      ['cudaGetLastError', 2, undefined],
    ],
  );
  assert.deepEqual(
    oom.held.map((h) => [h.holder, h.bytes, h.blocks]),
    [['pytorch-caching-allocator', 120_091_312_128, 2]],
  );
  assert.equal(oom.findings, 4);
});

test("the H100 off-by-one: cudaDeviceSynchronize's 719 folds under the write; the program's own two cudaMalloc leaks stay, after it", () => {
  const info = parseSanitizerText(readFileSync(join(H100, 'memcheck-oob.xml.txt'), 'utf8'));
  const { groups, findings } = arrangeFindings(mergeText(xml(H100, 'memcheck-oob.xml'), info));
  assert.deepEqual(
    groups.map((g) => [g.kind, g.followedBy?.map((f) => f.example.api?.call) ?? null]),
    [
      ['memory-access', ['cudaDeviceSynchronize']],
      ['leak', null],
      ['leak', null],
    ],
  );
  assert.equal(findings, 4, 'the folded error is still a finding, under its fault');
});

test('without a kernel fault the tool saw, a sticky API error stays a finding (its fault is what it shows)', () => {
  const api = xml(H100, 'memcheck-oob.xml').filter((f) => f.kind === 'api-error');
  assert.ok(api.length === 1 && followsFault(groupFindings(api)[0]!));
  assert.deepEqual(
    arrangeFindings(api).groups.map((g) => g.kind),
    ['api-error'],
  );
  assert.equal(foldAfterFault(groupFindings(api), null).length, 1);
  const write = xml(H100, 'memcheck-oob.xml').find((f) => f.kind === 'memory-access')!;
  assert.ok(isKernelFault(write));
  assert.ok(!isKernelFault({ ...write, where: null }));
  const race = xml(H200, 'cupy-race.racecheck.xml', 'racecheck')[0]!;
  assert.ok(!isKernelFault(race), 'a race does not end the kernel');
});

test('kernel findings come first, then what happened on the host, each in grouping order', () => {
  const leak = xml(H200, 'ctypes-leak.memcheck.xml')[0]!;
  const race = xml(H200, 'cupy-race.racecheck.xml', 'racecheck')[0]!;
  const warning: SanitizerFinding = { ...race, severity: 'warning' };
  assert.deepEqual(
    groupFindings([leak, warning]).map((g) => g.kind),
    ['leak', 'race'],
    'grouping alone: errors first',
  );
  assert.deepEqual(
    arrangeFindings([leak, warning]).groups.map((g) => g.kind),
    ['race', 'leak'],
  );
});

test('the verdict: held memory alone is clean, says who held it and why; with findings, the details say it apart', () => {
  const base = { tool: 'memcheck' as const, signal: null, timedOut: null, cancelled: false, xmlFiles: 1, problems: [] };
  const pool = arrangeFindings(xml(H200, 'cupy-race.memcheck.xml'));
  const clean = judgeSanitizeRun({
    ...base,
    exitCode: FOUND_EXIT_CODE,
    findings: pool.findings,
    groups: pool.groups,
    held: pool.held,
    summary: { ...emptySummary(), errorsReported: 4, leakedBytes: 264_192, leakedAllocations: 4 },
  });
  assert.equal(clean.verdict, 'clean');
  assert.equal(clean.headline, "✓ memcheck found nothing of yours: the 264,192 bytes it reported as leaked were held at exit by CuPy's memory pool.");
  assert.match(
    clean.details[0]!,
    /^Held by CuPy's memory pool at exit — not a leak of yours: 264,192 bytes in 4 blocks, asked for at reduce\.py:26, reduce\.py:23, reduce\.py:24\. CuPy's memory pool keeps/,
  );
  // The same exit code with nothing held is still no verdict.
  assert.equal(
    judgeSanitizeRun({ ...base, exitCode: FOUND_EXIT_CODE, findings: 0, groups: [], summary: { ...emptySummary(), errorsReported: 4 } }).verdict,
    'tool-failed',
  );

  const oob = arrangeFindings(xml(H200, 'cupy-out-of-bounds.memcheck.xml'));
  const found = judgeSanitizeRun({
    ...base,
    exitCode: FOUND_EXIT_CODE,
    findings: oob.findings,
    groups: oob.groups,
    held: oob.held,
    summary: { ...emptySummary(), errorsReported: 4 },
  });
  assert.equal(found.headline, 'memcheck found 2 findings in 1 place.', 'no bytes "leaked": the arrays were CuPy’s');
  assert.match(found.details.join(' '), /Held by CuPy arrays still alive at exit — not a leak of yours: 8,000 bytes in 2 blocks/);
  assert.match(describeGroup(oob.groups[0]!), /^Invalid read of 4 bytes out of bounds in scale at 856f8193deab3878984904ecb40fceb5f1fe63c4\.cubin\.cu:4/);
});
