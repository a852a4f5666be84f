import type { CheckName, CheckResult, ExpectationResult, SampleVariant } from './check-model';

/**
 * Whether a failure-gallery variant did what its sample says: the broken one fails its own check (sample.json's
 * expect.broken.check) — other checks may fail too, a fault often shows in several — and the fixed one passes every
 * check. A check it depends on that could not run (or was turned off) leaves it unconfirmed: never as expected.
 */
export function judgeExpectation(variant: SampleVariant, expectedCheck: CheckName | null, checks: readonly CheckResult[]): ExpectationResult {
  if (variant === 'broken') {
    if (!expectedCheck)
      return { variant, check: null, met: 'unconfirmed', words: 'The sample names no check its broken variant must fail (expect.broken.check).' };
    const c = checks.find((x) => x.check === expectedCheck);
    if (!c || c.status === 'off') return { variant, check: expectedCheck, met: 'unconfirmed', words: `Its expected check, ${expectedCheck}, was not run.` };
    if (c.status === 'failed') return { variant, check: expectedCheck, met: 'yes', words: `Failed ${expectedCheck}, as expected: ${c.summary}` };
    if (c.status === 'passed') return { variant, check: expectedCheck, met: 'no', words: `Expected to fail ${expectedCheck}, but it passed: ${c.summary}` };
    return { variant, check: expectedCheck, met: 'unconfirmed', words: `Expected to fail ${expectedCheck}, which could not run: ${c.summary}` };
  }
  const failed = checks.filter((c) => c.status === 'failed');
  if (failed.length)
    return {
      variant,
      check: null,
      met: 'no',
      words: `Expected to pass every check, but failed ${failed.map((c) => c.check).join(', ')}: ${failed[0]!.summary}`,
    };
  const missing = checks.filter((c) => c.status === 'could-not-run' || c.status === 'off');
  if (missing.length)
    return {
      variant,
      check: null,
      met: 'unconfirmed',
      words: `Nothing failed, but ${missing.map((c) => c.check).join(', ')} ${missing.length === 1 ? 'was' : 'were'} not checked: ${missing[0]!.summary}`,
    };
  return { variant, check: null, met: 'yes', words: 'Passed every check, as expected.' };
}
