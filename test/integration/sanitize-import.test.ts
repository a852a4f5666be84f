import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { importSanitizerReport } from '../../main/tools/sanitize-import';
import { ROOT } from '../helpers/cli';

// A report someone saved with --xml --save (here: the H100's), opened as the UI opens it.
const FIXTURES = join(ROOT, 'test/fixtures/sanitizer/h100');

test('a saved memcheck report with its text: grouped, the nearest allocation from the text, the tool found from the records', async () => {
  const report = await importSanitizerReport(join(FIXTURES, 'memcheck-oob.xml'), join(FIXTURES, 'memcheck-oob.xml.txt'), null);
  assert.equal(report.tool, 'memcheck');
  assert.equal(report.verdict, 'found');
  const write = report.groups.find((g) => g.kind === 'memory-access')!;
  assert.deepEqual([write.where?.func, write.where?.line, write.example.nearest?.distance], ['offByOne', 12, 1]);
  assert.match(report.headline, /^memcheck-oob\.xml: memcheck found/);
});

test('racecheck and synccheck reports are told by their records; 32 barrier findings are one place', async () => {
  assert.equal((await importSanitizerReport(join(FIXTURES, 'racecheck-race-report-all.xml'), null, null)).tool, 'racecheck');
  const sync = await importSanitizerReport(join(FIXTURES, 'synccheck-sync.xml'), null, null);
  assert.equal(sync.tool, 'synccheck');
  assert.deepEqual(
    sync.groups.map((g) => [g.kind, g.where?.line, g.count]),
    [['barrier', 30, 32]],
  );
});

test('hostile or wrong files: a clear message, never an expansion or a crash', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-import-'));
  await assert.rejects(importSanitizerReport(join(dir, 'absent.xml'), null, null), /no such file/);
  await assert.rejects(importSanitizerReport(dir, null, null), /is a folder: give the \.xml compute-sanitizer saved/);
  // A device or a pipe answers at once (opened non-blocking, checked on the handle): never a read without end,
  // never an I/O thread held waiting for a writer.
  await assert.rejects(importSanitizerReport('/dev/zero', null, null), /not a regular file .* Give the \.xml/);
  const fifo = join(dir, 'report.fifo');
  execFileSync('mkfifo', [fifo]);
  await assert.rejects(importSanitizerReport(fifo, null, null), /not a regular file/);
  await assert.rejects(
    importSanitizerReport(join(FIXTURES, 'memcheck-oob.xml'), fifo, null),
    /not a regular file .* Give the text compute-sanitizer printed, or leave it out/,
  );
  await assert.rejects(importSanitizerReport(join(FIXTURES, 'memcheck-oob.xml'), '/dev/urandom', null), /not a regular file/);
  const bomb = join(dir, 'bomb.xml');
  writeFileSync(
    bomb,
    '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><ComputeSanitizerOutput><record><kind>Precise</kind><what><text>&b;</text></what></record></ComputeSanitizerOutput>',
  );
  const refused = await importSanitizerReport(bomb, null, 'memcheck');
  assert.notEqual(refused.verdict, 'clean');
  assert.ok(
    refused.problems.some((p) => /DOCTYPE|entit/i.test(p)),
    refused.problems.join(' | '),
  );
  const cut = join(dir, 'cut.xml');
  writeFileSync(cut, '<?xml version="1.0"?><ComputeSanitizerOutput><record><kind>Precise</kind><what><text>Invalid');
  const truncated = await importSanitizerReport(cut, null, 'memcheck');
  assert.notEqual(truncated.verdict, 'clean');
  assert.ok(truncated.problems.length > 0);
});

test('a huge report is read up to its bound, the rest said, with the text read from its end', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-import-big-'));
  const record = readFileSync(join(FIXTURES, 'memcheck-null.xml'), 'utf8');
  const body = record.slice(record.indexOf('<record>'), record.lastIndexOf('</ComputeSanitizerOutput>'));
  const big = join(dir, 'big.xml');
  // About 9 MB of records, read with a 1 MiB bound: what was read is used, and the cut is said.
  writeFileSync(big, `<?xml version="1.0"?>\n<ComputeSanitizerOutput>\n${body.repeat(Math.ceil(9e6 / body.length))}</ComputeSanitizerOutput>\n`);
  const { parseReportFile } = await import('../../main/tools/sanitize-program');
  const parsed = await parseReportFile(big, 'memcheck', 2 ** 20);
  assert.ok(parsed.findings.length > 0 && parsed.findings.length < 1000, String(parsed.findings.length));
  assert.match(parsed.problems[0]!, /Only the first 1 MiB of 9 MiB were read/);
  const text = join(dir, 'big.txt');
  writeFileSync(text, `${'x'.repeat(20 * 2 ** 20)}\n========= ERROR SUMMARY: 7 errors\n`);
  const report = await importSanitizerReport(join(FIXTURES, 'memcheck-null.xml'), text, null);
  assert.equal(report.summary.errorsReported, 7);
});

// Issue 26: what the tool printed, saved on its own without its XML (a CI log, `compute-sanitizer … > out.txt`), opens
// as a report too: its findings read from the text, the tool told by what it printed.
test('the text compute-sanitizer printed, alone: a report of its findings, grouped and judged as the XML’s are', async () => {
  const oob = await importSanitizerReport(null, join(FIXTURES, 'memcheck-oob.txt'), null);
  assert.equal(oob.tool, 'memcheck');
  assert.equal(oob.verdict, 'found');
  assert.equal(oob.findingsFrom, 'text');
  assert.deepEqual(oob.xmlFiles, []);
  assert.match(oob.headline, /^memcheck-oob\.txt: memcheck found 4 findings in 3 places, 8,000 bytes leaked\.$/);
  const write = oob.groups.find((g) => g.kind === 'memory-access')!;
  assert.deepEqual([write.where?.func, write.where?.path, write.where?.line, write.example.nearest?.distance], ['offByOne', 'sanitizer_cases.cu', 12, 1]);
  assert.ok(oob.details.some((d) => /without its XML report: files are named as the text names them/.test(d)));
  assert.ok(!oob.details.some((d) => /is assumed/.test(d)), 'its records say memcheck');

  const race = await importSanitizerReport(null, join(FIXTURES, 'racecheck-race.txt'), null);
  assert.equal(race.tool, 'racecheck');
  assert.equal(race.verdict, 'found');
  assert.equal((await importSanitizerReport(null, join(FIXTURES, 'initcheck-uninit.txt'), null)).tool, 'initcheck');
  assert.equal((await importSanitizerReport(null, join(FIXTURES, 'synccheck-sync.txt'), null)).tool, 'synccheck');

  // A clean run's text names no tool: clean, memcheck assumed, and said.
  const clean = await importSanitizerReport(null, join(FIXTURES, 'initcheck-clean.xml.txt'), null);
  assert.equal(clean.verdict, 'clean');
  assert.equal(clean.tool, 'memcheck');
  assert.ok(clean.details.some((d) => /does not say which tool printed it: memcheck, the tool’s default, is assumed/.test(d)));
  assert.equal((await importSanitizerReport(null, join(FIXTURES, 'initcheck-clean.xml.txt'), 'initcheck')).tool, 'initcheck', 'a tool given is taken');

  // A run the program crashed under (no XML was ever written): what was printed before it died, and that it stops short.
  const crashed = await importSanitizerReport(null, join(FIXTURES, 'gallery-null-pointer-broken.txt'), null);
  assert.equal(crashed.verdict, 'found');
  assert.ok(crashed.problems.some((p) => /stops before its summary/.test(p)));

  // Text that is not the tool's: refused in words.
  const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-import-text-'));
  writeFileSync(join(dir, 'notes.txt'), 'hello\nworld\n');
  await assert.rejects(
    importSanitizerReport(null, join(dir, 'notes.txt'), null),
    /notes\.txt is not what compute-sanitizer printed: none of its lines is the tool's own/,
  );
  await assert.rejects(importSanitizerReport(null, null, null), /Give the report compute-sanitizer saved/);
});
