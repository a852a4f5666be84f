import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { channels, defaultCallTimeoutMs, type ChannelName, type ChannelRequest } from '../../core/api/channels';
import { ROOT } from '../helpers/cli';

const names = Object.keys(channels) as ChannelName[];
const limit = <C extends ChannelName>(channel: C, request: ChannelRequest<C>) => defaultCallTimeoutMs(channel, request);
const plan = (kernels: number) => ({ kernels: Array.from({ length: kernels }, (_, i) => ({ id: `k${i}` })) });

test('every channel declares its answer as a schema that checks it, and a time limit a timer can wait', () => {
  assert.ok(names.length >= 44, `${names.length} channels`);
  for (const name of names) {
    const declared = channels[name];
    assert.equal(typeof declared.response?.safeParse, 'function', `${name} has a response schema`);
    // A schema that let anything through would check nothing: a number is no channel's answer.
    assert.equal(declared.response.safeParse(Symbol('not an answer')).success, false, `${name}'s response schema refuses what is not its answer`);
    const ms = typeof declared.timeoutMs === 'number' ? declared.timeoutMs : defaultCallTimeoutMs(name, {} as never);
    assert.ok(Number.isInteger(ms) && ms >= 60_000 && ms <= 2 ** 31 - 1, `${name} waits ${ms} ms`);
  }
});

test('a call that names no limit waits its own channel’s: above the host’s limits for it, from the request where they depend on it', () => {
  assert.equal(limit('app.info', {}), 60_000);
  assert.equal(limit('files.read', { path: '/a' }), 60_000);
  // Each kernel compiled first (up to 120 s each), then the run under its own limit.
  assert.equal(limit('run.plan', { plan: plan(1) }), 30_000 + 150_000);
  assert.equal(limit('run.plan', { plan: plan(3), timeoutMs: 5000 }), 5000 + 3 * 150_000);
  assert.equal(limit('run.plan', { plan: 'not a plan' }), 30_000 + 150_000, 'a plan that is not one still gets a compile');
  assert.equal(limit('compile.run', { source: '', sourceName: 'k.cu', options: {} }), 150_000);
  assert.equal(limit('compile.sass', { key: '0'.repeat(64) }), 150_000);
  const program = { command: ['python', 'x.py'], cwd: '/tmp' };
  assert.equal(limit('sanitize.program', { ...program, tool: 'memcheck' }), 600_000 + 30_000);
  assert.equal(limit('sanitize.program', { ...program, tool: 'memcheck', timeoutMs: 10_000 }), 10_000 + 30_000);
  assert.equal(limit('diagnose.program', program), 600_000 + 120_000);
  assert.equal(limit('diagnose.program', { ...program, budgetMs: 5000 }), 5000 + 120_000);
  assert.equal(limit('memory.open', { path: '/s.pickle' }), 300_000);
  assert.equal(limit('bundle.open', { path: '/b.zip' }), 120_000);
  assert.equal(limit('diagnose.export', { id: 'd1', path: '/d.zip' }), 120_000);
  assert.equal(limit('profile.run', { plan: plan(1) }), 600_000 + 300_000);
  assert.equal(limit('profile.run', { plan: plan(1), timeoutMs: 2000 }), 2000 + 300_000);
  assert.equal(limit('sanitize.plan', { plan: plan(1), tool: 'racecheck' }), 600_000 + 150_000);
  assert.equal(limit('sanitize.plan', { plan: plan(1), tool: 'racecheck', timeoutMs: 1000 }), 1000 + 150_000);
  assert.equal(limit('check.plan', { plan: plan(2) }), 1_200_000 + 2 * 450_000);
  assert.equal(limit('check.plan', { plan: {} }), 1_200_000 + 450_000);
  assert.equal(limit('monitor.start', { durationS: 10 }), 10_000 + 60_000);
  assert.equal(limit('monitor.start', {}), 2 ** 31 - 1, 'until stopped: the longest a timer can wait');
});

test('the bundle calls wait for the doctor, the compiles and the zip', () => {
  const fields = { plan: plan(1), outcomeId: 'run-1', origin: 'k.cu' };
  assert.equal(limit('bundle.preview', fields), 300_000);
  assert.equal(limit('bundle.export', { ...fields, path: '/b.zip' }), 300_000);
});

test('a bundle names what was seen with its run by the ids the host answered; the data itself is refused', () => {
  const fields = { plan: plan(1), outcomeId: 'run-1', origin: 'k.cu', path: '/b.zip' };
  const asked = channels['bundle.export'].request.safeParse({ ...fields, sanitizerId: 'sanitizer-1', samplesId: 'monitor:m-1', profileId: 'profile-1' });
  assert.ok(asked.success, asked.error?.message);
  assert.deepEqual(channels['bundle.preview'].request.parse({ plan: null, outcomeId: 'run-1', origin: '' }), {
    plan: null,
    outcomeId: 'run-1',
    origin: '',
    sanitizerId: null,
    samplesId: null,
    profileId: null,
    includeSources: true,
    redact: true,
    recordedHere: false,
  });
  for (const sent of [{ sanitizer: { verdict: 'clean' } }, { samples: { samples: [] } }, { profile: { version: 1 } }, { sanitizerId: { verdict: 'clean' } }])
    assert.equal(channels['bundle.export'].request.safeParse({ ...fields, ...sent }).success, false, JSON.stringify(sent));
});

test('a sanitizer report is answered with the id it is held under, and a kernel profile made with a run with its own', () => {
  const report = { tool: 'memcheck', verdict: 'clean' };
  const withoutId = channels['sanitize.open'].response.safeParse(report);
  assert.ok(!withoutId.success && withoutId.error.issues.some((i) => i.path.join('.') === 'reportId'), 'the id is required');
  const profiled = channels['profile.run'].response.safeParse({ outcome: {}, profile: null });
  assert.ok(!profiled.success && profiled.error.issues.some((i) => i.path.join('.') === 'profileId'));
});

/** A read-back's values as the run had them: NaN, which JSON wrote as null. */
const nanRevived = (key: string, value: unknown) => {
  if ((key === 'expected' || key === 'actual') && value === null) return NaN;
  if ((key === 'head' || key === 'tail' || key === 'values') && Array.isArray(value)) return value.map((v: unknown) => (v === null ? NaN : v));
  return value;
};

test('the run results recorded on a GPU (test/fixtures/runs, checks) are answers run.plan’s declaration allows', () => {
  let read = 0;
  for (const folder of ['runs', 'checks']) {
    const dir = join(ROOT, 'test/fixtures', folder);
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const outcome = JSON.parse(readFileSync(join(dir, name), 'utf8'), nanRevived) as object;
      // The host answers a run with the id it holds it under.
      const checked = channels['run.plan'].response.safeParse({ ...outcome, outcomeId: `run-${read}` });
      assert.ok(checked.success, `${folder}/${name}: ${checked.error?.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`)}`);
      read++;
    }
  }
  assert.ok(read >= 20, `${read} results`);
  const one = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/oob-off-by-one.json'), 'utf8')) as { result: { runnerPid: unknown } };
  assert.equal(channels['run.plan'].response.safeParse(one).success, false, 'an answer without the id it is held under is refused');
  one.result.runnerPid = 'a pid';
  assert.equal(channels['run.plan'].response.safeParse({ ...one, outcomeId: 'run-1' }).success, false, 'and one wrong field in the run result is refused');
});

test('an answer read from a saved file (run.open) is checked as its reader checks it, the field named', () => {
  const saved = {
    ...(JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/never-frees.json'), 'utf8')) as { diagnosis: Record<string, unknown> }),
    outcomeId: 'run-7',
  };
  assert.equal(channels['run.open'].response.safeParse(saved).success, true);
  const checked = channels['run.open'].response.safeParse({ ...saved, diagnosis: { ...saved.diagnosis, severity: 'fatal' } });
  assert.deepEqual(
    checked.error?.issues.map((i) => i.path.join('.')),
    ['diagnosis.severity'],
  );
  assert.equal(channels['run.open'].response.safeParse([saved]).success, false, 'a list is not a result');
});
