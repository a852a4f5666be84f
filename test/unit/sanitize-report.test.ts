import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { SanitizerSummary } from '../../core/sanitizer/findings';
import { emptySummary } from '../../core/sanitizer/parse-text';
import { judgeSanitizeRun, type SanitizeFacts } from '../../core/sanitizer/sanitize-report';
import { FOUND_EXIT_CODE, parseEnvAssignment, sanitizerArguments } from '../../core/sanitizer/sanitizer-args';

const summary = (s: Partial<SanitizerSummary> = {}): SanitizerSummary => ({ ...emptySummary(), errorsReported: 0, ...s });
const facts = (f: Partial<SanitizeFacts> = {}): SanitizeFacts => ({
  tool: 'memcheck',
  exitCode: 0,
  signal: null,
  timedOut: null,
  cancelled: false,
  findings: 0,
  groups: [],
  summary: summary(),
  xmlFiles: 1,
  problems: [],
  ...f,
});

test('clean only on evidence: a report written, the summary printed, nothing unreadable', () => {
  assert.equal(judgeSanitizeRun(facts()).verdict, 'clean');
  assert.equal(judgeSanitizeRun(facts({ xmlFiles: 0 })).verdict, 'tool-failed');
  assert.equal(judgeSanitizeRun(facts({ summary: summary({ errorsReported: null }) })).verdict, 'tool-failed');
  assert.equal(judgeSanitizeRun(facts({ problems: ['The report was cut off.'] })).verdict, 'tool-failed');
  assert.match(judgeSanitizeRun(facts({ exitCode: 1 })).headline, /found nothing, but the program itself exited with 1/);
});

test('a tool that saw no CUDA call, a timeout and a cancel each say so, with what was found so far', () => {
  const none = judgeSanitizeRun(facts({ summary: summary({ toolErrors: ['Error: Target application terminated before first instrumented API call'] }) }));
  assert.equal(none.verdict, 'no-cuda');
  const late = judgeSanitizeRun(facts({ timedOut: { afterMs: 600_000 }, findings: 3, groups: [] }));
  assert.deepEqual([late.verdict, /ran past 600 s and was stopped; 3 findings/.test(late.headline)], ['timed-out', true]);
  assert.equal(judgeSanitizeRun(facts({ cancelled: true })).verdict, 'cancelled');
});

test('findings: the count, the places, and print-limit cuts as lower bounds', () => {
  const j = judgeSanitizeRun(facts({ exitCode: FOUND_EXIT_CODE, findings: 10, summary: summary({ errorsReported: 65_537, notPrinted: 65_527 }) }));
  assert.equal(j.verdict, 'found');
  assert.match(j.details.join(' '), /65,527 more findings were not printed \(--print-limit\): the counts are lower bounds; --print-limit 0 shows all/);
});

test('findings read from the text, with no XML report and the tool failing after them, are found, not a tool failure', () => {
  const j = judgeSanitizeRun(
    facts({
      exitCode: null,
      signal: 'SIGSEGV',
      xmlFiles: 0,
      findings: 35,
      summary: summary({ errorsReported: null, toolErrors: ["Error: process didn't terminate successfully"] }),
      problems: ['compute-sanitizer’s XML report is missing: …'],
    }),
  );
  assert.equal(j.verdict, 'found');
  assert.match(j.headline, /memcheck found 35 findings/);
  assert.match(j.details.join(' '), /XML report is missing.*The tool also said: Error: process didn't terminate successfully/);
  assert.equal(judgeSanitizeRun(facts({ xmlFiles: 0, summary: summary({ toolErrors: ['Error: x'] }) })).verdict, 'tool-failed');
});

test('arguments: XML per process, every process followed, leak check for memcheck only, our exit code for findings', () => {
  const args = sanitizerArguments({ tool: 'memcheck', printLimit: 100, launchTimeoutS: 60, leakCheck: true }, '/tmp/x/report-%p.xml');
  assert.deepEqual(args, [
    '--tool',
    'memcheck',
    '--leak-check',
    'full',
    '--print-limit',
    '100',
    '--launch-timeout',
    '60',
    '--error-exitcode',
    String(FOUND_EXIT_CODE),
    '--target-processes',
    'all',
    '--xml',
    '--save',
    '/tmp/x/report-%p.xml',
  ]);
  assert.ok(!sanitizerArguments({ tool: 'racecheck', printLimit: 0, launchTimeoutS: 60, leakCheck: true }, 'r.xml').includes('--leak-check'));
});

test('--env takes NAME=value only', () => {
  assert.deepEqual(parseEnvAssignment('PYTORCH_NO_CUDA_MEMORY_CACHING=1'), { name: 'PYTORCH_NO_CUDA_MEMORY_CACHING', value: '1' });
  assert.deepEqual(parseEnvAssignment('A=b=c'), { name: 'A', value: 'b=c' });
  assert.equal(parseEnvAssignment('1A=2'), null);
  assert.equal(parseEnvAssignment('$(x)=1'), null);
});

test('exit 86 with no finding read is not "found 0 findings": no verdict, and the two ways it happens', () => {
  const j = judgeSanitizeRun(facts({ exitCode: FOUND_EXIT_CODE, findings: 0 }));
  assert.equal(j.verdict, 'tool-failed');
  assert.doesNotMatch(j.headline, /found 0/);
  assert.match(j.details.join(' '), /program itself exited with 86, or the tool's report was lost/);
});
