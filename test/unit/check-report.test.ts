import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { checkEverythingOff, checksUnavailable } from '../../core/check/availability';
import { CHECK_CONFIG_FILE, DEFAULT_CHECK_CONFIG, parseCheckConfig } from '../../core/check/check-config';
import {
  CHECK_NAMES,
  checksVerdict,
  makeReport,
  planVerdict,
  reportVerdict,
  VERDICT_EXIT,
  type CheckName,
  type CheckResult,
  type CheckStatus,
  type PlanReport,
} from '../../core/check/check-model';
import { checkLine, reportLines } from '../../core/check/check-text';
import { judgeExpectation } from '../../core/check/expectation';
import { Slots } from '../../core/check/slots';
import { sampleManifestSchema } from '../../core/samples/sample-manifest';
import { EXIT } from '../../main/cli/exit-codes';
import { SAMPLES } from '../helpers/cli';

const check = (name: CheckName, status: CheckStatus, summary = `${name} ${status}`): CheckResult => ({ check: name, status, summary, details: [], ms: null });
const all = (status: CheckStatus, over: Partial<Record<CheckName, CheckStatus>> = {}) => CHECK_NAMES.map((n) => check(n, over[n] ?? status));
const plan = (checks: CheckResult[], over: Partial<PlanReport> = {}): PlanReport => ({
  label: 'plan.json',
  planPath: '/p/plan.json',
  origin: { kind: 'plan' },
  checks,
  expectation: null,
  configPath: null,
  verdict: planVerdict(checks, over.expectation ?? null),
  durationMs: 1200,
  ...over,
});

test('a plan passes only when every check it asked for ran and passed; a check that could not run is never a pass', () => {
  assert.equal(checksVerdict(all('passed')), 'passed');
  assert.equal(checksVerdict(all('passed', { racecheck: 'off', occupancy: 'off' })), 'passed');
  assert.equal(checksVerdict(all('passed', { coalescing: 'could-not-run' })), 'incomplete');
  assert.equal(checksVerdict(all('could-not-run', { memcheck: 'failed' })), 'failed');
  assert.equal(checksVerdict(all('could-not-run')), 'nothing-ran');
  assert.equal(checksVerdict(all('off')), 'nothing-ran');
  assert.equal(checksVerdict(all('could-not-run', { validator: 'passed' })), 'incomplete');
});

test('the report: any failure fails it, nothing ran anywhere is its own verdict, and each verdict has its exit code', () => {
  const passed = plan(all('passed'));
  const failed = plan(all('passed', { memcheck: 'failed' }));
  const nothing = plan(all('could-not-run'));
  const partly = plan(all('passed', { coalescing: 'could-not-run' }));
  assert.equal(reportVerdict([passed, failed, nothing]), 'failed');
  assert.equal(reportVerdict([passed, passed]), 'passed');
  assert.equal(reportVerdict([nothing, nothing]), 'nothing-ran');
  assert.equal(reportVerdict([passed, nothing]), 'incomplete');
  assert.equal(reportVerdict([partly]), 'incomplete');
  assert.equal(reportVerdict([]), 'nothing-ran');
  // The CLI's codes: 1 as for any failure, 2 as for any command that found no GPU, and 3 for "some could not run".
  assert.deepEqual(VERDICT_EXIT, { passed: EXIT.ok, failed: EXIT.failed, 'nothing-ran': EXIT.unavailable, incomplete: EXIT.incomplete });
  assert.equal(new Set(Object.values(VERDICT_EXIT)).size, 4);
});

test('the headline never says passed when something could not run, and counts every status', () => {
  const r = makeReport([plan(all('could-not-run'))], '2026-01-01T00:00:00.000Z', 800, null);
  assert.equal(r.verdict, 'nothing-ran');
  assert.match(r.headline, /^Nothing could be checked: .*0 passed, 0 failed, 9 could not run\)\. This is not a pass\.$/);
  assert.doesNotMatch(reportLines(r).join('\n'), /✓/);
  const partly = makeReport([plan(all('passed', { occupancy: 'off', coalescing: 'could-not-run' }))], '', 1, 'NVIDIA H100 80GB HBM3');
  assert.match(
    partly.headline,
    /^Incomplete: nothing failed, but 1 check could not run \(7 passed, 0 failed, 1 could not run, 1 off\)\. This is not a pass\.$/,
  );
  assert.match(makeReport([plan(all('passed'))], '', 1, 'H100').headline, /^✓ Every check passed on 1 plan/);
  assert.match(makeReport([plan(all('passed', { run: 'failed' }))], '', 1, 'H100').headline, /^✗ 1 of 1 plan failed a check/);
});

test('each check on a line: a tick only for what passed, the reason for what could not run', () => {
  assert.equal(checkLine({ ...check('memcheck', 'passed', 'memcheck found nothing.'), ms: 2500 }), '✓ memcheck     memcheck found nothing. (2.5 s)');
  assert.equal(checkLine(check('initcheck', 'could-not-run', 'No NVIDIA driver found')), '– initcheck    could not run: No NVIDIA driver found');
  assert.equal(checkLine(check('coalescing', 'failed', 'line 7: 32 sectors')), '✗ coalescing   line 7: 32 sectors');
  assert.equal(checkLine(check('occupancy', 'off', 'Not asked for')), '· occupancy    off: Not asked for');
});

test('a broken sample is as expected when its own check fails, whatever else fails with it; a fixed one when every check passes', () => {
  const broken = judgeExpectation('broken', 'memcheck', all('passed', { memcheck: 'failed', run: 'failed' }));
  assert.deepEqual([broken.met, broken.check], ['yes', 'memcheck']);
  assert.match(broken.words, /^Failed memcheck, as expected: memcheck failed$/);
  assert.equal(judgeExpectation('broken', 'memcheck', all('failed', { memcheck: 'passed' })).met, 'no');
  const unconfirmed = judgeExpectation('broken', 'coalescing', all('passed', { coalescing: 'could-not-run' }));
  assert.equal(unconfirmed.met, 'unconfirmed');
  assert.match(unconfirmed.words, /coalescing, which could not run: coalescing could-not-run/);
  assert.equal(judgeExpectation('broken', 'racecheck', all('passed', { racecheck: 'off' })).met, 'unconfirmed');
  assert.equal(judgeExpectation('broken', null, all('failed')).met, 'unconfirmed');
  assert.equal(judgeExpectation('fixed', null, all('passed')).met, 'yes');
  const fixedFailed = judgeExpectation('fixed', null, all('passed', { initcheck: 'failed', synccheck: 'could-not-run' }));
  assert.equal(fixedFailed.met, 'no');
  assert.match(fixedFailed.words, /failed initcheck: initcheck failed/);
  assert.equal(judgeExpectation('fixed', null, all('passed', { occupancy: 'could-not-run' })).met, 'unconfirmed');
  // The sample's verdict is the expectation's: a broken variant that fails as it should passes.
  assert.equal(planVerdict(all('failed'), broken), 'passed');
  assert.equal(planVerdict(all('could-not-run'), unconfirmed), 'nothing-ran');
});

test('every gallery sample names the check its broken variant fails; uncoalesced-access fails on coalescing', () => {
  const expected: Record<string, CheckName> = {};
  for (const name of [
    'allocation-too-large',
    'block-too-large',
    'device-assert',
    'divergent-barrier',
    'grid-too-large',
    'infinite-loop',
    'misaligned-access',
    'missing-bounds-check',
    'never-frees',
    'null-pointer',
    'oob-off-by-one',
    'register-pressure',
    'shared-memory-race',
    'static-shared-too-large',
    'trap',
    'uncoalesced-access',
    'uninitialised-read',
    'use-after-free',
  ]) {
    const manifest = sampleManifestSchema.parse(JSON.parse(readFileSync(join(SAMPLES, name, 'sample.json'), 'utf8')));
    expected[name] = manifest.expect.broken.check;
  }
  assert.equal(expected['uncoalesced-access'], 'coalescing');
  assert.equal(expected['shared-memory-race'], 'racecheck');
  assert.equal(expected['uninitialised-read'], 'initcheck');
  assert.equal(expected['divergent-barrier'], 'synccheck');
  assert.equal(expected['never-frees'], 'run');
  // A manifest without it, or with a check that is not one, is refused in words.
  const manifest = JSON.parse(readFileSync(join(SAMPLES, 'trap', 'sample.json'), 'utf8')) as { expect: { broken: { check?: string } } };
  delete manifest.expect.broken.check;
  assert.equal(sampleManifestSchema.safeParse(manifest).success, false);
  manifest.expect.broken.check = 'helgrind';
  assert.equal(sampleManifestSchema.safeParse(manifest).success, false);
});

test('the config file: defaults for what it leaves out, and every mistake in words', () => {
  assert.deepEqual(parseCheckConfig('{}'), { ok: true, config: DEFAULT_CHECK_CONFIG });
  const set = parseCheckConfig(
    JSON.stringify({
      checks: ['occupancy', 'memcheck', 'run'],
      uncoalescedRatio: 4,
      minAchievedOccupancyPct: 50,
      timeoutsMs: { run: 5000, memcheck: 60_000 },
      concurrency: 2,
    }),
  );
  assert.ok(set.ok);
  // The checks in the report's order, whatever order the file gives them in.
  assert.deepEqual(set.config.checks, ['run', 'memcheck', 'occupancy']);
  assert.deepEqual(set.config.thresholds, { uncoalescedRatio: 4, minAchievedOccupancyPct: 50 });
  assert.equal(set.config.timeoutsMs.run, 5000);
  assert.equal(set.config.timeoutsMs.memcheck, 60_000);
  assert.equal(set.config.timeoutsMs.racecheck, DEFAULT_CHECK_CONFIG.timeoutsMs.racecheck);
  assert.equal(set.config.concurrency, 2);

  const bad = parseCheckConfig(
    JSON.stringify({ checks: ['memcheck', 'helgrind'], uncoalescedRatio: 0.5, minAchievedOccupancyPct: 120, timeoutsMs: { run: 10, memchek: 1000 }, extra: 1 }),
    CHECK_CONFIG_FILE,
  );
  assert.equal(bad.ok, false);
  const problems = (bad as { problems: string[] }).problems.join('\n');
  assert.match(problems, /gpu-workbench-check\.json, checks\.1: must be one of validator, run, determinism, memcheck/);
  assert.match(problems, /uncoalescedRatio: .*1/);
  assert.match(problems, /minAchievedOccupancyPct: .*100/);
  assert.match(problems, /timeoutsMs\.run: .*1000/);
  assert.match(problems, /timeoutsMs: "memchek" is not a setting \(.*timeoutsMs takes run, validator, memcheck/);
  assert.match(problems, /the file: "extra" is not a setting/);
  assert.match((parseCheckConfig('{"checks": []}') as { problems: string[] }).problems[0]!, /checks: /);
  assert.match((parseCheckConfig('{"checks": ["run", "run"]}') as { problems: string[] }).problems[0]!, /checks: names a check twice/);
  assert.match((parseCheckConfig('{ "checks": ') as { problems: string[] }).problems[0]!, /^gpu-workbench-check\.json is not JSON: /);
});

test('slots: a profile waits for every slot, and the runs asked for after it wait behind it', async () => {
  const slots = new Slots(2);
  const order: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = slots.with(1, async () => {
    order.push('run 1');
    await held;
  });
  const profile = slots.exclusive(async () => {
    order.push(`profile (${slots.inUse} in use)`);
  });
  const later = slots.with(1, async () => {
    order.push('run 2');
  });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['run 1']);
  release();
  await Promise.all([first, profile, later]);
  assert.deepEqual(order, ['run 1', 'profile (2 in use)', 'run 2']);
  assert.equal(slots.inUse, 0);
  await assert.rejects(
    slots.with(1, async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(slots.inUse, 0);
  assert.throws(() => new Slots(0), RangeError);
});

test('Check everything in the app: off only when no check could run here, each check with its own reason', () => {
  const tool = (found: boolean) => ({ computeSanitizer: { found, path: found ? '/usr/local/cuda/bin/compute-sanitizer' : null, version: null, searched: [] } });
  const noGpu = { present: false as const, reason: 'No NVIDIA driver found.' };
  const none = checksUnavailable(tool(false), noGpu);
  assert.ok(CHECK_NAMES.every((c) => none[c] !== null));
  assert.equal(none.run, 'The plan runs on a GPU, and this machine has none: No NVIDIA driver found.');
  assert.match(none.validator!, /^There is no GPU here to check the plan against \(No NVIDIA driver found\)/);
  assert.match(none.memcheck!, /^compute-sanitizer was not found on this machine, and it runs the plan on a GPU/);
  assert.match(none.occupancy!, /^Nsight Compute profiles the plan on a GPU/);
  assert.match(
    checkEverythingOff(none)!,
    /^No check could run here: The plan runs on a GPU, and this machine has none: No NVIDIA driver found\. Each check says why in the Check tab\.$/,
  );
  // A GPU without compute-sanitizer: the four tools cannot run, the rest can: the button is on.
  const noTool = checksUnavailable(tool(false), { present: true });
  assert.deepEqual(
    CHECK_NAMES.filter((c) => noTool[c] !== null),
    ['memcheck', 'racecheck', 'initcheck', 'synccheck'],
  );
  assert.equal(checkEverythingOff(noTool), null);
  assert.ok(CHECK_NAMES.every((c) => checksUnavailable(tool(true), { present: true })[c] === null));
  // Nsight Compute missing, or the counters kept for administrators: coalescing and occupancy say so before anything runs.
  const withNcu = (found: boolean, restrictedToAdmins: boolean | null) => ({
    ...tool(true),
    ncu: { found, path: found ? '/usr/local/cuda/bin/ncu' : null, version: null, searched: [] },
    profilingCounters: { restrictedToAdmins, administrator: false, source: '/proc/driver/nvidia/params' },
  });
  const noNcu = checksUnavailable(withNcu(false, false), { present: true });
  assert.deepEqual(
    CHECK_NAMES.filter((c) => noNcu[c] !== null),
    ['coalescing', 'occupancy'],
  );
  assert.match(noNcu.coalescing!, /^Nsight Compute \(ncu\) was not found on this machine/);
  assert.match(checksUnavailable(withNcu(true, true), { present: true }).occupancy!, /only administrators .*RmProfilingAdminOnly is 1/);
  assert.equal(checksUnavailable(withNcu(true, null), { present: true }).occupancy, null, 'the driver did not say: ncu tries, and the report says');
  // Before the host has answered: said, and off.
  const unknown = checksUnavailable(null, null);
  assert.equal(unknown.run, 'Looking for a CUDA device and the tools…');
  assert.equal(checkEverythingOff(unknown), 'Looking for a CUDA device and the tools…');
});
