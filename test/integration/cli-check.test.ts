import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { SaxesParser } from 'saxes';

import { CHECK_NAMES, type CheckReport } from '../../core/check/check-model';
import { findNvcc } from '../../main/compile/nvcc';
import { discoverLibraries } from '../../main/services/discovery-service';
import { parseJson, ROOT, runCli, SAMPLES } from '../helpers/cli';

// `gpu-workbench check` on this machine, which has no GPU: every check that needs one could not run, each with its
// reason, and nothing is called passed ("Silence is a verdict"). Exit 2 when nothing could run; with a saved device
// profile the validator runs, and the verdict is a failure (exit 1) or incomplete (exit 3), never a pass.
const h100 = join(ROOT, 'profiles/nvidia-h100.json');
const hasCompiler = findNvcc().then((n) => n.found);
const skip = { skip: discoverLibraries().cuda.loaded && 'this machine has a driver' };

test('check --sample: every check could not run, with its reason; no tick; exit 2, a verdict of its own', skip, async () => {
  const r = await runCli(['check', '--sample', 'oob-off-by-one']);
  assert.equal(r.code, 2, r.stdout + r.stderr);
  const lines = r.stdout.split('\n');
  for (const name of CHECK_NAMES) {
    const line = lines.find((l) => l.trimStart().startsWith(`– ${name} `));
    assert.ok(line, `${name}: ${r.stdout}`);
    assert.match(line, /could not run: No NVIDIA driver found: /, line);
  }
  assert.match(r.stdout, /– validator +could not run: No NVIDIA driver found: there is no device to check the plan against \(pass --profile/);
  assert.match(r.stdout, /– memcheck +could not run: No NVIDIA driver found: compute-sanitizer runs the plan on a GPU\./);
  assert.match(r.stdout, /– coalescing +could not run: No NVIDIA driver found: Nsight Compute profiles the plan on a GPU\./);
  assert.match(r.stdout, /^oob-off-by-one \(broken\) — unconfirmed/m);
  assert.match(r.stdout, /Expected to fail memcheck, which could not run/);
  assert.match(r.stdout, /Nothing could be checked: no check could run on 1 plan \(0 passed, 0 failed, 9 could not run\)\. This is not a pass\.$/m);
  assert.doesNotMatch(r.stdout, /✓/);
  assert.match(r.stderr, /\[1\/1\] oob-off-by-one \(broken\) — unconfirmed/);
});

test('check --json and --junit: the whole report as data, and every testcase skipped with the reason', skip, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gwb-check-'));
  const junit = join(dir, 'report.xml');
  const r = await runCli(['check', '--sample', 'shared-memory-race', '--fixed', '--json', '--junit', junit]);
  assert.equal(r.code, 2, r.stderr);
  const report = parseJson<CheckReport>(r);
  assert.equal(report.kind, 'gpu-workbench-check');
  assert.equal(report.verdict, 'nothing-ran');
  assert.equal(report.device, null);
  assert.deepEqual(report.counts, { passed: 0, failed: 0, 'could-not-run': 9, off: 0 });
  const [plan] = report.plans;
  assert.equal(plan!.label, 'shared-memory-race (fixed)');
  assert.deepEqual(plan!.origin, { kind: 'sample', sample: 'shared-memory-race', variant: 'fixed' });
  assert.deepEqual(
    plan!.checks.map((c) => c.check),
    [...CHECK_NAMES],
  );
  for (const c of plan!.checks) {
    assert.equal(c.status, 'could-not-run');
    assert.match(c.summary, /^No NVIDIA driver found: /);
    assert.equal(c.ms, null);
  }
  assert.equal(plan!.expectation?.met, 'unconfirmed');
  assert.match(r.stderr, /JUnit report written to /);

  const xml = readFileSync(junit, 'utf8');
  const skipped: string[] = [];
  const cases: string[] = [];
  const parser = new SaxesParser();
  parser.on('opentag', (tag) => {
    if (tag.name === 'testcase') cases.push(String(tag.attributes['name']));
    if (tag.name === 'skipped') skipped.push(String(tag.attributes['message']));
    assert.notEqual(tag.name, 'failure');
  });
  parser.write(xml).close();
  assert.equal(cases.length, 9);
  assert.match(cases[3]!, /^memcheck: /);
  assert.equal(skipped.length, 9);
  for (const message of skipped) assert.match(message, /^could not run: No NVIDIA driver found: /);
  assert.match(xml, /<testsuites name="gpu-workbench check" tests="9" failures="0" errors="0" skipped="9" /);
});

test(
  'check a folder of plans with its gpu-workbench-check.json: the checks it leaves out are off; with a saved profile the validator runs, and incomplete is exit 3',
  skip,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gwb-check-'));
    copyFileSync(join(SAMPLES, 'vector-add/plan.json'), join(dir, 'vector-add.json'));
    copyFileSync(join(SAMPLES, 'vector-add/vector_add.cu'), join(dir, 'vector_add.cu'));
    writeFileSync(join(dir, 'notes.json'), '{"not": "a plan"}');
    writeFileSync(join(dir, 'gpu-workbench-check.json'), JSON.stringify({ checks: ['validator', 'run', 'memcheck'], minAchievedOccupancyPct: 30 }));
    const r = await runCli(['check', dir, '--profile', h100, '--json']);
    const report = parseJson<CheckReport>(r);
    assert.equal(report.plans.length, 1, 'notes.json is not a plan');
    const [plan] = report.plans;
    assert.equal(plan!.configPath, join(dir, 'gpu-workbench-check.json'));
    const status = Object.fromEntries(plan!.checks.map((c) => [c.check, c.status]));
    for (const off of ['determinism', 'racecheck', 'initcheck', 'synccheck', 'coalescing', 'occupancy']) assert.equal(status[off], 'off', off);
    assert.deepEqual([status['run'], status['memcheck']], ['could-not-run', 'could-not-run']);
    assert.match(plan!.checks.find((c) => c.check === 'racecheck')!.summary, /leaves racecheck out of its checks/);
    if (await hasCompiler) {
      assert.equal(status['validator'], 'passed');
      assert.match(plan!.checks[0]!.summary, /^Every launch \(1\) and every buffer fits NVIDIA H100 80GB HBM3/);
      assert.equal(report.verdict, 'incomplete');
      assert.equal(r.code, 3);
      assert.match(
        report.headline,
        /^Incomplete: nothing failed, but 2 checks could not run \(1 passed, 0 failed, 2 could not run, 6 off\)\. This is not a pass\.$/,
      );
    } else assert.ok(r.code === 2 || r.code === 3, String(r.code));
  },
);

test('check with a saved profile: a launch the validator refuses fails the check (exit 1), whatever could not run beside it', skip, async () => {
  const r = await runCli(['check', join(SAMPLES, 'block-too-large/plan.json'), '--profile', h100]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(
    r.stdout,
    /✗ validator +The plan would fail on NVIDIA H100 80GB HBM3: Step 6 \(launch addMatrices<<<\(8,16\), \(64,32\)>>>\): \(64,32\) is 2048 threads per block/,
  );
  assert.match(r.stdout, /^samples\/block-too-large\/plan\.json — failed/m);
  assert.match(r.stdout, /✗ 1 of 1 plan failed a check \(0 passed, 1 failed, 8 could not run\)\.$/m);
});

test('check refuses what it cannot read, in words: a config with a typo, nothing to check, a folder with no plan', skip, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gwb-check-'));
  const config = join(dir, 'gpu-workbench-check.json');
  writeFileSync(config, JSON.stringify({ uncoalescedRatio: 0.5, checks: ['memcheck', 'helgrind'], timeoutsMs: { sanitizer: 1000 } }));
  const bad = await runCli(['check', '--sample', 'trap', '--config', config]);
  assert.equal(bad.code, 64, bad.stderr);
  assert.match(bad.stderr, /✗ The check config is not valid:/);
  assert.match(bad.stderr, /checks\.1: must be one of validator, run, determinism/);
  assert.match(bad.stderr, /uncoalescedRatio: /);
  assert.match(bad.stderr, /timeoutsMs: "sanitizer" is not a setting/);
  // A config beside the plans is read as well as one named.
  copyFileSync(join(SAMPLES, 'vector-add/plan.json'), join(dir, 'plan.json'));
  copyFileSync(join(SAMPLES, 'vector-add/vector_add.cu'), join(dir, 'vector_add.cu'));
  const beside = await runCli(['check', join(dir, 'plan.json')]);
  assert.equal(beside.code, 64);
  assert.match(beside.stderr, /gpu-workbench-check\.json, uncoalescedRatio: /);

  const nothing = await runCli(['check']);
  assert.equal(nothing.code, 64);
  assert.match(nothing.stderr, /Give what to check: plan files, a folder of plans or of gallery samples, --sample NAME, --gallery/);
  const empty = mkdtempSync(join(tmpdir(), 'gwb-check-'));
  const none = await runCli(['check', empty]);
  assert.equal(none.code, 64);
  assert.match(none.stderr, /holds no launch plan \(a \.json with kernels and steps\) and no gallery sample/);
  const unknown = await runCli(['check', '--sample', 'no-such-sample']);
  assert.equal(unknown.code, 64);
  assert.match(unknown.stderr, /There is no sample named "no-such-sample"/);
});

test('check --gallery (no GPU): both variants of every sample, each unconfirmed, and the whole not a pass', skip, async () => {
  const r = await runCli(['check', '--gallery', '--json']);
  assert.equal(r.code, 2, r.stderr);
  const report = parseJson<CheckReport>(r);
  assert.ok(report.plans.length >= 36, String(report.plans.length));
  assert.equal(report.plans.filter((p) => p.origin.kind === 'sample' && p.origin.variant === 'broken').length, report.plans.length / 2);
  const uncoalesced = report.plans.find((p) => p.label === 'uncoalesced-access (broken)')!;
  assert.deepEqual([uncoalesced.expectation?.check, uncoalesced.expectation?.met], ['coalescing', 'unconfirmed']);
  assert.ok(report.plans.every((p) => p.verdict === 'nothing-ran'));
});
