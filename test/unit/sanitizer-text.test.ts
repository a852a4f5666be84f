import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import type { SanitizerTool } from '../../core/sanitizer/findings';
import { describeSummary, mergeText, parseSanitizerText, splitOutput } from '../../core/sanitizer/parse-text';
import { parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { ROOT } from '../helpers/cli';

const DIR = join(ROOT, 'test/fixtures/sanitizer/h100');
/** What the tool and the program printed; the recording script's own last line (`exit N in M ms`) is not theirs. */
const printed = (name: string) => {
  const text = readFileSync(join(DIR, name), 'utf8');
  assert.match(text, /\nexit \S+ (?:\S+ )?in \d+ ms\n?$/, `${name} ends in the recorder's line`);
  return text.replace(/exit \S+ (?:\S+ )?in \d+ ms\n?$/, '');
};
const xml = (tool: SanitizerTool, name: string) => parseSanitizerXml(tool, readFileSync(join(DIR, name), 'utf8')).findings;

test("splitOutput: the tool's ========= lines apart from the program's own output, each in order", () => {
  const { tool, program } = splitOutput(printed('program-ctypes-leak.txt'));
  assert.deepEqual(program, ['allocated 1 MiB at 0x7f6a62800000; exiting without cudaFree']);
  assert.deepEqual(tool.slice(0, 3), [
    'COMPUTE-SANITIZER',
    'Leaked 1,048,576 bytes at 0x7f6a62800000',
    '    Saved host backtrace up to driver entry point at allocation time',
  ]);
  assert.equal(tool[6], '        Host Frame: <module> in leak.py:24');
  assert.equal(tool[7], '', 'the tool\'s blank separator line ("========= ") is its own');
  assert.deepEqual(tool.slice(-2), ['LEAK SUMMARY: 1048576 bytes leaked in 1 allocations', 'ERROR SUMMARY: 1 error']);

  const gallery = splitOutput(printed('gallery-shared-memory-race-broken.txt'));
  assert.equal(gallery.tool.length, 6);
  assert.equal(gallery.program[0], 'Device 0: NVIDIA H100 80GB HBM3   (runner pid 2201)');
  assert.ok(gallery.program.includes('✗ reverseBlocks read buffer out before anything wrote it'));
  assert.deepEqual(splitOutput('a\r\n========= b\r\n'), { tool: ['b'], program: ['a'] });
});

test('memcheck off-by-one: the summary, and the nearest allocation merged into the XML finding of the same run', () => {
  const info = parseSanitizerText(printed('memcheck-oob.xml.txt'));
  assert.deepEqual(info.summary, {
    errorsReported: 4,
    warningsReported: null,
    hazardsDisplayed: null,
    notPrinted: 0,
    leakedBytes: 8000,
    leakedAllocations: 2,
    toolErrors: [],
    targetReturnedError: true,
  });
  assert.equal(info.ended, true);
  assert.deepEqual(info.nearest, [
    {
      address: '0x7fd120800fa0',
      thread: { x: 232, y: 0, z: 0 },
      block: { x: 3, y: 0, z: 0 },
      nearest: { allocation: '0x7fd120800000', allocationSize: 4000, distance: 1, side: 'after' },
    },
  ]);
  const findings = xml('memcheck', 'memcheck-oob.xml');
  const merged = mergeText(findings, info);
  assert.deepEqual(merged[0]!.nearest, { allocation: '0x7fd120800000', allocationSize: 4000, distance: 1, side: 'after' });
  assert.equal(merged[1], findings[1], 'findings the text does not touch are the same objects');
  assert.equal(findings[0]!.nearest, null, 'the input is not changed');

  // The text of another run (memcheck-oob.txt) has other addresses: nothing merges rather than the wrong thing.
  const other = parseSanitizerText(printed('memcheck-oob.txt'));
  assert.equal(other.nearest[0]!.address, '0x7f0662800fa0');
  assert.equal(mergeText(findings, other)[0]!.nearest, null);
});

test('memcheck null pointer: 32 notes with 15-digit distances (thousands separators), each to its own thread', () => {
  const info = parseSanitizerText(printed('memcheck-null.xml.txt'));
  assert.equal(info.nearest.length, 32);
  assert.equal(info.summary.errorsReported, 35);
  const merged = mergeText(xml('memcheck', 'memcheck-null.xml'), info);
  const writes = merged.filter((f) => f.kind === 'memory-access');
  assert.ok(writes.every((f) => f.nearest !== null));
  assert.deepEqual(writes[0]!.nearest, { allocation: '0x7fe5fa800000', allocationSize: 4000, distance: 140_625_726_930_944, side: 'before' });
  assert.equal(writes[31]!.access?.address, '0x7c');
  assert.equal(writes[31]!.nearest?.distance, 0x7fe5fa800000 - 0x7c, 'the distance is the allocation minus the address');
});

test('memcheck --print-limit 10: 65,527 of 65,537 errors not printed', () => {
  const info = parseSanitizerText(printed('memcheck-many-limit10.txt'));
  assert.equal(info.summary.errorsReported, 65_537);
  assert.equal(info.summary.notPrinted, 65_527);
  assert.equal(info.nearest.length, 10);
  assert.match(
    describeSummary(info.summary).join(' '),
    /65,527 more errors were not printed \(--print-limit\): the counts shown are lower bounds\. Run with --print-limit 0/,
  );
});

test('racecheck summaries: hazards displayed, errors and warnings', () => {
  const one = parseSanitizerText(printed('racecheck-race.txt')).summary;
  assert.equal(one.hazardsDisplayed, 1);
  assert.equal(one.errorsReported, 1);
  assert.equal(one.warningsReported, 0);
  assert.deepEqual(one.toolErrors, [], '"Error: Race reported between …" is a finding, not the tool failing');
  assert.deepEqual(describeSummary(one), []);

  const all = parseSanitizerText(printed('racecheck-race-report-all.txt')).summary;
  assert.equal(all.hazardsDisplayed, 100);
  assert.equal(all.errorsReported, 513);
  assert.deepEqual(all.toolErrors, [], '"Error: Potential WAR hazard detected …" is a finding too');
  assert.match(describeSummary(all).join(' '), /racecheck counted 513 reports but displayed 100/);

  const clean = parseSanitizerText(printed('racecheck-clean.xml.txt')).summary;
  assert.equal(clean.errorsReported, 0);
  assert.equal(clean.hazardsDisplayed, 0);
});

test('leak summaries, and a clean run', () => {
  const leak = parseSanitizerText(printed('memcheck-leak.txt')).summary;
  assert.equal(leak.leakedBytes, 20_345);
  assert.equal(leak.leakedAllocations, 3);
  assert.equal(leak.errorsReported, 3);
  const ctypes = parseSanitizerText(printed('program-ctypes-leak.txt')).summary;
  assert.equal(ctypes.leakedBytes, 1_048_576);
  assert.equal(ctypes.errorsReported, 1);
  const clean = parseSanitizerText(printed('initcheck-clean.xml.txt'));
  assert.equal(clean.summary.errorsReported, 0);
  assert.equal(clean.summary.targetReturnedError, false);
  assert.equal(clean.ended, true);
  assert.deepEqual(describeSummary(clean.summary), []);
});

test("the tool's own failures: a bad --tool (printed without the prefix), a missing target, a target with no CUDA call", () => {
  const bad = parseSanitizerText(printed('bad-tool.txt'));
  assert.deepEqual(bad.summary.toolErrors, ["the argument for option '--tool' is invalid"], 'the usage text after it is not an error');
  assert.equal(bad.summary.errorsReported, null);
  assert.equal(bad.ended, true);
  assert.match(describeSummary(bad.summary)[0]!, /^compute-sanitizer failed: the argument for option '--tool' is invalid\. Check the options/);

  const missing = parseSanitizerText(printed('missing-target.txt'));
  assert.deepEqual(missing.summary.toolErrors, ["Target application doesn't exist or is not a valid executable"]);
  assert.match(describeSummary(missing.summary)[0]!, /Check the program path/);

  const early = parseSanitizerText('========= COMPUTE-SANITIZER\n========= Error: Target application terminated before first instrumented API call\n');
  assert.deepEqual(early.summary.toolErrors, ['Error: Target application terminated before first instrumented API call']);
  assert.match(describeSummary(early.summary)[0]!, /ended before its first CUDA call, so nothing was checked/);

  // The program's own "Error: …" lines are its own.
  assert.deepEqual(parseSanitizerText('========= COMPUTE-SANITIZER\nError: my program failed\n========= ERROR SUMMARY: 0 errors\n').summary.toolErrors, []);
});

test('output that stops after the banner (the runner crashed under memcheck: exit 139, no summary)', () => {
  const info = parseSanitizerText(printed('gallery-null-pointer-broken.txt'));
  assert.equal(info.ended, false);
  assert.equal(info.summary.errorsReported, null);
  assert.equal(info.nearest.length, 32);
  assert.deepEqual(info.nearest[0]!.nearest, { allocation: '0x7fd38a280000', allocationSize: 65_536, distance: 140_546_532_704_256, side: 'before' });
  assert.match(describeSummary(info.summary, info.ended)[0]!, /stopped before its summary: it, or the program it ran, died/);
  // Text that is not compute-sanitizer's at all says nothing about it.
  const none = parseSanitizerText('hello\nworld\n');
  assert.equal(none.toolSeen, false);
  assert.equal(none.ended, true);
});
