import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { parseSanitizerTextFindings } from '../../core/sanitizer/parse-text-findings';
import { findingCounter } from '../../main/tools/finding-counter';
import { ROOT } from '../helpers/cli';

// Progress while a run goes on: the count the streamed text gives equals what the parser finds in the whole,
// for every tool's recorded output, however the stream is cut (here: 7-byte chunks, lines and characters split).
const FIXTURES = join(ROOT, 'test/fixtures/sanitizer/h100');

test('streamed in small pieces, each recorded output counts as many findings as the parser reads from it', () => {
  const cases = [
    ['memcheck', 'memcheck-null.txt'],
    ['memcheck', 'memcheck-oob.xml.txt'],
    ['racecheck', 'racecheck-race-report-all.txt'],
    ['racecheck', 'racecheck-race.xml.txt'],
    ['initcheck', 'initcheck-uninit.txt'],
    ['synccheck', 'synccheck-sync.txt'],
    ['memcheck', 'program-ctypes-leak.txt'],
  ] as const;
  for (const [tool, file] of cases) {
    const bytes = readFileSync(join(FIXTURES, file));
    let last = 0;
    const feed = findingCounter(tool, (n) => (last = n));
    for (let i = 0; i < bytes.length; i += 7) feed(bytes.subarray(i, i + 7));
    feed(Buffer.from('\n'));
    const whole = parseSanitizerTextFindings(tool, bytes.toString('utf8')).findings.length;
    assert.ok(whole > 0, file);
    assert.equal(last, whole, file);
  }
});
