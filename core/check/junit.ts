import { CHECK_WORDS, type CheckReport, type CheckResult, type PlanReport } from './check-model';

/**
 * The report as JUnit XML, which CI systems (GitHub Actions' test reporters, GitLab, Jenkins) read: one testsuite per
 * plan, one testcase per check. A failed check is a <failure> with its finding; a check that could not run (or was
 * turned off) is <skipped> with the reason, so a CI page shows it was not checked instead of a green tick. For a
 * failure-gallery sample the testcases say whether it did what it should: its broken variant's own check passes
 * the testcase by failing.
 */

/** Characters XML 1.0 does not allow at all (controls, lone surrogates, U+FFFE/FFFF): replaced, never written raw. */
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const NOT_XML = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text content: the three characters markup reads, escaped. */
export const xmlText = (text: string): string => text.replace(NOT_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An attribute value (written in double quotes): also the quotes, and the whitespace a parser would fold to spaces. */
export const xmlAttribute = (text: string): string =>
  xmlText(text).replace(/"/g, '&quot;').replace(/'/g, '&apos;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');

const attributes = (values: Record<string, string | number>): string =>
  Object.entries(values)
    .map(([name, value]) => ` ${name}="${xmlAttribute(String(value))}"`)
    .join('');

const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);

type CaseOutcome = { kind: 'pass'; note: string | null } | { kind: 'failure'; message: string; text: string } | { kind: 'skipped'; message: string };

const skipped = (c: CheckResult): CaseOutcome => ({ kind: 'skipped', message: c.status === 'off' ? c.summary : `could not run: ${c.summary}` });

/** What one check's testcase says: for a plain plan, the check's own status; for a sample, whether it was as expected. */
export function caseOutcome(plan: Pick<PlanReport, 'expectation'>, c: CheckResult): CaseOutcome {
  if (c.status === 'could-not-run' || c.status === 'off') return skipped(c);
  const text = [c.summary, ...c.details].join('\n');
  const e = plan.expectation;
  if (e?.variant === 'broken') {
    if (c.check === e.check)
      return c.status === 'failed'
        ? { kind: 'pass', note: `failed, as this broken variant should: ${c.summary}` }
        : { kind: 'failure', message: `expected to fail ${c.check}, but it passed`, text };
    // The broken variant's other checks are not what it is about: said, not judged.
    return { kind: 'pass', note: `${c.status} (not this broken variant's own check): ${c.summary}` };
  }
  if (c.status === 'failed') return { kind: 'failure', message: c.summary, text };
  return { kind: 'pass', note: null };
}

function testcase(plan: PlanReport, c: CheckResult): string {
  const open = `    <testcase${attributes({ classname: `gpu-workbench.check.${plan.label}`, name: `${c.check}: ${CHECK_WORDS[c.check]}`, time: seconds(c.ms) })}`;
  const o = caseOutcome(plan, c);
  switch (o.kind) {
    case 'pass':
      return o.note ? `${open}>\n      <system-out>${xmlText(o.note)}</system-out>\n    </testcase>` : `${open}/>`;
    case 'skipped':
      return `${open}>\n      <skipped${attributes({ message: o.message })}/>\n    </testcase>`;
    case 'failure':
      return `${open}>\n      <failure${attributes({ message: o.message, type: c.check })}>${xmlText(o.text)}</failure>\n    </testcase>`;
  }
}

const tally = (plans: readonly PlanReport[]) => {
  const outcomes = plans.flatMap((p) => p.checks.map((c) => caseOutcome(p, c).kind));
  return {
    tests: outcomes.length,
    failures: outcomes.filter((k) => k === 'failure').length,
    errors: 0,
    skipped: outcomes.filter((k) => k === 'skipped').length,
  };
};

export function junitXml(report: CheckReport): string {
  const suites = report.plans.map((plan) => {
    const head = `  <testsuite${attributes({ name: plan.label, ...tally([plan]), time: seconds(plan.durationMs), timestamp: report.startedAt })}>`;
    const properties = [
      ['verdict', plan.verdict],
      ...(plan.planPath ? [['plan', plan.planPath]] : []),
      ...(plan.configPath ? [['config', plan.configPath]] : []),
      ...(plan.expectation ? [['expectation', plan.expectation.words]] : []),
    ];
    return [
      head,
      '    <properties>',
      ...properties.map(([name, value]) => `      <property${attributes({ name: name!, value: value! })}/>`),
      '    </properties>',
      ...plan.checks.map((c) => testcase(plan, c)),
      '  </testsuite>',
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name: 'gpu-workbench check', ...tally(report.plans), time: seconds(report.durationMs) })}>`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
