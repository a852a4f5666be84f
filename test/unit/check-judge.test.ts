import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { judgeCoalescing, judgeDeterminism, judgeOccupancy, judgeRun, judgeSanitizer, judgeValidator } from '../../core/check/judge';
import { parseProfile, type Profile } from '../../core/kernel-profile/profile';
import { DEFAULT_PROFILE_THRESHOLDS } from '../../core/kernel-profile/profile-findings';
import { launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import type { RunOutcome } from '../../core/runner/run-outcome';
import type { FindingGroup } from '../../core/sanitizer/findings';
import { emptySummary } from '../../core/sanitizer/parse-text';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { deviceLimits, type DeviceProfile } from '../../core/validate/device-limits';
import { checkPlan } from '../../core/validate/plan-check';
import { ROOT, SAMPLES } from '../helpers/cli';

// Each check's verdict from what its service returned, on what the H100 recorded: the failure gallery's runs
// (test/fixtures/runs), the uncoalesced sample's profiles (test/fixtures/ncu), and the validator on the samples' plans.
const recorded = (name: string) => JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs', `${name}.json`), 'utf8')) as RunOutcome;
const profile = (name: string): Profile => {
  const parsed = parseProfile(JSON.parse(readFileSync(join(ROOT, 'test/fixtures/ncu', `${name}.json`), 'utf8')));
  assert.ok(parsed.ok);
  return parsed.profile;
};
const h100 = deviceLimits((JSON.parse(readFileSync(join(ROOT, 'profiles/nvidia-h100.json'), 'utf8')) as DeviceProfile).device);
const samplePlan = (path: string): LaunchPlan => {
  const raw = JSON.parse(readFileSync(join(SAMPLES, path), 'utf8')) as { kernels: { source?: string; sourceFile?: string }[] };
  for (const k of raw.kernels) {
    k.source = '';
    delete k.sourceFile;
  }
  return launchPlanSchema.parse(raw);
};

test('run: what ran clean passes; a fault, a wrong result, a leak, a compile error or a hang fails with its diagnosis; no driver could not run', () => {
  const clean = judgeRun(recorded('divergent-barrier'));
  assert.equal(clean.status, 'passed');
  assert.match(clean.summary, /^The run completed/);
  for (const [name, headline] of [
    ['oob-off-by-one', /^scale wrote past the end of buffer x at step 3$/],
    ['never-frees', /^The plan never frees a, b, c \(12 MiB\)$/],
    ['shared-memory-race', /^Wrong result in out/],
    ['static-shared-too-large', /^broken\.cu does not compile$/],
    ['infinite-loop', /watchdog stopped it$/],
    ['allocation-too-large', /^Out of device memory at step 1/],
  ] as const) {
    const r = judgeRun(recorded(name));
    assert.equal(r.status, 'failed', name);
    assert.match(r.summary, headline, name);
  }
  const noDriver = {
    ...recorded('divergent-barrier'),
    status: 'unavailable',
    result: null,
    problem: { title: 'No NVIDIA driver found', detail: 'd', remedy: 'r' },
  };
  assert.deepEqual([judgeRun(noDriver as RunOutcome).status, judgeRun(noDriver as RunOutcome).summary], ['could-not-run', 'No NVIDIA driver found']);
});

test('determinism: compared and identical passes, differing fails with the first element; not compared could not run, with why', () => {
  assert.equal(judgeDeterminism(recorded('divergent-barrier')).status, 'passed');
  const race = judgeDeterminism(recorded('shared-memory-race'));
  assert.equal(race.status, 'failed');
  assert.match(race.summary, /^Results differ between two identical runs: out came back different in [\d,]+ of 1,048,576 elements; the first, \[\d+\], was /);
  const oom = judgeDeterminism(recorded('allocation-too-large'));
  assert.equal(oom.status, 'could-not-run');
  assert.match(oom.summary, /^Not compared with a second run: the plan's buffers total 256 GiB/);
  assert.match(judgeDeterminism(recorded('device-assert')).summary, /the run failed before the check/);
  assert.match(judgeDeterminism(recorded('static-shared-too-large')).summary, /^The plan never ran: broken\.cu does not compile\.$/);
  assert.match(judgeDeterminism(recorded('infinite-loop')).summary, /^The run did not finish: .*watchdog/);
});

const group = (over: Partial<FindingGroup> = {}): FindingGroup =>
  ({
    key: 'k',
    tool: 'memcheck',
    kind: 'memory-access',
    severity: 'error',
    text: 'Invalid __global__ write of size 4 bytes',
    where: { func: 'scale', path: '/s/broken.cu', line: 5, pc: null },
    count: 1,
    threads: null,
    blocks: null,
    example: {
      tool: 'memcheck',
      kind: 'memory-access',
      recordKind: 'Precise',
      severity: 'error',
      text: 'Invalid __global__ write of size 4 bytes',
      where: { func: 'scale', path: '/s/broken.cu', line: 5, pc: null },
      thread: null,
      block: null,
      access: { direction: 'write', space: '__global__', size: 4, address: '0x7f0000001000', error: 'is out of bounds' },
      nearest: null,
      leak: null,
      api: null,
      race: null,
      detail: null,
      hostStackAt: null,
      hostStack: [],
    },
    userFrame: null,
    leakedBytes: 0,
    hazards: 0,
    addressNamed: '4 bytes past the end of `x` (allocated at step 1)',
    ...over,
  }) as FindingGroup;

const sanitizeReport = (over: Partial<SanitizeReport>): SanitizeReport => ({
  tool: 'memcheck',
  command: ['gpu-workbench', 'sanitize'],
  cwd: '/',
  sanitizer: { path: '/usr/local/cuda/bin/compute-sanitizer', version: '2025.3' },
  verdict: 'clean',
  headline: '✓ memcheck found nothing.',
  details: [],
  exitCode: 0,
  signal: null,
  durationMs: 1000,
  findings: 0,
  findingsFrom: 'xml',
  groups: [],
  summary: { ...emptySummary(), errorsReported: 0 },
  xmlFiles: [{ name: 'report-1.xml', bytes: 100 }],
  programOutput: '',
  toolOutput: '',
  outputDroppedBytes: 0,
  problems: [],
  ...over,
});

test('a tool: findings fail it with the line and the buffer; clean over a whole run passes; a run cut short or a tool that failed could not say', () => {
  const ok = recorded('divergent-barrier');
  const found = judgeSanitizer(
    'memcheck',
    sanitizeReport({ verdict: 'found', headline: 'memcheck found 1 finding in 1 place.', findings: 1, groups: [group()] }),
    recorded('oob-off-by-one'),
  );
  assert.equal(found.status, 'failed');
  assert.equal(
    found.summary,
    'memcheck found 1 finding in 1 place. Invalid write of 4 bytes is out of bounds in scale at broken.cu:5 — 1 thread. The address: 4 bytes past the end of `x` (allocated at step 1).',
  );
  assert.deepEqual(
    [judgeSanitizer('memcheck', sanitizeReport({}), ok).status, judgeSanitizer('memcheck', sanitizeReport({}), ok).summary],
    ['passed', 'memcheck found nothing.'],
  );
  const cut = judgeSanitizer('racecheck', sanitizeReport({ tool: 'racecheck' }), recorded('device-assert'));
  assert.equal(cut.status, 'could-not-run');
  assert.match(cut.summary, /^racecheck found nothing in what ran, but the run stopped early: A device-side assert failed/);
  const never = judgeSanitizer(
    'initcheck',
    sanitizeReport({ verdict: 'tool-failed', headline: 'initcheck did not finish its check.' }),
    recorded('static-shared-too-large'),
  );
  assert.equal(never.status, 'could-not-run');
  assert.equal(never.summary, 'The plan did not run under initcheck: broken.cu does not compile.');
  const timedOut = judgeSanitizer('synccheck', sanitizeReport({ verdict: 'timed-out', headline: 'synccheck ran past 300 s and was stopped.' }), ok);
  assert.deepEqual([timedOut.status, timedOut.summary], ['could-not-run', 'synccheck ran past 300 s and was stopped.']);
});

test('coalescing: the naive transpose fails on its store line (32 sectors where 4 would do); the tiled one passes; no counters could not run', () => {
  const broken = judgeCoalescing([{ entry: 'transpose', profile: profile('profile-broken') }], DEFAULT_PROFILE_THRESHOLDS);
  assert.equal(broken.status, 'failed');
  assert.match(
    broken.summary,
    /^transpose \(broken\.cu\) line \d+: each store request moves 32\.0 sectors where 4\.0 would do for 4-byte accesses \(8\.0× the ideal\)\.$/,
  );
  assert.match(broken.details.join('\n'), /tile in shared memory/);
  // A threshold above what it got passes it: the threshold is the config's.
  assert.equal(
    judgeCoalescing([{ entry: 'transpose', profile: profile('profile-broken') }], { ...DEFAULT_PROFILE_THRESHOLDS, uncoalescedRatio: 9 }).status,
    'passed',
  );
  const fixed = judgeCoalescing([{ entry: 'transpose', profile: profile('profile-fixed') }], DEFAULT_PROFILE_THRESHOLDS);
  assert.equal(fixed.status, 'passed');
  assert.match(fixed.summary, /^transpose: no line moves 2× the sectors its accesses need \(loads 4\.0, stores 4\.0 sectors per request\)\.$/);
  const none = judgeCoalescing([{ entry: 'transpose', profile: profile('profile-no-counters') }], DEFAULT_PROFILE_THRESHOLDS);
  assert.equal(none.status, 'could-not-run');
  assert.match(none.summary, /ERR_NVGPUCTRPERM/);
  assert.match(none.details.join(' '), /NVreg_RestrictProfilingToAdminUsers=0/);
  // Two kernels: one that fails fails the check; one that could not be profiled leaves the rest unconfirmed.
  assert.equal(
    judgeCoalescing(
      [
        { entry: 'transpose', profile: profile('profile-fixed') },
        { entry: 'transpose', profile: profile('profile-broken') },
      ],
      DEFAULT_PROFILE_THRESHOLDS,
    ).status,
    'failed',
  );
  const partly = judgeCoalescing(
    [
      { entry: 'transpose', profile: profile('profile-fixed') },
      { entry: 'other', failed: 'The plan did not run to the end under Nsight Compute.' },
    ],
    DEFAULT_PROFILE_THRESHOLDS,
  );
  assert.deepEqual([partly.status, partly.summary], ['could-not-run', 'The plan did not run to the end under Nsight Compute.']);
  assert.equal(judgeCoalescing([], DEFAULT_PROFILE_THRESHOLDS).status, 'could-not-run');
});

test('occupancy: passes with no minimum set (and says so), fails below the minimum the config sets', () => {
  const fixed = profile('profile-fixed');
  const achieved = fixed.counters!.occupancy.achievedPct;
  const noMinimum = judgeOccupancy([{ entry: 'transpose', profile: fixed }], DEFAULT_PROFILE_THRESHOLDS);
  assert.equal(noMinimum.status, 'passed');
  assert.ok(noMinimum.summary.startsWith(`transpose: Achieved occupancy ${achieved.toFixed(1)}% against theoretical 100.0%`), noMinimum.summary);
  assert.match(noMinimum.summary, /\(no minimum is set: minAchievedOccupancyPct in gpu-workbench-check\.json fails a kernel below it\)\.$/);
  const minimum = Math.ceil(achieved) + 1;
  const below = judgeOccupancy([{ entry: 'transpose', profile: fixed }], { uncoalescedRatio: 2, minAchievedOccupancyPct: minimum });
  assert.equal(below.status, 'failed');
  assert.ok(below.summary.endsWith(`below the ${minimum.toFixed(1)}% the check asks for.`), below.summary);
  assert.equal(
    judgeOccupancy([{ entry: 'transpose', profile: fixed }], { uncoalescedRatio: 2, minAchievedOccupancyPct: Math.floor(achieved) }).status,
    'passed',
  );
  assert.equal(judgeOccupancy([{ entry: 'transpose', profile: profile('profile-no-counters') }], DEFAULT_PROFILE_THRESHOLDS).status, 'could-not-run');
});

test('validator: a plan that would fail names its first refusal; one that fits passes; unknown resources could not be checked whole', () => {
  const memory = { freeBytes: null, hostBytes: 64 * 2 ** 30 };
  const oom = judgeValidator({ check: checkPlan(samplePlan('allocation-too-large/plan.json'), h100, memory, () => null), deviceName: h100.name, unknown: [] });
  assert.equal(oom.status, 'failed');
  assert.match(oom.summary, /^The plan would fail on NVIDIA H100 80GB HBM3: Buffer `x` asks for 256 GiB; .* Fix: Make `x` smaller/);
  const block = judgeValidator({ check: checkPlan(samplePlan('block-too-large/plan.json'), h100, memory, () => null), deviceName: h100.name, unknown: [] });
  assert.match(block.summary, /Step 6 \(launch addMatrices<<<\(8,16\), \(64,32\)>>>\): \(64,32\) is 2048 threads per block/);
  const fits = judgeValidator({
    check: checkPlan(samplePlan('allocation-too-large/plan.fixed.json'), h100, memory, () => null),
    deviceName: h100.name,
    unknown: [],
  });
  assert.equal(fits.status, 'passed');
  assert.match(fits.summary, /^Every launch \(1\) and every buffer fits NVIDIA H100 80GB HBM3/);
  const unknown = judgeValidator({
    check: checkPlan(samplePlan('allocation-too-large/plan.fixed.json'), h100, memory, () => null),
    deviceName: h100.name,
    unknown: ['kernel.cu does not compile for sm_90, so fill’s resources are unknown.'],
  });
  assert.deepEqual(
    [unknown.status, unknown.summary],
    ['could-not-run', "Only the device's limits could be checked: kernel.cu does not compile for sm_90, so fill’s resources are unknown."],
  );
});
