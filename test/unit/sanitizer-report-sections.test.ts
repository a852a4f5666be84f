import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { arrangeFindings } from '../../core/sanitizer/arrange-findings';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import { emptySummary } from '../../core/sanitizer/parse-text';
import { parseSanitizerTextFindings } from '../../core/sanitizer/parse-text-findings';
import { parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { detailsBesideHeld, foldedErrors, heldSection } from '../../core/sanitizer/report-sections';
import { judgeSanitizeRun } from '../../core/sanitizer/sanitize-report';
import { FOUND_EXIT_CODE } from '../../core/sanitizer/sanitizer-args';
import { ROOT } from '../helpers/cli';

// What the findings view shows apart from its rows, as sentences: the API errors folded under a fault, and the
// memory an allocator held at exit. Reports recorded on an H200.
const H200 = join(ROOT, 'test/fixtures/programs/h200');
const xml = (name: string, tool: SanitizerTool = 'memcheck') => parseSanitizerXml(tool, readFileSync(join(H200, name), 'utf8')).findings;

/** The report's verdict and details as a run judges them, with what the view reads. */
function judged(found: ReturnType<typeof xml>) {
  const { groups, findings, held } = arrangeFindings(found);
  const summary = { ...emptySummary(), errorsReported: found.length };
  const facts = { tool: 'memcheck' as const, exitCode: FOUND_EXIT_CODE, signal: null, timedOut: null, cancelled: false, summary, xmlFiles: 1, problems: [] };
  return { groups, heldAtExit: held, ...judgeSanitizeRun({ ...facts, findings, groups, held }) };
}

test('a device-side assert’s row: one line for the two API errors that followed it, each error’s own sentence when opened', () => {
  const { groups } = judged(xml('pytorch-device-assert.memcheck.xml'));
  const folded = foldedErrors(groups[0]!);
  assert.equal(
    folded?.line,
    '… and 2 API errors that followed it, because the context was dead: cudaLaunchKernel (cudaErrorAssert), cudaGetLastError (cudaErrorAssert).',
  );
  assert.deepEqual(
    folded?.errors.map((e) => e.sentence.slice(0, e.sentence.indexOf(':'))),
    ['cudaLaunchKernel returned cudaErrorAssert (710)', 'cudaGetLastError returned cudaErrorAssert (710)'],
  );
  assert.equal(new Set(folded?.errors.map((e) => e.key)).size, 2, 'each has its own key');
  // A row with nothing folded under it shows nothing.
  const ctypes = judged(xml('ctypes-leak.memcheck.xml'));
  assert.equal(foldedErrors(ctypes.groups[0]!), null);
});

test("CuPy's pool held at exit: its own section, said once — not also among the details — with why it is not a leak", () => {
  const report = judged(xml('cupy-race.memcheck.xml'));
  assert.equal(report.verdict, 'clean');
  const section = heldSection(report);
  assert.equal(section?.title, "Not counted: 264,192 bytes (258 KiB) held at exit by CuPy's memory pool");
  assert.equal(section?.holders.length, 1);
  assert.match(section!.holders[0]!.held, /^Held by CuPy's memory pool at exit — not a leak of yours: 264,192 bytes in 4 blocks, asked for at reduce\.py:\d+/);
  assert.match(section!.holders[0]!.why, /free_all_blocks\(\)/);
  // The details hold the same sentence for the text report; the view leaves it to the section.
  assert.ok(report.details.some((d) => d.startsWith(section!.holders[0]!.held)));
  const beside = detailsBesideHeld(report);
  assert.equal(beside.length, report.details.length - 1);
  assert.ok(beside.every((d) => !/^Held by/.test(d)));
  assert.ok(
    beside.some((d) => /memcheck checks the accesses this run made/.test(d)),
    'what a clean answer covers stays',
  );
});

test("PyTorch's caching allocator, from the text: the size in bytes and in GiB; a report without held memory has no section", () => {
  const found = parseSanitizerTextFindings('memcheck', readFileSync(join(H200, 'pytorch-oom-too-large.memcheck.txt'), 'utf8')).findings;
  const report = judged(found);
  assert.equal(heldSection(report)?.title, "Not counted: 120,091,312,128 bytes (111.84 GiB) held at exit by PyTorch's caching allocator");
  assert.equal(heldSection(judged(xml('ctypes-leak.memcheck.xml'))), null);
  assert.equal(heldSection({}), null, 'a report made before held memory was told apart');
  const old = { details: ['a', 'b'] };
  assert.deepEqual(detailsBesideHeld(old), ['a', 'b']);
});
