import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { parseProfile, type Profile } from '../../core/kernel-profile/profile';
import { compareProfiles } from '../../core/kernel-profile/profile-compare';
import { comparedWords, heatLevel, kernelFigures, lineHover, lineRows, orderedFindings, sameKernel } from '../../core/kernel-profile/profile-view';
import { profileBlockers } from '../../core/plan/run-readiness';

// The recordings of issue 28's uncoalesced-store sample on an H100: the naive transpose (line 7 stores 32 sectors per
// request where 4 would do), its shared-memory fix, and the same launch without permission to read the counters.
const fixture = (name: string): Profile => {
  const parsed = parseProfile(JSON.parse(readFileSync(join(process.cwd(), 'test/fixtures/ncu', name), 'utf8')));
  assert.ok(parsed.ok);
  return parsed.profile;
};
const broken = fixture('profile-broken.json');
const fixed = fixture('profile-fixed.json');
const noCounters = fixture('profile-no-counters.json');

test('findings: the uncoalesced store first, then what the figures mean', () => {
  const findings = orderedFindings(broken);
  assert.equal(findings[0]!.id, 'uncoalesced');
  assert.equal(findings[0]!.line, 7);
  assert.deepEqual(
    findings.map((f) => f.severity),
    [...findings.map((f) => f.severity)].sort((a, b) => (a === b ? 0 : a === 'problem' ? -1 : 1)),
  );
  assert.ok(!orderedFindings(fixed).some((f) => f.severity === 'problem'), 'the fix has nothing to fix');
});

test('the kernel figures, each beside what it is measured against', () => {
  const byName = Object.fromEntries(kernelFigures(broken).map((f) => [f.name, f]));
  assert.equal(byName['Kernel time']!.value, '78.0 µs');
  assert.equal(byName['Sectors per store request']!.value, '32.0');
  assert.equal(byName['Sectors per store request']!.beside, 'ideal 4.0 for 4-byte accesses');
  assert.equal(byName['Sectors per load request']!.value, '4.0');
  assert.equal(byName['Achieved occupancy']!.value, '72.1%');
  assert.equal(byName['Achieved occupancy']!.beside, 'theoretical 100.0%');
  assert.equal(byName['DRAM throughput']!.value, '8.3%');
  assert.match(byName['Effective bandwidth']!.value, /^430\.3 GB\/s$/);
  assert.match(byName['Effective bandwidth']!.beside!, /12\.8% of the device’s 3352\.3 GB\/s/);
  // Without counters: the time by CUDA events and the effective bandwidth, nothing made up.
  assert.deepEqual(
    kernelFigures(noCounters).map((f) => [f.name, f.beside]),
    [
      ['Kernel time', 'median by CUDA events'],
      ['Effective bandwidth', kernelFigures(noCounters)[1]!.beside],
    ],
  );
});

test('a row per line: its share of the samples, its shade, its accesses, and line 7 uncoalesced on its stores only', () => {
  const rows = lineRows(broken);
  assert.deepEqual(
    rows.map((r) => r.line),
    [4, 5, 6, 7, 8],
  );
  const seven = rows.find((r) => r.line === 7)!;
  assert.deepEqual(seven.uncoalesced, ['stores']);
  assert.equal(seven.stores!.perRequest, 32);
  assert.equal(seven.stores!.ideal, 4);
  assert.equal(seven.stalls[0]!.reason, 'long_sb');
  assert.ok(rows.filter((r) => r.line !== 7).every((r) => r.uncoalesced.length === 0));
  assert.ok(lineRows(fixed).every((r) => r.uncoalesced.length === 0));
  assert.deepEqual(lineRows(noCounters), []);
  assert.deepEqual([0, 0.01, 0.05, 0.2, 0.5].map(heatLevel), [0, 1, 2, 3, 4]);
});

test('the hover of line 7 says what its stores move against what would do, and where its warps wait, in words', () => {
  const hover = lineHover(lineRows(broken).find((r) => r.line === 7)!).join('\n');
  assert.match(hover, /^Line 7: 30\.5% of the kernel’s samples \(2,331\)\./);
  assert.match(hover, /Stores: 32\.0 sectors per request where 4\.0 would do for 4-byte accesses — uncoalesced, 8\.0× the ideal\./);
  assert.match(hover, /Loads: 4\.0 sectors per request \(the ideal for 4-byte accesses\)\./);
  assert.match(hover, /Warps wait here: 94\.6% waiting for global or local memory \(long scoreboard\)/);
});

test('compare: the store sectors from 32.0 to 4.0 is better, the time falls; same kernel by name', () => {
  const figures = compareProfiles(broken, fixed);
  const stores = comparedWords(figures.find((f) => f.name === 'Sectors per store request')!);
  assert.deepEqual(stores, { before: '32.0', after: '4.0', change: '−88%', verdict: 'better' });
  const time = comparedWords(figures.find((f) => f.name === 'Kernel time (ncu)')!);
  assert.deepEqual([time.before, time.after, time.verdict], ['78.0 µs', '15.0 µs', 'better']);
  const loads = comparedWords(figures.find((f) => f.name === 'Sectors per load request')!);
  assert.equal(loads.verdict, 'same');
  assert.equal(comparedWords(figures.find((f) => f.name === 'DRAM throughput')!).verdict, null);
  assert.ok(!sameKernel(broken, fixed), 'broken.cu and fixed.cu are two files');
  assert.ok(sameKernel(broken, noCounters));
});

test('why Profile is off: Run’s reasons, a plan with no launch, and no GPU in its own words', () => {
  const input = { compile: 'ok' as const, documentName: 'k.cu', planProblem: null, refusals: [], deviceLabel: null };
  assert.deepEqual(profileBlockers({ ...input, gpu: { present: true } }, 1), []);
  assert.deepEqual(
    profileBlockers({ ...input, gpu: { present: true } }, 0).map((b) => b.reason),
    ['The plan launches no kernel: there is nothing to profile.'],
  );
  const off = profileBlockers({ ...input, compile: 'failed', gpu: { present: false, reason: 'No NVIDIA driver found.' } }, 1).map((b) => b.reason);
  assert.equal(off[0], 'k.cu does not compile: fix the errors under Problems first.');
  assert.match(
    off[1]!,
    /^Profile runs the launch under Nsight Compute on an NVIDIA GPU, and this machine has none: No NVIDIA driver found\. A profile recorded/,
  );
  assert.equal(off.length, 2);
  assert.deepEqual(
    profileBlockers({ ...input, gpu: null }, 1).map((b) => b.reason),
    ['Looking for a CUDA device…'],
  );
});
