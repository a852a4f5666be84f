import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
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
  await assert.rejects(importSanitizerReport(dir, null, null), /is not a file/);
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
