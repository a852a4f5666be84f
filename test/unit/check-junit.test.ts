import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SaxesParser } from 'saxes';

import { CHECK_NAMES, makeReport, planVerdict, type CheckName, type CheckResult, type CheckStatus, type PlanReport } from '../../core/check/check-model';
import { judgeExpectation } from '../../core/check/expectation';
import { caseOutcome, junitXml, xmlAttribute, xmlText } from '../../core/check/junit';

const check = (name: CheckName, status: CheckStatus, summary = `${name} ${status}`, details: string[] = []): CheckResult => ({
  check: name,
  status,
  summary,
  details,
  ms: status === 'passed' || status === 'failed' ? 1234.6 : null,
});

function planReport(
  label: string,
  statuses: Partial<Record<CheckName, CheckStatus>>,
  sample?: { variant: 'broken' | 'fixed'; check: CheckName | null },
): PlanReport {
  const checks = CHECK_NAMES.map((n) => check(n, statuses[n] ?? 'passed'));
  const expectation = sample ? judgeExpectation(sample.variant, sample.check, checks) : null;
  return {
    label,
    planPath: `/plans/${label}`,
    origin: sample ? { kind: 'sample', sample: label, variant: sample.variant } : { kind: 'plan' },
    checks,
    expectation,
    configPath: null,
    verdict: planVerdict(checks, expectation),
    durationMs: 5000,
  };
}

/** The document as an XML parser reads it: elements with their attributes and text, or the parser's error. */
function parse(xml: string): { name: string; attributes: Record<string, string>; text: string }[] {
  const parser = new SaxesParser();
  const elements: { name: string; attributes: Record<string, string>; text: string }[] = [];
  const open: { name: string; attributes: Record<string, string>; text: string }[] = [];
  parser.on('opentag', (tag) => {
    const e = { name: tag.name, attributes: tag.attributes as Record<string, string>, text: '' };
    elements.push(e);
    open.push(e);
  });
  parser.on('text', (t) => {
    if (open.length) open[open.length - 1]!.text += t;
  });
  parser.on('closetag', () => open.pop());
  parser.write(xml).close();
  return elements;
}

test('text and attributes escaped, and characters XML cannot hold replaced: the document always parses, and says what it was given', () => {
  assert.equal(xmlText('a < b && c > d'), 'a &lt; b &amp;&amp; c &gt; d');
  assert.equal(xmlAttribute(`"x" & 'y'\n<z>\t`), '&quot;x&quot; &amp; &apos;y&apos;&#10;&lt;z&gt;&#9;');
  assert.equal(xmlText('bell\u0007 nul\u0000 ok\u{1F600} lone\uD800 end\uFFFE'), 'bell\uFFFD nul\uFFFD ok\u{1F600} lone\uFFFD end\uFFFD');
  const nasty = 'a]]><!-- "quoted" & <tag attr=\'x\'>\u0001\n\tline two';
  const plan = planReport('evil <plan> & "co".json', { memcheck: 'failed', racecheck: 'could-not-run' });
  plan.checks[3] = check('memcheck', 'failed', nasty, [nasty]);
  plan.checks[4] = check('racecheck', 'could-not-run', nasty);
  const xml = junitXml(makeReport([plan], '2026-01-01T00:00:00.000Z', 9000, 'H100'));
  const elements = parse(xml);
  const failure = elements.find((e) => e.name === 'failure')!;
  const expected = nasty.replace('\u0001', '\uFFFD');
  assert.equal(failure.attributes['message'], expected);
  assert.equal(failure.text, `${expected}\n${expected}`);
  assert.equal(elements.find((e) => e.name === 'skipped')!.attributes['message'], `could not run: ${expected}`);
  assert.equal(elements.find((e) => e.name === 'testsuite')!.attributes['name'], 'evil <plan> & "co".json');
});

test('one testsuite per plan, one testcase per check: a failure carries its finding, could not run and off are skipped with the reason', () => {
  const a = planReport('a.json', { memcheck: 'failed', coalescing: 'could-not-run', occupancy: 'off' });
  const b = planReport('b.json', {});
  const xml = junitXml(makeReport([a, b], '2026-01-01T00:00:00.000Z', 61_000, 'NVIDIA H100 80GB HBM3'));
  assert.match(
    xml,
    /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="gpu-workbench check" tests="18" failures="1" errors="0" skipped="2" time="61\.000">/,
  );
  const elements = parse(xml);
  const suites = elements.filter((e) => e.name === 'testsuite');
  assert.deepEqual(
    suites.map((s) => [s.attributes['name'], s.attributes['tests'], s.attributes['failures'], s.attributes['skipped'], s.attributes['time']]),
    [
      ['a.json', '9', '1', '2', '5.000'],
      ['b.json', '9', '0', '0', '5.000'],
    ],
  );
  const cases = elements.filter((e) => e.name === 'testcase');
  assert.equal(cases.length, 18);
  assert.equal(cases[0]!.attributes['classname'], 'gpu-workbench.check.a.json');
  assert.match(cases[3]!.attributes['name']!, /^memcheck: compute-sanitizer memcheck/);
  assert.equal(cases[3]!.attributes['time'], '1.235');
  assert.equal(elements.find((e) => e.name === 'failure')!.attributes['message'], 'memcheck failed');
  assert.deepEqual(
    elements.filter((e) => e.name === 'skipped').map((e) => e.attributes['message']),
    ['could not run: coalescing could-not-run', 'occupancy off'],
  );
  assert.deepEqual(
    elements.filter((e) => e.name === 'property' && e.attributes['name'] === 'verdict').map((e) => e.attributes['value']),
    ['failed', 'passed'],
  );
});

test('a gallery sample: its broken variant passes the testcase of its own check by failing it, and its other checks are noted, not judged', () => {
  const broken = planReport('oob (broken)', { memcheck: 'failed', run: 'failed', racecheck: 'could-not-run' }, { variant: 'broken', check: 'memcheck' });
  assert.deepEqual(caseOutcome(broken, broken.checks[3]!), { kind: 'pass', note: 'failed, as this broken variant should: memcheck failed' });
  assert.deepEqual(caseOutcome(broken, broken.checks[1]!), { kind: 'pass', note: "failed (not this broken variant's own check): run failed" });
  assert.equal(caseOutcome(broken, broken.checks[4]!).kind, 'skipped');
  const missed = planReport('oob (broken)', {}, { variant: 'broken', check: 'memcheck' });
  assert.deepEqual(caseOutcome(missed, missed.checks[3]!), { kind: 'failure', message: 'expected to fail memcheck, but it passed', text: 'memcheck passed' });
  const fixed = planReport('oob (fixed)', { initcheck: 'failed' }, { variant: 'fixed', check: null });
  assert.equal(caseOutcome(fixed, fixed.checks[5]!).kind, 'failure');
  const xml = junitXml(makeReport([broken, missed, fixed], '2026-01-01T00:00:00.000Z', 1, 'H100'));
  const elements = parse(xml);
  assert.equal(elements.find((e) => e.name === 'testsuites')!.attributes['failures'], '2');
  assert.ok(elements.some((e) => e.name === 'system-out' && e.text === "failed (not this broken variant's own check): run failed"));
  assert.ok(
    elements.some((e) => e.name === 'property' && e.attributes['name'] === 'expectation' && /^Failed memcheck, as expected/.test(e.attributes['value']!)),
  );
});
